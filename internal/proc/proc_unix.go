//go:build !windows

package proc

import (
	"os"
	"syscall"
)

// killGroup sends sig to the process group p leads (its own: procAttr).
func killGroup(p *os.Process, sig syscall.Signal) error { return syscall.Kill(-p.Pid, sig) }
