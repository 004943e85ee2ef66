//go:build !windows

package cli

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// asUser starts a process as uid (its group the same number), as root may.
func asUser(uid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
}

// kernel names the running kernel and machine.
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "Linux"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:]) + " (" + unix.ByteSliceToString(u.Machine[:]) + ")"
}
