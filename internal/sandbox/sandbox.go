// Package sandbox confines the commands proctor starts for a run — the
// agent's run_command, check commands, a scenario's setup and ready,
// external agents and their --version probe — behind walls, not rules:
// each runs in user, mount, PID, network, IPC and UTS namespaces of its
// own, as an id that is never root on the host, over a read-only view of
// the host in which only its workspace and private temp folder are
// writable; its one way out is the model proxy, a unix socket its init
// relays to a loopback port inside the network namespace. Landlock and a
// seccomp filter stand behind the namespaces. The init is proctor itself
// re-executed as `proctor sandbox-exec --init`; Command is the one way
// proctor starts such a command (and an unconfined one, with the sandbox
// off).
package sandbox

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Mode is how a run's commands are confined; decided once, from what a
// person gave (ParseMode).
type Mode string

// The modes.
const (
	ModeOff       Mode = "off"       // no confinement
	ModeWorkspace Mode = "workspace" // the default: write the workspace, read the system and the allow-list
	ModeStrict    Mode = "strict"    // as workspace, without the read allow-list
)

// ParseMode checks a mode given by a person ("" is the default).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeWorkspace:
		return ModeWorkspace, nil
	case ModeStrict, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("sandbox %q: want workspace, strict or off", s)
}

// Confined says whether the commands run in the sandbox ("" is no mode
// at all: a runner without a sandbox).
func (m Mode) Confined() bool { return m == ModeWorkspace || m == ModeStrict }

// ReadsAllowList says whether the commands may read the read allow-list
// and the folders their program runs from.
func (m Mode) ReadsAllowList() bool { return m == ModeWorkspace }

// System are the folders every sandboxed command may read (and run from).
// /sys and the host's /proc and /run are not among them: the view has its
// own /proc and an empty /run.
var System = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// Policy is what one command may do.
type Policy struct {
	Write []string // folders it may write (and read): the workspace, a private temp folder
	Read  []string // folders it may read besides System: the allow-list (toolchains, module caches)
	Run   []string // files (not their folders) it may read and run: proctor itself, as an agent's permission hook
	// Caches are toolchain caches it sees warm and copy-on-write, each
	// below a folder of Write.
	Caches []Cache
	// Etc is what of /etc it may read: what every user of the host may
	// (HostFiles; the command builds it when none is given).
	Etc Readable
	// Proxy is the command's one way out: the model proxy's unix socket,
	// which its init serves on 127.0.0.1:Port inside the command's network
	// namespace. nil: no way out at all.
	Proxy    *Proxy
	MaxFile  uint64 // bytes one file may grow to (RLIMIT_FSIZE); 0 no limit
	CPU      uint64 // CPU seconds of each process (RLIMIT_CPU); 0 no limit
	MaxProcs uint64 // processes and threads of the command and its children; 0 no limit
	// LandlockABI caps the Landlock ABI of the command's rules (LandlockCap):
	// 0 the kernel's newest, N at most N, NoLandlock none.
	LandlockABI int
	// ID is the host id (user and group) the command runs as when proctor
	// is root: its run's own (LeaseID). 0 is the range's last, for a
	// command of no run. A user who is not root runs commands as themselves.
	ID int
}

// Proxy is where a confined command reaches the model: a unix socket of the
// host, relayed to a TCP port on the loopback of the command's own network
// namespace (the port of the address the agent is given).
type Proxy struct {
	Socket string
	Port   int
}

// Main is the helper, `proctor sandbox-exec [flags] -- COMMAND…`: it
// parses the policy and runs the command as the init of namespaces of its
// own (enter), which confines itself and starts the command (initMain,
// with --init, which proctor passes). It returns the command's exit code,
// or an error when the command could not be run.
func Main(args []string, stderr io.Writer) (int, error) {
	in, err := parse(args, stderr)
	if err != nil {
		return 0, err
	}
	code, err := in.run(stderr)
	if err != nil {
		return 0, fmt.Errorf("sandbox-exec: %w", err)
	}
	return code, nil
}

// initSpec is what proctor tells the init of a command's namespaces, as
// one JSON value on a pipe (--spec-fd): its policy, and what it does
// besides putting up its walls. No path of it shows in the process list.
type initSpec struct {
	Policy Policy `json:"policy"`
	// Become is the id the init becomes once it has taken the host's
	// folders (proctor as root, or a user's subordinate id); -1 none.
	Become int `json:"become"`
	// OwnWrite: the init gives the folders the command may write, and its
	// caches' upper folders, to Become first (a subordinate id, which
	// proctor's user cannot give them to on the host).
	OwnWrite bool `json:"own_write,omitempty"`
	// Survey: try every wall, report how each went, start no command
	// (`proctor doctor`).
	Survey bool `json:"survey,omitempty"`
}

// invocation is the helper's command line.
type invocation struct {
	policy Policy
	init   bool
	become int // the id the init becomes; -1 none
	parent int // a pipe from proctor that closes when it dies; -1 none
	report int // a pipe to proctor the init says how the command started on; -1 none
	spec   int // a pipe proctor writes the initSpec to; -1 none (the flags are the policy)
	// surveying: try every wall, report how each went, start no command
	// (`proctor doctor`).
	surveying bool
	// mapped: a pipe proctor writes a byte to once it has mapped the
	// namespace's ids (newuidmap: a subordinate id); -1 none.
	mapped   int
	ownWrite bool // initSpec.OwnWrite
	// settling: give the folders named (argv) back to the user, from
	// inside a namespace of the user's ids; open opens them to all.
	settling, open bool
	argv           []string
}

func parse(args []string, stderr io.Writer) (invocation, error) {
	fs := flag.NewFlagSet("sandbox-exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var in invocation
	var write, read, runs, caches, etcDirs, etcFiles list
	fs.Var(&write, "write", "a `folder` the command may write")
	fs.Var(&read, "read", "a `folder` the command may read")
	fs.Var(&runs, "run", "a `file` the command may read and run (not its folder)")
	fs.Var(&etcDirs, "etc-dir", "a `folder` of /etc the command may read (set by proctor: what every user may read)")
	fs.Var(&etcFiles, "etc-file", "a `file` of /etc the command may read (set by proctor)")
	fs.Var(&caches, "cache", "a toolchain cache the command sees copy-on-write: `AT,UPPER[,LAYER…]`, the folder it sees, the folder its writes go to, and the read-only layers, the top one first")
	socket := fs.String("proxy-socket", "", "the model proxy's unix `socket`, relayed into the command's network namespace")
	port := fs.Int("proxy-port", 0, "the loopback `port` the proxy is relayed to")
	fs.Uint64Var(&in.policy.MaxFile, "max-file", 0, "RLIMIT_FSIZE in bytes")
	fs.Uint64Var(&in.policy.CPU, "cpu", 0, "RLIMIT_CPU in seconds")
	fs.Uint64Var(&in.policy.MaxProcs, "max-procs", 0, "processes and threads")
	fs.BoolVar(&in.surveying, "survey", false, "try every wall and report how each went on --report-fd; run no command (set by proctor doctor)")
	fs.BoolVar(&in.init, "init", false, "run as the init of the command's namespaces (set by proctor)")
	fs.IntVar(&in.parent, "parent-fd", -1, "a `file descriptor` (a pipe) that closes when proctor dies: the init then ends, and the command with it (set by proctor)")
	fs.IntVar(&in.report, "report-fd", -1, "a `file descriptor` (a pipe) the init writes how the command started to: the walls it had, or the one that failed (set by proctor)")
	fs.IntVar(&in.policy.LandlockABI, "landlock-abi", 0, "the newest Landlock `ABI` the rules use: 0 the kernel's, -1 none")
	fs.IntVar(&in.spec, "spec-fd", -1, "a `file descriptor` (a pipe) proctor writes the init's policy to, as JSON, in place of the flags above (set by proctor)")
	fs.IntVar(&in.mapped, "mapped-fd", -1, "a `file descriptor` (a pipe) proctor writes to once it has mapped the namespace's ids (set by proctor for a subordinate id)")
	fs.BoolVar(&in.settling, "settle", false, "give the folders after -- back to this user, with no setuid or setgid bit (set by proctor, in a namespace of the user's ids)")
	fs.BoolVar(&in.open, "open", false, "with --settle: open them to all (a toolchain cache layer)")
	if err := fs.Parse(args); err != nil {
		return in, err
	}
	if in.argv = fs.Args(); len(in.argv) == 0 && !in.settling {
		return in, errors.New("sandbox-exec: no command after --")
	}
	in.become = -1
	if in.spec >= 0 {
		if err := in.readSpec(); err != nil {
			return in, fmt.Errorf("sandbox-exec: %w", err)
		}
		return in, nil
	}
	in.policy.Write, in.policy.Read, in.policy.Run = write, read, runs
	in.policy.Etc = Readable{Dirs: etcDirs, Files: etcFiles}
	for _, v := range caches {
		c, err := parseCache(v)
		if err != nil {
			return in, fmt.Errorf("sandbox-exec: %w", err)
		}
		in.policy.Caches = append(in.policy.Caches, c)
	}
	if *socket != "" || *port != 0 {
		in.policy.Proxy = &Proxy{Socket: *socket, Port: *port}
	}
	if err := in.policy.check(); err != nil {
		return in, fmt.Errorf("sandbox-exec: %w", err)
	}
	return in, nil
}

// readSpec reads the initSpec proctor writes on the spec pipe.
func (in *invocation) readSpec() error {
	f := os.NewFile(uintptr(in.spec), "spec")
	defer f.Close()
	var spec initSpec
	if err := json.NewDecoder(io.LimitReader(f, 16<<20)).Decode(&spec); err != nil {
		return fmt.Errorf("read the policy from fd %d: %w", in.spec, err)
	}
	if err := spec.Policy.check(); err != nil {
		return err
	}
	in.policy, in.become, in.ownWrite, in.surveying = spec.Policy, spec.Become, spec.OwnWrite, spec.Survey
	return nil
}

// check refuses a policy the init cannot apply: a cache the overlay cannot
// take, a proxy without a socket or a port.
func (p Policy) check() error {
	for _, c := range p.Caches {
		if err := c.check(); err != nil {
			return err
		}
	}
	if p.Proxy != nil && (p.Proxy.Socket == "" || p.Proxy.Port < 1 || p.Proxy.Port > 65535) {
		return fmt.Errorf("--proxy-socket %q --proxy-port %d: want a socket and a port from 1 to 65535", p.Proxy.Socket, p.Proxy.Port)
	}
	return nil
}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
