package sandbox

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The filter is run without a kernel by golang.org/x/net/bpf's
// interpreter, a classic BPF machine nobody here wrote. One difference
// matters: the kernel loads seccomp_data's 32-bit words in the machine's
// own byte order, the interpreter loads them big-endian, as from a
// network packet. seccompData builds what the kernel hands the filter;
// forTheInterpreter rewrites each word so the interpreter loads the value
// the kernel would. Fed the kernel's bytes as they are, the interpreter
// would see every number swapped on a little-endian machine, and the table
// would fail (TestTheSeccompTableCanFail shows it does).

// seccompData is struct seccomp_data (nr, arch, instruction pointer, six
// arguments) in the machine's byte order.
func seccompData(arch uint32, nr int, args []uint64) []byte {
	data := make([]byte, 64)
	binary.NativeEndian.PutUint32(data[0:], uint32(nr))
	binary.NativeEndian.PutUint32(data[4:], arch)
	for i, v := range args {
		binary.NativeEndian.PutUint64(data[16+8*i:], v)
	}
	return data
}

// forTheInterpreter rewrites each 32-bit word big-endian.
func forTheInterpreter(data []byte) []byte {
	out := make([]byte, len(data))
	for i := 0; i+4 <= len(data); i += 4 {
		binary.BigEndian.PutUint32(out[i:], binary.NativeEndian.Uint32(data[i:]))
	}
	return out
}

// seccompVM checks the program as the kernel does before it takes one
// (every load a whole, aligned word of seccomp_data) and loads it into the
// interpreter.
func seccompVM(prog []unix.SockFilter) (*bpf.VM, error) {
	raw := make([]bpf.RawInstruction, len(prog))
	for i, in := range prog {
		if in.Code&0x07 == unix.BPF_LD && (in.Code != unix.BPF_LD|unix.BPF_W|unix.BPF_ABS || in.K%4 != 0 || in.K >= 64) {
			return nil, fmt.Errorf("instruction %d: load %#x at %d, which the kernel refuses", i, in.Code, in.K)
		}
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		return nil, fmt.Errorf("the program has instructions the interpreter does not know")
	}
	return bpf.NewVM(ins)
}

// seccompCase is one system call and the answer the filter must give it.
type seccompCase struct {
	name string
	arch uint32
	nr   int
	args []uint64
	want uint32
}

// seccompMisses runs every case through the program and says where its
// answer is not the one wanted; feed turns the kernel's bytes into the
// interpreter's.
func seccompMisses(prog []unix.SockFilter, feed func([]byte) []byte) ([]string, error) {
	vm, err := seccompVM(prog)
	if err != nil {
		return nil, err
	}
	var misses []string
	for _, c := range seccompCases() {
		got, err := vm.Run(feed(seccompData(c.arch, c.nr, c.args)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if uint32(got) != c.want {
			misses = append(misses, fmt.Sprintf("%s: the filter returns %#x, want %#x", c.name, uint32(got), c.want))
		}
	}
	return misses, nil
}

// seccompCases are the filter's rule table: each system call the filter
// names, with the arguments that decide, and the answer docs/security.md
// promises.
func seccompCases() []seccompCase {
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
	cases := make([]seccompCase, 0, len(calls)+2)
	for _, c := range calls {
		cases = append(cases, seccompCase{c.name, auditArch, c.nr, c.args, c.want})
	}
	cases = append(cases, seccompCase{"a system call of another architecture", unix.AUDIT_ARCH_I386, unix.SYS_READ, nil, errno(unix.ENOSYS)})
	if firstForeignSyscall > 0 {
		cases = append(cases, seccompCase{"an x32 system call", auditArch, firstForeignSyscall | unix.SYS_READ, nil, errno(unix.ENOSYS)})
	}
	return cases
}

// TestTheSeccompFilterRefusesWhatItSays runs the rule table through the
// filter without a kernel.
func TestTheSeccompFilterRefusesWhatItSays(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	misses, err := seccompMisses(prog, forTheInterpreter)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range misses {
		t.Error(m)
	}
}

// TestTheSeccompTableCanFail drops one rule of each kind from the program
// — a denied call, a socket family, a socket protocol, a namespace flag,
// an ioctl, a mode bit — and the table must say so for each; so must it
// when the kernel's bytes are fed to the interpreter without minding the
// byte order.
func TestTheSeccompTableCanFail(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	jump := func(k uint32) func(unix.SockFilter) bool {
		return func(in unix.SockFilter) bool { return in.Code&0x07 == unix.BPF_JMP && in.K == k }
	}
	drops := []struct {
		rule  string
		match func(unix.SockFilter) bool
		miss  string
	}{
		{"bpf is denied", jump(unix.SYS_BPF), "bpf:"},
		{"packet sockets are refused", func(in unix.SockFilter) bool {
			return in.Code == unix.BPF_RET|unix.BPF_K && in.K == retErrno|uint32(unix.EAFNOSUPPORT)
		}, "a packet socket:"},
		{"MPTCP is refused", func(in unix.SockFilter) bool {
			return in.Code == unix.BPF_RET|unix.BPF_K && in.K == retErrno|uint32(unix.EPROTONOSUPPORT)
		}, "an MPTCP socket:"},
		{"clone may not make namespaces", jump(newNamespaces), "clone a user namespace:"},
		{"TIOCSTI is refused", jump(tiocsti), "TIOCSTI:"},
		{"no setuid mode", jump(unix.S_ISUID | unix.S_ISGID), "fchmod setuid:"},
	}
	for _, d := range drops {
		t.Run(d.rule, func(t *testing.T) {
			mutant := slices.Clone(prog)
			at := slices.IndexFunc(mutant, d.match)
			if at < 0 {
				t.Fatalf("no instruction of the rule %q in the program", d.rule)
			}
			switch {
			case mutant[at].Code == unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K:
				mutant[at].K = 0 // no bit: the jump is never taken
			case mutant[at].Code&0x07 == unix.BPF_JMP:
				mutant[at].K = 0xdead // never the value: the jump is never taken
			default:
				mutant[at].K = retAllow
			}
			misses, err := seccompMisses(mutant, forTheInterpreter)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(misses, func(m string) bool { return strings.HasPrefix(m, d.miss) }) {
				t.Errorf("with the rule dropped, the table's misses are %q; want one for %q", misses, d.miss)
			}
		})
	}
	t.Run("the byte order", func(t *testing.T) {
		asIs := func(b []byte) []byte { return b }
		if binary.NativeEndian.Uint32([]byte{0, 0, 0, 1}) == 1 {
			t.Skip("a big-endian machine loads as the interpreter does")
		}
		misses, err := seccompMisses(prog, asIs)
		if err != nil {
			t.Fatal(err)
		}
		if len(misses) == 0 {
			t.Error("fed the kernel's bytes as they are, the table passes: it tests nothing")
		}
	})
}
