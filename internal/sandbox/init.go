package sandbox

import (
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

// enter runs argv under p, as a person who runs `proctor sandbox-exec`
// does: the helper is started again as the init of the command's
// namespaces (Confine), and this process waits for it, passing on the
// signals it gets. It returns the command's exit code, as a shell would
// (128+signal when it was killed).
func enter(p Policy, argv []string, stderr io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	p.Confine("/proc/self/exe", cmd)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, stderr
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start the command in namespaces of its own (a user who is not root needs unprivileged user namespaces): %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sig:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 0, err
}

// initMain is the namespace's init: it sets the limits, makes its root a
// view of the policy's folders with its own /proc (enterView), brings up
// its loopback when the network is hidden, confines itself (Landlock, no capabilities) and starts the
// command, which inherits all of it; then it reaps every process of the
// namespace and ends with the command's exit code, passing on the signals
// it gets.
func initMain(p Policy, argv []string) (int, error) {
	runtime.LockOSThread()
	// Before /proc is the namespace's own: a user who is not root counts
	// their processes there.
	if err := p.limit(); err != nil {
		return 0, err
	}
	if err := p.enterView(); err != nil {
		return 0, err
	}
	if p.Offline {
		if err := loopbackUp(); err != nil {
			return 0, err
		}
	}
	if err := p.restrict(); err != nil {
		return 0, err
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
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

// dropCapabilities leaves this thread, which starts the command (the init
// has locked it), with no capability at all: none effective, permitted,
// inheritable or ambient, an empty bounding set, and (as root) securebits
// that give root no capabilities at the next execve either. The command
// inherits the creds of the thread that forks it; the init's other
// threads run nothing of the command's.
func dropCapabilities() error {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
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
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
