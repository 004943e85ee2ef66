package testutil

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RefuseUserNamespaces puts a seccomp filter on every thread of this
// process, and so on everything it starts, that refuses clone and unshare
// a new user namespace with EPERM (and clone3 with ENOSYS, so that libc and
// Go fall back to clone) — what Docker's and Podman's default seccomp
// profiles do to a container without CAP_SYS_ADMIN. A test process whose
// TestMain calls it plays a host that cannot give the sandbox's first wall.
func RefuseUserNamespaces() error {
	const (
		offNr   = 0
		offArg0 = 16 // the low 32 bits of the first argument (little-endian)
		ld      = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret     = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: offNr},
		{Code: jeq, K: unix.SYS_CLONE3, Jt: 6},
		{Code: jeq, K: unix.SYS_CLONE, Jt: 1},
		{Code: jeq, K: unix.SYS_UNSHARE, Jf: 2},
		{Code: ld, K: offArg0},
		{Code: jset, K: unix.CLONE_NEWUSER, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("refuse user namespaces: %w", errno)
	}
	return nil
}
