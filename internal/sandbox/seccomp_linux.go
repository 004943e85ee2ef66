package sandbox

import (
	"fmt"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is the wall behind the namespaces and Landlock: it
// refuses what a command never needs and what would reach past the
// others — new namespaces (a new user namespace would give it
// capabilities again), mounts, keyrings (whose keys outlive processes and
// are shared by an id), bpf, perf_event_open, userfaultfd and io_uring
// (large kernel attack surfaces), loading modules or kernels, pushing
// input into a terminal (TIOCSTI, TIOCLINUX), and sockets of any family
// but unix, IPv4/IPv6 (plain TCP, UDP and ping) and netlink's route
// protocol: not MPTCP, SCTP, raw or packet sockets, vsock, AF_ALG. What
// it refuses fails with an error (EPERM, or what a kernel without the
// feature says), so programs fall back as they would elsewhere. A system
// call of another architecture (x32, i386) is refused whole. No file gets
// a setuid or setgid bit: chmod, fchmod, fchmodat, fchmodat2, open,
// openat, creat, mknod and mknodat with S_ISUID or S_ISGID in their mode
// fail with EPERM, and openat2, whose mode is in a struct seccomp cannot
// read, fails as on a kernel without it (ENOSYS: programs fall back to
// openat). A file the command made setuid some other way still loses the
// bit when the run ends (Reclaim): that is the wall that holds; this one
// says no at once.

// deniedSyscalls fail with EPERM.
var deniedSyscalls = []uintptr{
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_SETNS, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_LOOKUP_DCOOKIE,
}

// modeArg is a system call that gives a file a mode, and which of its
// arguments the mode is.
type modeArg struct {
	nr  uintptr
	arg int
}

// modeArgs are the system calls that set a file's mode: those of every
// architecture and the older ones of this one (archModeArgs).
func modeArgs() []modeArg {
	return append([]modeArg{
		{unix.SYS_FCHMOD, 1}, {unix.SYS_FCHMODAT, 2}, {unix.SYS_FCHMODAT2, 2},
		{unix.SYS_OPENAT, 3}, {unix.SYS_MKNODAT, 2},
	}, archModeArgs()...)
}

// Namespace flags of clone and unshare. CLONE_NEWTIME (0x80) is an exit
// signal's bit in clone's flags, and a namespace only to unshare.
const (
	newNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	newTime = unix.CLONE_NEWTIME
)

// The terminal ioctls that push input or control a console.
const (
	tiocsti   = 0x5412
	tioclinux = 0x541C
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retErrno = unix.SECCOMP_RET_ERRNO
)

// seccompData offsets: the syscall number, the architecture, and the low
// 32 bits of each argument (little-endian).
const (
	offNr   = 0
	offArch = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) }

// seccompProgram is the filter as BPF.
func seccompProgram() ([]unix.SockFilter, error) {
	var a asm
	a.load(offArch)
	a.jeq(auditArch, "", "other-arch")
	a.load(offNr)
	if firstForeignSyscall > 0 {
		a.jge(firstForeignSyscall, "other-arch", "")
	}
	for _, nr := range deniedSyscalls {
		a.jeq(uint32(nr), "eperm", "")
	}
	a.jeq(unix.SYS_SOCKET, "socket", "")
	a.jeq(unix.SYS_SOCKETPAIR, "socketpair", "")
	a.jeq(unix.SYS_CLONE, "clone", "")
	a.jeq(unix.SYS_UNSHARE, "unshare", "")
	a.jeq(unix.SYS_CLONE3, "enosys", "") // its flags are out of reach: libc falls back to clone
	a.jeq(unix.SYS_IOCTL, "ioctl", "")
	a.jeq(unix.SYS_OPENAT2, "enosys", "")
	for _, m := range modeArgs() {
		a.jeq(uint32(m.nr), "mode"+strconv.Itoa(m.arg), "")
	}
	a.ret(retAllow)

	for _, arg := range []int{1, 2, 3} {
		a.label("mode" + strconv.Itoa(arg))
		a.load(offArg(arg))
		a.jset(unix.S_ISUID|unix.S_ISGID, "eperm", "allow")
	}

	a.label("socket")
	a.load(offArg(0))
	a.jeq(unix.AF_UNIX, "allow", "")
	a.jeq(unix.AF_INET, "inet", "")
	a.jeq(unix.AF_INET6, "inet", "")
	a.jeq(unix.AF_NETLINK, "netlink", "")
	a.ret(retErrno | uint32(unix.EAFNOSUPPORT))
	a.label("inet")
	a.load(offArg(1))
	a.and(^uint32(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC))
	a.jeq(unix.SOCK_STREAM, "stream", "")
	a.jeq(unix.SOCK_DGRAM, "dgram", "")
	a.ret(retErrno | uint32(unix.EPERM)) // raw sockets, SCTP's seqpacket
	a.label("stream")
	a.load(offArg(2))
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "")
	a.ret(retErrno | uint32(unix.EPROTONOSUPPORT)) // MPTCP, SCTP: as a kernel without them
	a.label("dgram")
	a.load(offArg(2))
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_UDP, "allow", "")
	a.jeq(unix.IPPROTO_ICMP, "allow", "")
	a.jeq(unix.IPPROTO_ICMPV6, "allow", "")
	a.ret(retErrno | uint32(unix.EPROTONOSUPPORT))
	a.label("netlink")
	a.load(offArg(2))
	a.jeq(unix.NETLINK_ROUTE, "allow", "")
	a.ret(retErrno | uint32(unix.EPROTONOSUPPORT))

	a.label("socketpair")
	a.load(offArg(0))
	a.jeq(unix.AF_UNIX, "allow", "")
	a.ret(retErrno | uint32(unix.EAFNOSUPPORT))

	a.label("clone")
	a.load(offArg(0))
	a.jset(newNamespaces, "eperm", "allow")
	a.label("unshare")
	a.load(offArg(0))
	a.jset(newNamespaces|newTime, "eperm", "allow")

	a.label("ioctl")
	a.load(offArg(1))
	a.jeq(tiocsti, "eperm", "")
	a.jeq(tioclinux, "eperm", "allow")

	a.label("allow")
	a.ret(retAllow)
	a.label("eperm")
	a.ret(retErrno | uint32(unix.EPERM))
	a.label("enosys")
	a.ret(retErrno | uint32(unix.ENOSYS))
	a.label("other-arch")
	a.ret(retErrno | uint32(unix.ENOSYS))
	return a.assemble()
}

// applySeccomp puts the filter on the calling thread (the one that starts
// the command), which has set no_new_privs; other threads of the init keep
// none.
func applySeccomp() error {
	prog, err := seccompProgram()
	if err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("apply the seccomp filter: %w", err)
	}
	return nil
}

// asm assembles a classic BPF program whose jumps name labels ahead of
// them ("" is the next instruction).
type asm struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (a *asm) add(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *asm) load(off uint32) { a.add(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }
func (a *asm) and(k uint32)    { a.add(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k) }
func (a *asm) ret(k uint32)    { a.add(unix.BPF_RET|unix.BPF_K, k) }

func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	if a.jumps == nil {
		a.jumps = map[int][2]string{}
	}
	a.jumps[len(a.ins)] = [2]string{jt, jf}
	a.add(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *asm) jeq(k uint32, jt, jf string)  { a.jump(unix.BPF_JEQ, k, jt, jf) }
func (a *asm) jge(k uint32, jt, jf string)  { a.jump(unix.BPF_JGE, k, jt, jf) }
func (a *asm) jset(k uint32, jt, jf string) { a.jump(unix.BPF_JSET, k, jt, jf) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) assemble() ([]unix.SockFilter, error) {
	for i, j := range a.jumps {
		for n, name := range j {
			off := 0
			if name != "" {
				at, ok := a.labels[name]
				if !ok || at <= i || at-i-1 > 255 {
					return nil, fmt.Errorf("instruction %d: jump to %q out of reach", i, name)
				}
				off = at - i - 1
			}
			if n == 0 {
				a.ins[i].Jt = uint8(off)
			} else {
				a.ins[i].Jf = uint8(off)
			}
		}
	}
	return a.ins, nil
}
