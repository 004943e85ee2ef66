// Package sandbox confines the commands proctor starts for a run — the
// agent's run_command, check commands, a scenario's setup and ready, and
// external agents — with Landlock: a command may write only its workspace
// and a private temp folder, read the system and a documented allow-list
// (not the user's home, the data folder, other runs' workspaces or
// proctor's config), and open TCP connections only to the ports it is
// given (an agent's model proxy). It is applied by a small helper, proctor
// itself re-executed as `proctor sandbox-exec`, which restricts itself,
// sets resource limits and then executes the command, which inherits both.
package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The modes.
const (
	ModeOff       = "off"       // no confinement
	ModeWorkspace = "workspace" // the default: write the workspace, read the system and the allow-list
	ModeStrict    = "strict"    // as workspace, without the read allow-list, and no network for commands
)

// Mode checks a mode given by a person.
func Mode(s string) (string, error) {
	switch s {
	case "", ModeWorkspace:
		return ModeWorkspace, nil
	case ModeStrict, ModeOff:
		return s, nil
	}
	return "", fmt.Errorf("sandbox %q: want workspace, strict or off", s)
}

// System are the folders every sandboxed command may read (and run from).
var System = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys", "/run"}

// Policy is what one command may do.
type Policy struct {
	Write    []string // folders it may write (and read): the workspace, a private temp folder
	Read     []string // folders it may read besides System: the allow-list (toolchains, module caches)
	Run      []string // files (not their folders) it may read and run: proctor itself, as an agent's permission hook
	Connect  []int    // TCP ports it may connect to; none: no TCP at all
	Offline  bool     // no network at all: a network namespace with only loopback (strict mode)
	MaxFile  uint64   // bytes one file may grow to (RLIMIT_FSIZE); 0 no limit
	CPU      uint64   // CPU seconds of each process (RLIMIT_CPU); 0 no limit
	MaxProcs uint64   // processes and threads of the command and its children (limitProcesses); 0 no limit
}

// Available says whether Landlock works on this kernel, with the reason
// when it does not.
func Available() error {
	v, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		return fmt.Errorf("Landlock is not available on this kernel (%v)", err)
	case v < 6:
		return fmt.Errorf("this kernel's Landlock (ABI %d) cannot keep a command from signalling processes outside it; proctor needs ABI 6 (Linux 6.12) or later", v)
	}
	return nil
}

// Confine makes cmd run its command under p: it starts the helper at self
// (the proctor binary, as `proctor sandbox-exec --init`) as the init of
// namespaces of its own — PID and mount, network when the network is
// hidden, and for a user who is not root a user namespace that maps the
// user to itself — and the init confines itself and starts cmd's command
// (initMain). Nothing the command starts can see or signal a process
// outside, and nothing of it outlives the init, which ends with the
// command and is killed when its parent dies.
func (p Policy) Confine(self string, cmd *exec.Cmd) {
	cmd.Args = append(append([]string{self, "sandbox-exec", "--init"}, p.flags()...), append([]string{"--"}, cmd.Args...)...)
	cmd.Path, cmd.Err = self, nil // the init finds the command in its view
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
	a.Pdeathsig = syscall.SIGKILL
	if p.Offline {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		// Enough to mount its view and bring up its loopback; the init
		// drops them before the command starts.
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
	}
}

// flags are p as the helper's flags.
func (p Policy) flags() []string {
	var out []string
	for _, d := range p.Write {
		out = append(out, "--write", d)
	}
	for _, d := range p.Read {
		out = append(out, "--read", d)
	}
	for _, f := range p.Run {
		out = append(out, "--run", f)
	}
	for _, port := range p.Connect {
		out = append(out, "--connect", strconv.Itoa(port))
	}
	if p.Offline {
		out = append(out, "--offline")
	}
	for _, l := range []struct {
		flag string
		v    uint64
	}{{"--max-file", p.MaxFile}, {"--cpu", p.CPU}, {"--max-procs", p.MaxProcs}} {
		if l.v > 0 {
			out = append(out, l.flag, strconv.FormatUint(l.v, 10))
		}
	}
	return out
}

// Main is the helper: it parses the policy and runs the command as the
// init of namespaces of its own (enter), which confines itself and starts
// the command (initMain). It returns the command's exit code, or an error
// when the command could not be run.
func Main(args []string, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var p Policy
	var write, read, runs, connect list
	fs.Var(&write, "write", "a `folder` the command may write")
	fs.Var(&read, "read", "a `folder` the command may read")
	fs.Var(&runs, "run", "a `file` the command may read and run (not its folder)")
	fs.Var(&connect, "connect", "a TCP `port` the command may connect to")
	fs.Uint64Var(&p.MaxFile, "max-file", 0, "RLIMIT_FSIZE in bytes")
	fs.Uint64Var(&p.CPU, "cpu", 0, "RLIMIT_CPU in seconds")
	fs.Uint64Var(&p.MaxProcs, "max-procs", 0, "processes and threads")
	fs.BoolVar(&p.Offline, "offline", false, "no network at all")
	asInit := fs.Bool("init", false, "run as the init of the command's namespaces (set by the helper itself)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return 0, errors.New("sandbox-exec: no command after --")
	}
	p.Write, p.Read, p.Run = write, read, runs
	for _, s := range connect {
		port, err := strconv.Atoi(s)
		if err != nil || port < 1 || port > 65535 {
			return 0, fmt.Errorf("sandbox-exec: --connect %q: want a port", s)
		}
		p.Connect = append(p.Connect, port)
	}
	run := func() (int, error) { return enter(p, argv, stderr) }
	if *asInit {
		run = func() (int, error) { return initMain(p, argv) }
	}
	code, err := run()
	if err != nil {
		return 0, fmt.Errorf("sandbox-exec: %w", err)
	}
	return code, nil
}

// limit sets the resource limits of this process (and so of what it
// starts).
func (p Policy) limit() error {
	for _, l := range []struct {
		res int
		v   uint64
	}{{unix.RLIMIT_FSIZE, p.MaxFile}, {unix.RLIMIT_CPU, p.CPU}} {
		if l.v > 0 {
			if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.v, Max: l.v}); err != nil {
				return fmt.Errorf("set limit %d: %w", l.res, err)
			}
		}
	}
	if p.MaxProcs > 0 {
		return limitProcesses(p.MaxProcs)
	}
	return nil
}

// restrict applies the Landlock rules to every thread of this process (and
// so to what it starts): files, TCP ports, signals and abstract unix
// sockets of processes outside, and (where the kernel has it, ABI 9)
// pathname unix sockets outside the folders it may write.
func (p Policy) restrict() error {
	var system []string
	for _, d := range System {
		if d != "/etc" {
			system = append(system, d)
		}
	}
	etcDirs, etcFiles := readable("/etc")
	rules := []landlock.Rule{
		landlock.RODirs(append(append(system, etcDirs...), p.Read...)...).IgnoreIfMissing(),
		landlock.ROFiles(append(etcFiles, p.Run...)...).IgnoreIfMissing(),
		landlock.RWDirs(p.Write...).WithResolveUnix(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty").IgnoreIfMissing(),
	}
	for _, port := range p.Connect {
		rules = append(rules, landlock.ConnectTCP(uint16(port)))
	}
	// Best effort down to the kernel's ABI, which Available requires to be
	// 6 or later (files, TCP, signals, abstract sockets); an error means
	// nothing runs.
	return landlock.V9.BestEffort().Restrict(rules...)
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
