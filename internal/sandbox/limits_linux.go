package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// initThreads is how many more threads the init may start once the
// command runs (the Go runtime's, for the proxy's relay): the command's
// own budget is max_processes whatever the init does.
const initThreads = 8

// limit sets the limits on the size of each file and the CPU time of each
// process, for this process and so for what it starts.
func (p Policy) limit() error {
	for _, l := range []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_FSIZE, p.MaxFile}, {unix.RLIMIT_CPU, p.CPU}} {
		if l.v > 0 {
			if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.v, Max: l.v}); err != nil {
				return fmt.Errorf("set limit %d: %w", l.res, err)
			}
		}
	}
	return nil
}

// limitProcesses holds the command and everything it starts to MaxProcs
// tasks (processes and threads). The kernel counts RLIMIT_NPROC per user
// in each user namespace, and every confined command has a user namespace
// of its own, where no id is root: the limit binds this command alone,
// whoever runs proctor, and ends with it — no budget is shared between
// commands or runs. The init's own threads are counted in the same
// namespace, so they are added to the limit (with room for a few more),
// and the command cannot raise it (it has no capability in the host's
// user namespace).
func (p Policy) limitProcesses() error {
	if p.MaxProcs == 0 {
		return nil
	}
	n, err := ownThreads()
	if err != nil {
		return fmt.Errorf("count the init's threads: %w", err)
	}
	v := n + initThreads + p.MaxProcs
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: v, Max: v}); err != nil {
		return fmt.Errorf("limit processes to %d: %w", p.MaxProcs, err)
	}
	return nil
}

// ownThreads counts the threads of this process.
func ownThreads() (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no Threads line in /proc/self/status")
}
