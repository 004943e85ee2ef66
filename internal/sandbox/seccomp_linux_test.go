package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs the seccomp program on one system call as the kernel
// would, without a kernel: a classic BPF machine with the instructions the
// program's assembler emits, over seccomp_data (nr, arch, ip, args).
func runFilter(t *testing.T, prog []unix.SockFilter, arch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], uint32(nr))
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, v := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], v)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if int(in.K)+4 > len(data) {
				t.Fatalf("instruction %d loads past seccomp_data (offset %d)", pc, in.K)
			}
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var taken bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				taken = acc == in.K
			case unix.BPF_JGE:
				taken = acc >= in.K
			case unix.BPF_JSET:
				taken = acc&in.K != 0
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: code %#x is not one the filter uses", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// TestTheSeccompFilterRefusesWhatItSays runs the filter's rule table
// without a kernel: each system call the filter names, with the arguments
// that decide, gives the answer docs/security.md promises.
func TestTheSeccompFilterRefusesWhatItSays(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	allow := uint32(retAllow)
	errno := func(e unix.Errno) uint32 { return retErrno | uint32(e) }
	const setuid, setgid = unix.S_ISUID, unix.S_ISGID
	cwd := uint64(0xffffff9c) // AT_FDCWD as the low half of a register
	type call struct {
		name string
		nr   int
		args []uint64
		want uint32
	}
	calls := []call{
		{"read", unix.SYS_READ, []uint64{0, 0, 0}, allow},
		{"bpf", unix.SYS_BPF, nil, errno(unix.EPERM)},
		{"keyctl", unix.SYS_KEYCTL, nil, errno(unix.EPERM)},
		{"add_key", unix.SYS_ADD_KEY, nil, errno(unix.EPERM)},
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, nil, errno(unix.EPERM)},
		{"userfaultfd", unix.SYS_USERFAULTFD, nil, errno(unix.EPERM)},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, nil, errno(unix.EPERM)},
		{"mount", unix.SYS_MOUNT, nil, errno(unix.EPERM)},
		{"open_tree", unix.SYS_OPEN_TREE, nil, errno(unix.EPERM)},
		{"setns", unix.SYS_SETNS, nil, errno(unix.EPERM)},
		{"finit_module", unix.SYS_FINIT_MODULE, nil, errno(unix.EPERM)},
		{"clone a thread", unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_THREAD}, allow},
		{"clone a user namespace", unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER}, errno(unix.EPERM)},
		{"clone a network namespace", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET}, errno(unix.EPERM)},
		{"clone3", unix.SYS_CLONE3, nil, errno(unix.ENOSYS)},
		{"unshare a time namespace", unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWTIME}, errno(unix.EPERM)},
		{"unshare files", unix.SYS_UNSHARE, []uint64{unix.CLONE_FILES}, allow},
		{"a unix socket", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, allow},
		{"a TCP socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, unix.IPPROTO_TCP}, allow},
		{"an MPTCP socket", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM, 262}, errno(unix.EPROTONOSUPPORT)},
		{"a UDP socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM, 0}, allow},
		{"a raw socket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_RAW, 0}, errno(unix.EPERM)},
		{"a packet socket", unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, errno(unix.EAFNOSUPPORT)},
		{"a vsock", unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, errno(unix.EAFNOSUPPORT)},
		{"a netlink route socket", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, allow},
		{"a netlink audit socket", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT}, errno(unix.EPROTONOSUPPORT)},
		{"an inet socketpair", unix.SYS_SOCKETPAIR, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, errno(unix.EAFNOSUPPORT)},
		{"TIOCSTI", unix.SYS_IOCTL, []uint64{0, tiocsti}, errno(unix.EPERM)},
		{"TIOCLINUX", unix.SYS_IOCTL, []uint64{0, tioclinux}, errno(unix.EPERM)},
		{"TCGETS", unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"fchmod 0755", unix.SYS_FCHMOD, []uint64{3, 0o755}, allow},
		{"fchmod setuid", unix.SYS_FCHMOD, []uint64{3, setuid | 0o755}, errno(unix.EPERM)},
		{"fchmodat 0644", unix.SYS_FCHMODAT, []uint64{cwd, 0, 0o644}, allow},
		{"fchmodat setgid", unix.SYS_FCHMODAT, []uint64{cwd, 0, setgid | 0o755}, errno(unix.EPERM)},
		{"fchmodat2 setuid", unix.SYS_FCHMODAT2, []uint64{cwd, 0, setuid | 0o700, 0}, errno(unix.EPERM)},
		{"openat to read", unix.SYS_OPENAT, []uint64{cwd, 0, unix.O_RDONLY, 0}, allow},
		{"openat to create 0644", unix.SYS_OPENAT, []uint64{cwd, 0, unix.O_CREAT | unix.O_WRONLY, 0o644}, allow},
		{"openat to create setuid", unix.SYS_OPENAT, []uint64{cwd, 0, unix.O_CREAT | unix.O_WRONLY, setuid | 0o755}, errno(unix.EPERM)},
		{"openat2", unix.SYS_OPENAT2, nil, errno(unix.ENOSYS)},
		{"mknodat a fifo", unix.SYS_MKNODAT, []uint64{cwd, 0, unix.S_IFIFO | 0o644, 0}, allow},
		{"mknodat setgid", unix.SYS_MKNODAT, []uint64{cwd, 0, unix.S_IFREG | setgid | 0o755, 0}, errno(unix.EPERM)},
		// The mode's high bits are garbage when the call gives none: only
		// the low 32 bits decide, as the kernel reads an umode_t.
		{"fchmod with high bits", unix.SYS_FCHMOD, []uint64{3, 1<<40 | 0o644}, allow},
	}
	for _, m := range archModeArgs() {
		args := make([]uint64, m.arg+1)
		args[m.arg] = setuid | 0o755
		calls = append(calls, call{fmt.Sprintf("system call %d setuid", m.nr), int(m.nr), args, errno(unix.EPERM)})
		args = make([]uint64, m.arg+1)
		args[m.arg] = 0o755
		calls = append(calls, call{fmt.Sprintf("system call %d 0755", m.nr), int(m.nr), args, allow})
	}
	for _, nr := range deniedSyscalls {
		calls = append(calls, call{fmt.Sprintf("denied system call %d", nr), int(nr), nil, errno(unix.EPERM)})
	}
	for _, c := range calls {
		if got := runFilter(t, prog, auditArch, c.nr, c.args...); got != c.want {
			t.Errorf("%s: the filter returns %#x, want %#x", c.name, got, c.want)
		}
	}
	if got := runFilter(t, prog, unix.AUDIT_ARCH_I386, unix.SYS_READ); got != errno(unix.ENOSYS) {
		t.Errorf("a system call of another architecture: %#x, want ENOSYS", got)
	}
	if firstForeignSyscall > 0 {
		if got := runFilter(t, prog, auditArch, firstForeignSyscall|unix.SYS_READ); got != errno(unix.ENOSYS) {
			t.Errorf("an x32 system call: %#x, want ENOSYS", got)
		}
	}
}
