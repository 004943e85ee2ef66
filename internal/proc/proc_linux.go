package proc

import "syscall"

// procAttr puts a process in a process group of its own, killed when
// proctor dies (Pdeathsig): nothing of it outlives proctor.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
