package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// run is the helper's work: the init of a command's namespaces, a survey
// of the walls, or a person's `proctor sandbox-exec -- COMMAND`.
func (in invocation) run(stderr io.Writer) (int, error) {
	switch {
	case in.init:
		return initMain(in, allWalls)
	case in.surveying:
		return surveyPlain(in)
	case in.settling:
		return settleMain(in)
	}
	return enter(in.policy, in.argv, stderr)
}

// enter runs argv under p, as a person who runs `proctor sandbox-exec`
// does: the helper is started again as the init of the command's
// namespaces (initMain), and this process waits for it; SIGINT, SIGTERM,
// SIGHUP and SIGQUIT stop it. It returns the command's exit code, as a
// shell would (128+signal when it was killed).
func enter(p Policy, argv []string, stderr io.Writer) (int, error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	dir, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	res, err := Command{Argv: argv, Dir: dir, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: stderr,
		Confine: &Confinement{Policy: p, Helper: "/proc/self/exe"}, Stop: syscall.SIGTERM}.Run(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return 128 + int(syscall.SIGTERM), nil
	case err != nil:
		return 0, err
	case res.Signal != 0:
		return 128 + int(res.Signal), nil
	}
	return res.Code, nil
}

// walls are the walls an init puts up besides its namespaces; a test of
// the namespaces alone leaves them out.
type walls struct{ landlock, seccomp bool }

var allWalls = walls{landlock: true, seccomp: true}

// initMain is the init of the command's namespaces. As the id that
// started it (root's, unmapped in its user namespace, or a user's own) it
// sets the limits and makes its root a read-only view of the policy's
// folders (enterView); it brings up its loopback, names its host, and —
// started by root — becomes the command's id (become). It serves the model
// proxy's socket on its loopback, takes a new session keyring, drops
// every capability and, on the thread that starts the command, puts up
// Landlock and the seccomp filter. Then it starts the command, which
// inherits all of it, reaps every process of the namespace and ends with
// the command's exit code, passing on the signals it gets.
func initMain(in invocation, w walls) (int, error) {
	var rep *os.File
	if in.report >= 0 {
		unix.CloseOnExec(in.report)
		rep = os.NewFile(uintptr(in.report), "report")
	}
	if in.surveying {
		if rep != nil {
			sendSurvey(rep, in.survey(w))
		}
		return 0, nil
	}
	if in.mapped >= 0 {
		if err := waitMapped(in.mapped); err != nil {
			if rep != nil {
				sendReport(rep, nil, atWall(WallNamespaces, err))
			}
			return 0, err
		}
	}
	walls, err := in.putUp(w)
	if rep != nil {
		sendReport(rep, walls, err)
	}
	if err != nil {
		return 0, err
	}
	argv := in.argv
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return 0, fmt.Errorf("run %s: %w", argv[0], err)
	}
	go func() {
		for s := range sig {
			unix.Kill(-1, s.(syscall.Signal)) // every process of the namespace but the init
		}
	}()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait for %s: %w", argv[0], err)
		}
		if pid != proc.Pid {
			continue // an orphan of the namespace, reaped
		}
		// The command has ended: the init ends with it, and the kernel
		// kills every process it left.
		if ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ws.ExitStatus(), nil
	}
}

// putUp puts up the walls of the command's namespaces on this thread
// and says which it has, or the wall that could not be put up.
func (in invocation) putUp(w walls) (*Walls, error) {
	var walls *Walls
	for _, st := range in.steps(w, &walls) {
		if err := st.do(); err != nil {
			return nil, atWall(st.wall, err)
		}
	}
	return walls, nil
}

// survey tries every step, whatever failed before it, and says how each
// went: `proctor doctor`'s look at every wall at once.
func (in invocation) survey(w walls) []Finding {
	var walls *Walls
	var out []Finding
	for _, st := range in.steps(w, &walls) {
		if st.wall == "" {
			st.do()
			continue
		}
		f := Finding{Wall: st.wall, OK: true}
		if err := st.do(); err != nil {
			f.OK, f.Detail = false, err.Error()
			f.Errno = errnoOf(err)
			var we *wallError
			if errors.As(err, &we) {
				f.Wall = we.wall
			}
		}
		if i := len(out) - 1; i >= 0 && out[i].Wall == f.Wall {
			if !f.OK && out[i].OK {
				out[i] = f // a wall of several steps fails with its first failing step
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

// step is one thing the init does to put up a wall ("" : bookkeeping).
type step struct {
	wall Wall
	do   func() error
}

// steps are what the init does, in order; the last sets *walls to the
// walls the command has.
func (in invocation) steps(w walls, walls **Walls) []step {
	p, become := in.policy, in.become
	got := &Walls{Namespaces: Namespaces}
	if len(p.Caches) > 0 {
		got.Caches = "overlay"
	}
	abi := landlockABI(p.LandlockABI)
	return []step{
		// The command is started from this thread, which alone holds the
		// Landlock domain, the seccomp filter and the dropped bounding set
		// it inherits; it is never unlocked.
		{"", func() error {
			runtime.LockOSThread()
			if in.parent >= 0 {
				watchParent(in.parent)
			}
			return nil
		}},
		{WallLimits, p.limit},
		{WallView, func() error {
			if in.ownWrite && become >= 0 {
				if err := own(p.written(), become, become); err != nil {
					return err
				}
			}
			return p.enterView(become)
		}},
		// Becoming the command's id cleared the parent-death signal: the
		// init dies with proctor again (and watchParent catches a death in
		// between).
		{WallNamespaces, dieWithProctorAndNameTheHost},
		{WallNetwork, func() error {
			if err := loopbackUp(); err != nil {
				return err
			}
			if p.Proxy != nil {
				return relay(p.Proxy.Port, proxySocketInView)
			}
			return nil
		}},
		{WallKeyring, newSessionKeyring},
		// Nothing of the command may trace or read the init's memory (its
		// other threads relay the proxy).
		{WallCapabilities, giveUpPrivileges},
		{WallLandlock, func() error {
			if !w.landlock || abi == 0 {
				return nil
			}
			if err := p.restrict(abi); err != nil {
				return err
			}
			got.LandlockABI, got.Landlock = abi, LandlockScopes(abi)
			return nil
		}},
		{WallLimits, p.limitProcesses},
		{WallSeccomp, func() error {
			if !w.seccomp {
				return nil
			}
			if err := applySeccomp(); err != nil {
				return err
			}
			got.Seccomp = true
			return nil
		}},
		{"", func() error { *walls = got; return nil }},
	}
}

// dieWithProctorAndNameTheHost sets the parent-death signal again
// (becoming the command's id cleared it) and names the UTS namespace's
// host.
func dieWithProctorAndNameTheHost() error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("die with proctor: %w", err)
	}
	if err := unix.Sethostname([]byte("proctor-sandbox")); err != nil {
		return fmt.Errorf("name the sandbox's host: %w", err)
	}
	return nil
}

// giveUpPrivileges makes the init undumpable (nothing of the command may
// trace it or read its memory: its other threads relay the proxy), drops
// every capability and sets no_new_privs.
func giveUpPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the init undumpable: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// watchParent ends the init — and so every process of its namespace —
// once the pipe proctor holds open at fd closes: proctor has died. The
// command does not inherit the pipe.
func watchParent(fd int) {
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "proctor")
	go func() {
		io.Copy(io.Discard, f)
		os.Exit(137)
	}()
}

// becomeID makes every thread of the init the command's id, with no
// supplementary group (root's would stay otherwise): from here on nothing
// it does is root's on the host.
func becomeID(id int) error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop root's groups: %w", err)
	}
	if err := syscall.Setgid(id); err != nil {
		return fmt.Errorf("become group %d: %w", id, err)
	}
	if err := syscall.Setuid(id); err != nil {
		return fmt.Errorf("become user %d: %w", id, err)
	}
	return nil
}

// newSessionKeyring gives the init, and so the command, a new anonymous
// session keyring: the keys of the process that started proctor are not
// the command's to read.
func newSessionKeyring() error {
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		return fmt.Errorf("take a new session keyring: %w", errno)
	}
	return nil
}

// dropCapabilities leaves the init with no capability at all. The thread
// that starts the command (the init has locked it) also loses its
// bounding set and ambient capabilities, and gets securebits that give
// root no capabilities at the next execve: the command inherits the creds
// of the thread that forks it. The init's other threads (the proxy's
// relay) keep no capability either.
func dropCapabilities() error {
	// linux/securebits.h: noroot, no setuid fixup, keep caps (off) and
	// no ambient raise, each locked.
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("set securebits: %w", err)
	}
	for c := uintptr(0); c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return dropAllThreadsCapabilities()
}
