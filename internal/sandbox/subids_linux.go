package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/proc"
	"golang.org/x/sys/unix"
)

// A user who is not root confines each run's commands as an id of the
// user's own subordinate ids — those /etc/subuid and /etc/subgid both
// give the user, by name or number — when the host has shadow's newuidmap
// and newgidmap, the setuid helpers that map them into a user namespace
// (what rootless Podman and Docker use). The command's namespace maps the
// user's own id (its init) and the run's id, each to itself, so that ids
// read the same inside and out. A host without them runs the user's runs
// as the user, and the runs' walls say so and why.

// userSubordinate finds this user's subordinate ids and the helpers.
func userSubordinate() subordinate {
	uid := os.Getuid()
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	read := func(f string) string { raw, _ := os.ReadFile(f); return string(raw) }
	common := subordinateOf(read("/etc/subuid"), name, uid).intersect(subordinateOf(read("/etc/subgid"), name, uid))
	common = common.without(0, uid, os.Getgid())
	if len(common) == 0 {
		return subordinate{why: fmt.Sprintf("user %s has no subordinate ids in both /etc/subuid and /etc/subgid (an administrator gives some: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s)", name, name)}
	}
	s := subordinate{ranges: common}
	for _, h := range []struct {
		name string
		at   *string
	}{{"newuidmap", &s.newuidmap}, {"newgidmap", &s.newgidmap}} {
		p, err := exec.LookPath(h.name)
		if err != nil {
			for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin"} {
				if _, serr := os.Stat(filepath.Join(d, h.name)); serr == nil {
					p, err = filepath.Join(d, h.name), nil
					break
				}
			}
		}
		if err != nil {
			return subordinate{why: fmt.Sprintf("no %s to map user %s's subordinate ids (Debian and Ubuntu: apt-get install uidmap; Fedora and RHEL: dnf install shadow-utils)", h.name, name)}
		}
		*h.at = p
	}
	return s
}

// mapIDs maps ranges (each id to itself) and the user's own ids into the
// user namespace of process pid, which waits for it.
func (s subordinate) mapIDs(ctx context.Context, pid int, ranges idRanges) error {
	for _, m := range []struct {
		helper string
		own    int
	}{{s.newuidmap, os.Getuid()}, {s.newgidmap, os.Getgid()}} {
		args := []string{strconv.Itoa(pid), strconv.Itoa(m.own), strconv.Itoa(m.own), "1"}
		for _, r := range ranges {
			args = append(args, strconv.Itoa(r[0]), strconv.Itoa(r[0]), strconv.Itoa(r[1]))
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := proc.Command(ctx, m.helper, args...).CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("map the run's ids with %s: %w: %s", m.helper, err, bytes.TrimSpace(out))
		}
	}
	return nil
}

// waitMapped waits until proctor has mapped the ids of the namespace
// (one byte on fd); a pipe closed first means it could not.
func waitMapped(fd int) error {
	f := os.NewFile(uintptr(fd), "mapped")
	defer f.Close()
	var b [1]byte
	if n, _ := f.Read(b[:]); n != 1 {
		return errors.New("proctor did not map the namespace's ids")
	}
	return nil
}

// settleIn runs settle (as Reclaim and ShareLayer) in a user namespace
// that maps the user's own ids and ids (a run's, or every subordinate id
// of the user's when which run made the files is not known): the files a
// run's id made are the user's again (open to all with open). The helper
// is the proctor binary.
func (s subordinate) settleIn(ctx context.Context, helper string, ids idRanges, open bool, dirs ...string) error {
	args := []string{"sandbox-exec", "--settle", "--mapped-fd", "3"}
	if open {
		args = append(args, "--open")
	}
	cmd := proc.Command(ctx, helper, append(append(args, "--"), dirs...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("give back %v: %w", dirs, err)
	}
	defer w.Close()
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER
	cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_CHOWN, unix.CAP_FOWNER, unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return fmt.Errorf("give back %v: start a namespace of the user's ids: %w", dirs, err)
	}
	if err := s.mapIDs(ctx, cmd.Process.Pid, ids); err != nil {
		w.Close()
		cmd.Wait()
		return fmt.Errorf("give back %v: %w", dirs, err)
	}
	w.Write([]byte{1})
	w.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("give back %v: %w: %s", dirs, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}

// settleMain is `sandbox-exec --settle`: in the namespace settleIn made,
// the files of the folders are the user's (inside, as outside, the user's
// own id) and keep no setuid or setgid bit.
func settleMain(in invocation) (int, error) {
	if in.mapped < 0 {
		return 0, errors.New("--settle needs --mapped-fd")
	}
	if err := waitMapped(in.mapped); err != nil {
		return 0, err
	}
	if err := settle(os.Getuid(), os.Getgid(), in.open, in.argv); err != nil {
		return 0, err
	}
	return 0, nil
}

// RemoveAll removes path and everything in it. What a run's id made there
// (a user's subordinate id, left by a proctor that was killed) is first
// given back to the user, from inside a namespace of the user's ids;
// helper is the proctor binary.
func RemoveAll(ctx context.Context, helper, path string) error {
	err := osfile.RemoveAll(path)
	if err == nil || os.Geteuid() == 0 || helper == "" {
		return err
	}
	s := userSubordinate()
	if len(s.ranges) == 0 {
		return err
	}
	if serr := s.settleIn(ctx, helper, s.ranges, false, path); serr != nil {
		return fmt.Errorf("remove %s: %w (and %v)", path, err, serr)
	}
	return osfile.RemoveAll(path)
}
