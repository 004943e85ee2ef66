package sandbox

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrict puts the Landlock rules on the calling thread — the one that
// starts the command, which inherits them — and on no other thread of the
// init: files, TCP ports (the proxy's relay alone), signals and abstract
// unix sockets of processes outside, and (where the kernel has it, ABI 9)
// pathname unix sockets outside the folders it may write and the proxy's.
// The caller has set no_new_privs and locked its thread.
func (p Policy) restrict() error {
	var system []string
	for _, d := range System {
		if d != "/etc" {
			system = append(system, d)
		}
	}
	// /dev/shm is the view's own tmpfs (POSIX shared memory and
	// semaphores); a Landlock rule holds the folder it was made on, so it
	// stays that tmpfs whatever the command does to its paths.
	write := append(append([]string{}, p.Write...), "/dev/shm")
	rules := []landlock.Rule{
		landlock.RODirs(append(append(append(system, "/proc"), p.Etc.Dirs...), p.Read...)...).IgnoreIfMissing(),
		landlock.ROFiles(append(append([]string{}, p.Etc.Files...), p.Run...)...).IgnoreIfMissing(),
		landlock.RWDirs(write...).WithResolveUnix(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").IgnoreIfMissing(),
	}
	if p.Proxy != nil {
		rules = append(rules, landlock.RODirs("/run/proctor").WithResolveUnix(), landlock.ConnectTCP(uint16(p.Proxy.Port)))
	}
	// Best effort down to the kernel's ABI, which Available requires to be
	// 6 or later (files, TCP, signals, abstract sockets); an error means
	// nothing runs.
	fd, flags, err := landlock.V9.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("make the Landlock rules: %w", err)
	}
	if fd < 0 {
		return fmt.Errorf("this kernel has no Landlock to confine the command with")
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("apply the Landlock rules: %w", err)
	}
	return nil
}
