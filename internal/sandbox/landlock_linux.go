package sandbox

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrict puts the Landlock rules at ABI abi (> 0) on the calling thread
// — the one that starts the command, which inherits them — and on no
// other thread of the init: files, and as the ABI has them TCP ports (the
// proxy's relay alone, ABI 4), signals and abstract unix sockets of
// processes outside (ABI 6), pathname unix sockets outside the folders it
// may write and the proxy's (ABI 9). The namespaces hold each of these
// without Landlock too. The caller has set no_new_privs and locked its
// thread.
func (p Policy) restrict(abi int) error {
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
		rules = append(rules, landlock.RODirs("/run/proctor").WithResolveUnix())
		if abi >= 4 { // a TCP rule under an older ABI's rules is refused, not dropped
			rules = append(rules, landlock.ConnectTCP(uint16(p.Proxy.Port)))
		}
	}
	// The rules of that ABI (what a newer one adds is left out); an error
	// means nothing runs.
	versions := []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9}
	fd, flags, err := versions[min(abi, len(versions))-1].BestEffort().NewRulesetFD(rules...)
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
