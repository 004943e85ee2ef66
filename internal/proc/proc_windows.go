package proc

import (
	"os"
	"syscall"
)

// procAttr starts a command in a process group of its own.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup ends the command: Windows has no signals to send, and what it
// started is not killed with it (a job object would; proctor on Windows
// runs only with --sandbox off, as a convenience).
func killGroup(p *os.Process, _ syscall.Signal) error { return p.Kill() }
