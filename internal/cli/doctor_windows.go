package cli

import "syscall"

// asUser: Windows has no uid to become (doctor never asks: nobody is root there).
func asUser(uint32) *syscall.SysProcAttr { return nil }

// kernel names the system.
func kernel() string { return "Windows" }
