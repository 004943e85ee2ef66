package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr puts a command in a process group of its own, killed when
// proctor dies (Pdeathsig): nothing of it outlives proctor.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// confine makes cmd the helper as the init of the command's namespaces,
// which confines itself and then starts the command; alive and report are
// the pipes build says of. A command that runs as one of the user's
// subordinate ids is sc's (subCommand).
func (c Command) confine(cmd *exec.Cmd) (alive, report *os.File, sc *subCommand, err error) {
	p := c.Confine.Policy
	if c.Confine.ReadProgram {
		p.Read = append(append([]string{}, p.Read...), ProgramDirs(c.Argv[0])...)
	}
	if p.Etc.Dirs == nil && p.Etc.Files == nil {
		p.Etc = c.Confine.Host.Etc()
	}
	if c.Confine.Start != nil {
		caches, err := c.Confine.Start()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
		}
		p.Caches = append(append([]Cache{}, p.Caches...), caches...)
	}
	for _, c := range p.Caches {
		if err := c.check(); err != nil {
			return nil, nil, nil, fmt.Errorf("start %s: %w", c.At, err)
		}
		if err := UpperFolders(c.Upper, p.ID); err != nil {
			return nil, nil, nil, err
		}
	}
	uid, gid := p.ids()
	sub := p.subordinate()
	if !sub { // a subordinate id's init gives them to it (--own-write)
		if err := own(p.Write, uid, gid); err != nil {
			return nil, nil, nil, err
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	rr, rw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	cmd.ExtraFiles = []*os.File{r, rw} // fd 3 and 4
	args := append([]string{c.Confine.Helper, "sandbox-exec", "--init", "--parent-fd", "3", "--report-fd", "4"}, p.flags()...)
	if c.Confine.survey {
		args = append(args, "--survey")
	}
	var mr, mw *os.File
	switch {
	case os.Geteuid() == 0:
		args = append(args, "--become", strconv.Itoa(uid))
	case sub:
		if mr, mw, err = os.Pipe(); err != nil {
			r.Close()
			w.Close()
			rr.Close()
			rw.Close()
			return nil, nil, nil, fmt.Errorf("start %s: %w", c.Argv[0], err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, mr) // fd 5
		args = append(args, "--become", strconv.Itoa(uid), "--own-write", "--mapped-fd", "5")
	}
	cmd.Path, cmd.Err = c.Confine.Helper, nil // the init finds the command in its view
	cmd.Args = append(append(args, "--"), c.Argv...)
	a := cmd.SysProcAttr
	a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if sub {
		// newuidmap and newgidmap map the user's own ids (the init's) and
		// the command's, each to itself, once the init has started and
		// waits (subCommand.mapped): the init keeps its capabilities as
		// ambient ones through its execve, and becomes the command's id as
		// root does.
		sc = &subCommand{s: userSubordinate(), uid: uid, mw: mw, helper: c.Confine.Helper, dirs: p.written()}
	} else {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	if os.Geteuid() == 0 && uid != LayerID {
		// The owner of the caches' layers, which the overlay copies up.
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
	return w, rr, sc, nil
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
