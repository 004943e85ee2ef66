// Package proc starts every process proctor runs, the one way: in a
// process group of its own, killed with proctor where the system can
// (Pdeathsig on Linux), and when its context ends, its whole group is
// stopped and what is left of it is killed a moment later. The sandbox
// (internal/sandbox.Command) confines a run's commands on top of it; git
// and the copy of a source run through it with no confinement.
package proc

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command is name with args, to be started as every process proctor runs
// is: stopped as Stop says with SIGKILL and two seconds.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = procAttr()
	Stop(cmd, syscall.SIGKILL, 0)
	return cmd
}

// Stop sets how cmd is stopped when its context ends: sig to its whole
// process group, and after wait (two seconds when 0) its output is let go
// and the process killed.
func Stop(cmd *exec.Cmd, sig syscall.Signal, wait time.Duration) {
	cmd.Cancel = func() error { return killGroup(cmd.Process, sig) }
	if wait <= 0 {
		wait = 2 * time.Second
	}
	cmd.WaitDelay = wait
}

// KillGroup kills the process group p leads: what a command left running.
func KillGroup(p *os.Process) error { return killGroup(p, syscall.SIGKILL) }
