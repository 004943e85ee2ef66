//go:build !linux && !windows

package proc

import "syscall"

// procAttr puts a command in a process group of its own.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
