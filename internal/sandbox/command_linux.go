package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// confine makes cmd the helper as the init of the command's namespaces,
// which confines itself and then starts the command; alive and report are
// the pipes build says of. A command that runs as one of the user's
// subordinate ids is sc's (subCommand).
func (c Command) confine(cmd *exec.Cmd) (alive, report *os.File, sc *subCommand, err error) {
	p, err := c.policy()
	if err != nil {
		return nil, nil, nil, err
	}
	uid, gid := p.ids()
	sub := p.subordinate()
	if !sub { // a subordinate id's init gives them to it (--own-write)
		if err := own(p.Write, uid, gid); err != nil {
			return nil, nil, nil, err
		}
	}
	spec := initSpec{Policy: p, Become: -1, Survey: c.Confine.survey}
	if os.Geteuid() == 0 || sub {
		spec.Become, spec.OwnWrite = uid, sub
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	n := 3
	if sub {
		n = 4
	}
	// fd 3 closes when proctor dies, the init reports how the command
	// started on fd 4, reads its initSpec on fd 5, and learns on fd 6
	// that proctor mapped its ids.
	ends, err := pipes(n)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	cmd.ExtraFiles = []*os.File{ends[0][0], ends[1][1], ends[2][0]}
	args := []string{c.Confine.Helper, "sandbox-exec", "--init", "--parent-fd", "3", "--report-fd", "4", "--spec-fd", "5"}
	if sub {
		cmd.ExtraFiles = append(cmd.ExtraFiles, ends[3][0])
		args = append(args, "--mapped-fd", "6")
		sc = &subCommand{s: userSubordinate(), uid: uid, mw: ends[3][1], helper: c.Confine.Helper, dirs: p.written()}
	}
	// A pipe holds 64 KiB: the spec is written as the init reads it (the
	// writer ends with an error when the init died first).
	go func(w *os.File) {
		w.Write(raw)
		w.Close()
	}(ends[2][1])
	cmd.Path, cmd.Err = c.Confine.Helper, nil // the init finds the command in its view
	cmd.Args = append(append(args, "--"), c.Argv...)
	namespaces(cmd.SysProcAttr, uid, gid, sub)
	return ends[0][1], ends[1][0], sc, nil
}

// policy is the command's policy as it starts: with its program's folders
// (ReadProgram), what of /etc every user may read, and what Start adds
// (its id, its caches, their upper folders made).
func (c Command) policy() (Policy, error) {
	p := c.Confine.Policy
	if c.Confine.ReadProgram {
		p.Read = append(append([]string{}, p.Read...), ProgramDirs(c.Argv[0])...)
	}
	if p.Etc.Dirs == nil && p.Etc.Files == nil {
		p.Etc = c.Confine.Host.Etc()
	}
	if c.Confine.Start != nil {
		p.Caches = slices.Clip(p.Caches) // what Start adds is the command's alone
		if err := c.Confine.Start(&p); err != nil {
			return p, fmt.Errorf("start %s: %w", c.Argv[0], err)
		}
	}
	for _, c := range p.Caches {
		if err := c.check(); err != nil {
			return p, fmt.Errorf("start %s: %w", c.At, err)
		}
		if err := UpperFolders(c.Upper, p.ID); err != nil {
			return p, err
		}
	}
	return p, nil
}

// pipes makes n pipes, each {read end, write end}; none when one fails.
func pipes(n int) ([][2]*os.File, error) {
	var out [][2]*os.File
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, e := range out {
				e[0].Close()
				e[1].Close()
			}
			return nil, err
		}
		out = append(out, [2]*os.File{r, w})
	}
	return out, nil
}

// namespaces gives the init its namespaces, their id maps and the
// capabilities it starts with. The namespace maps the command's id (uid,
// gid) to itself; as root also LayerID, the owner of the caches' layers,
// which the overlay copies up. A subordinate id's maps are written by
// newuidmap and newgidmap once the init has started and waits
// (subCommand.mapped): the init keeps its capabilities as ambient ones
// through its execve, and becomes the command's id as root does.
func namespaces(a *syscall.SysProcAttr, uid, gid int, sub bool) {
	a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if !sub {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	if os.Geteuid() == 0 && uid != LayerID {
		a.UidMappings = append(a.UidMappings, syscall.SysProcIDMap{ContainerID: LayerID, HostID: LayerID, Size: 1})
		a.GidMappings = append(a.GidMappings, syscall.SysProcIDMap{ContainerID: LayerID, HostID: LayerID, Size: 1})
	}
	// Enough to build its view, bring up its loopback, name its host and,
	// as root or a subordinate id, become the command's id; the init drops
	// them all before the command starts. A cache's overlay works in its
	// upper folder with the creds of the init that mounted it, which must
	// pass the folders it makes there with no mode (its work folder): the
	// two DAC capabilities hold only for files of the ids the namespace
	// maps, the command's own. The overlay checks the command's own creds
	// first, so they give the command nothing. CAP_CHOWN lets the overlay
	// copy a layer's file up with its owner (as root, LayerID), and a
	// subordinate id's init give the command its folders.
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_CHOWN}
	if os.Geteuid() == 0 {
		// root's supplementary groups are dropped in the namespace (setgroups
		// is allowed there only when root writes the map).
		a.GidMappingsEnableSetgroups = true
	}
	if os.Geteuid() == 0 || sub {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SETUID, unix.CAP_SETGID)
	}
}

// subCommand is a command that runs as one of the user's subordinate ids:
// its init waits until mapped has mapped the namespace's ids, and once it
// has ended giveBack makes its folders the user's again — the user reads
// what it wrote (its diff, its bounds) as root would, and its next
// command's init gives them to it again.
type subCommand struct {
	s      subordinate
	uid    int
	mw     *os.File // the init waits on its other end
	helper string
	dirs   []string
}

func (sc *subCommand) mapped(ctx context.Context, pid int) error {
	defer sc.mw.Close()
	if !sc.s.ranges.has(sc.uid) {
		return fmt.Errorf("map the run's id %d: not a subordinate id of this user's: %s", sc.uid, sc.s.why)
	}
	if err := sc.s.mapIDs(ctx, pid, idRanges{{sc.uid, 1}}); err != nil {
		return err
	}
	_, err := sc.mw.Write([]byte{1})
	return err
}

func (sc *subCommand) giveBack(ctx context.Context) error {
	return sc.s.settleIn(ctx, sc.helper, idRanges{{sc.uid, 1}}, false, sc.dirs...)
}

// close lets the init go when the command never started.
func (sc *subCommand) close() { sc.mw.Close() }
