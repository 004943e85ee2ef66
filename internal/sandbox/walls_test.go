package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/proctor-dev/proctor/internal/testutil"
)

// scene is the host an attack from inside the sandbox is tried against:
// listeners on the host's loopback (TCP, UDP, an abstract unix socket), a
// process to signal, a key in the test's session keyring, a file of the
// host in the read allow-list to change, a secret in a home folder.
type scene struct {
	ws, tmp, read, home string
	file                string // in read, owned by the user running the test
	tcpPort, udpPort    int
	abstract            string
	victim              *exec.Cmd
	accepted            atomic.Int32 // connections to the TCP and abstract listeners
	udp                 net.PacketConn
	policy              Policy
}

func newScene(t *testing.T) *scene {
	t.Helper()
	root := t.TempDir()
	os.Chmod(root, 0o755) // as a user who is not root, the folders are theirs anyway
	s := &scene{ws: filepath.Join(root, "ws"), tmp: filepath.Join(root, "tmp"), read: filepath.Join(root, "read"), home: filepath.Join(root, "home")}
	for _, d := range []string{s.ws, s.tmp, s.read, filepath.Join(s.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.file = filepath.Join(s.read, "tool")
	os.WriteFile(s.file, []byte("#!/bin/sh\n"), 0o755)
	os.Chmod(s.file, 0o755)
	os.WriteFile(filepath.Join(s.home, ".ssh", "id_test"), []byte("PRIVATE KEY\n"), 0o600)
	// A file anyone may write, as caches hold: the read-only mount alone
	// keeps the command from it.
	os.WriteFile(filepath.Join(s.read, "shared"), nil, 0o666)
	os.Chmod(filepath.Join(s.read, "shared"), 0o666)
	tcp := testutil.Listener(t, "tcp", "127.0.0.1:0", &s.accepted)
	s.tcpPort = tcp.Addr().(*net.TCPAddr).Port
	s.abstract = "@proctor-walls-" + strconv.Itoa(os.Getpid())
	testutil.Listener(t, "unix", s.abstract, &s.accepted)
	var err error
	if s.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.udp.Close() })
	s.udpPort = s.udp.LocalAddr().(*net.UDPAddr).Port
	s.victim = exec.Command("sleep", "600")
	if err := s.victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.victim.Process.Kill(); s.victim.Wait() })
	s.policy = Policy{Write: []string{s.ws, s.tmp}, Read: []string{s.read}}
	return s
}

// perl is a perl program as a shell command.
func perl(program string) string { return "perl -e '" + program + "'" }

// errnoIsNot is a perl program that makes a system call and exits 0
// unless it failed with the errno a wall answers with.
func errnoIsNot(call string, errno syscall.Errno) string {
	return perl(fmt.Sprintf(`my $r = %s; exit(($r == -1 && $!+0 == %d) ? 1 : 0)`, call, int(errno)))
}

// attack is an escape tried from inside: script exits 0 when it worked
// (and, for one whose effect is on the host, escaped says so); stoppedBy
// are the walls that stop it alone.
type attack struct {
	name, script string
	escaped      func(s *scene) bool // nil: the script's exit status alone
	stoppedBy    []string
	landlockABI  int // the oldest Landlock ABI that stops it alone (0: 1)
	undo         func(s *scene)
	inside       bool // tried only inside a sandbox
}

func (s *scene) attacks() []attack {
	modeOf := func(p string) os.FileMode { info, _ := os.Stat(p); return info.Mode() }
	timeOf := func(p string) time.Time { info, _ := os.Stat(p); return info.ModTime() }
	mode, mtime := modeOf(s.file), timeOf(s.file)
	restore := func(s *scene) {
		os.Chmod(s.file, 0o755)
		os.Chtimes(s.file, mtime, mtime)
		unix.Removexattr(s.file, "user.proctor")
	}
	connectInet := func(proto int) string {
		return perl(fmt.Sprintf(`use Socket; socket(S, PF_INET, SOCK_STREAM, %d) or exit 1; connect(S, pack_sockaddr_in(%d, inet_aton("127.0.0.1"))) or exit 1`, proto, s.tcpPort))
	}
	ns, seccomp, landlock := "namespaces", "seccomp", "landlock"
	return []attack{
		{name: "connect over TCP to a port of the host", script: connectInet(0), stoppedBy: []string{ns, landlock}, landlockABI: 4},
		// Landlock's TCP rule does not cover MPTCP (protocol 262).
		{name: "connect over MPTCP to a port of the host", script: connectInet(262), stoppedBy: []string{ns, seccomp}},
		{name: "send a datagram to the host", script: "echo escaped > /dev/udp/127.0.0.1/" + strconv.Itoa(s.udpPort),
			escaped: func(s *scene) bool {
				s.udp.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				buf := make([]byte, 64)
				n, _, err := s.udp.ReadFrom(buf)
				return err == nil && strings.Contains(string(buf[:n]), "escaped")
			}, stoppedBy: []string{ns}},
		{name: "connect to an abstract unix socket of the host",
			script:    perl(`use Socket; socket(S, PF_UNIX, SOCK_STREAM, 0) or exit 1; connect(S, pack_sockaddr_un("\0` + s.abstract[1:] + `")) or exit 1`),
			stoppedBy: []string{ns, landlock}, landlockABI: 6},
		{name: "read the host's sockets in /proc/net", script: fmt.Sprintf("grep -qi ':%04X ' /proc/net/tcp", s.tcpPort), stoppedBy: []string{ns}},
		{name: "read /sys", script: "ls /sys/class/net | grep -q .", stoppedBy: []string{ns, landlock}},
		{name: "make a host file setuid", script: "chmod 4755 " + s.file + " && [ -u " + s.file + " ]",
			escaped: func(s *scene) bool { return modeOf(s.file) != mode }, stoppedBy: []string{ns}, undo: restore},
		// Its own file: no namespace stops it; seccomp does, and what a run
		// wrote loses the bit as the run ends (Reclaim) whatever made it.
		{name: "make a file of its own setuid", script: "cp /bin/sh suid && chmod 4755 suid && [ -u suid ]", stoppedBy: []string{seccomp},
			undo: func(s *scene) { os.Remove(filepath.Join(s.ws, "suid")) }},
		{name: "create a setgid file", script: perl(`use Fcntl; sysopen(F, "sgid", O_CREAT|O_WRONLY, 02755) or exit 1; close F; exit((stat "sgid")[2] & 02000 ? 0 : 1)`), stoppedBy: []string{seccomp},
			undo: func(s *scene) { os.Remove(filepath.Join(s.ws, "sgid")) }},
		{name: "change a host file's times", script: "touch -d 2001-01-01 " + s.file,
			escaped: func(s *scene) bool { return !timeOf(s.file).Equal(mtime) }, stoppedBy: []string{ns}, undo: restore},
		{name: "set an attribute on a host file", script: perl(fmt.Sprintf(`my ($p, $n, $v) = ("%s", "user.proctor", "x"); exit(syscall(%d, $p, $n, $v, 1, 0) == 0 ? 0 : 1)`, s.file, unix.SYS_SETXATTR)),
			escaped: func(s *scene) bool { _, err := unix.Getxattr(s.file, "user.proctor", nil); return err == nil }, stoppedBy: []string{ns}, undo: restore},
		{name: "write into the read allow-list", script: "echo x > " + filepath.Join(s.read, "planted"), stoppedBy: []string{ns, landlock},
			undo: func(s *scene) { os.Remove(filepath.Join(s.read, "planted")) }},
		{name: "change a file anyone may write in the read allow-list", script: "echo x >> " + filepath.Join(s.read, "shared"), stoppedBy: []string{ns, landlock},
			undo: func(s *scene) { os.Truncate(filepath.Join(s.read, "shared"), 0) }},
		{name: "write the home folder", script: "echo x > " + filepath.Join(s.home, "planted"), stoppedBy: []string{ns, landlock}},
		{name: "read a planted ssh key", script: "grep -q PRIVATE " + filepath.Join(s.home, ".ssh", "id_test"), stoppedBy: []string{ns, landlock}},
		// KEYCTL_SEARCH (10) of the session keyring (-3) for the test's key.
		{name: "read the launching process's session keyring", script: perl(fmt.Sprintf(`my ($t, $d) = ("user", "proctor-walls"); exit(syscall(%d, 10, -3, $t, $d, 0) > 0 ? 0 : 1)`, unix.SYS_KEYCTL)),
			stoppedBy: []string{ns, seccomp}},
		// add_key to the user keyring (-4), which outlives the command.
		{name: "add a key to the user keyring", script: perl(fmt.Sprintf(`my ($t, $d, $v) = ("user", "proctor-planted", "x"); exit(syscall(%d, $t, $d, $v, 1, -4) > 0 ? 0 : 1)`, unix.SYS_ADD_KEY)),
			stoppedBy: []string{seccomp}},
		{name: "stop a process of the host", script: "kill -STOP " + strconv.Itoa(s.victim.Process.Pid),
			escaped: func(s *scene) bool { return procState(s.victim.Process.Pid) == "T" }, stoppedBy: []string{ns, landlock}, landlockABI: 6,
			undo: func(s *scene) { s.victim.Process.Signal(syscall.SIGCONT) }},
		{name: "make a user namespace", script: "unshare -U true", stoppedBy: []string{seccomp}},
		{name: "set up io_uring", script: errnoIsNot(fmt.Sprintf(`do { my $p = "\0" x 120; syscall(%d, 1, $p) }`, unix.SYS_IO_URING_SETUP), unix.EPERM), stoppedBy: []string{seccomp}},
		{name: "open a perf event", script: errnoIsNot(fmt.Sprintf(`syscall(%d, 0, 0, -1, -1, 0)`, unix.SYS_PERF_EVENT_OPEN), unix.EPERM), stoppedBy: []string{seccomp}},
		{name: "make a userfaultfd", script: errnoIsNot(fmt.Sprintf(`syscall(%d, 0)`, unix.SYS_USERFAULTFD), unix.EPERM), stoppedBy: []string{seccomp}},
		{name: "push input into a terminal", script: errnoIsNot(`do { my $c = "x"; ioctl(STDIN, 0x5412, $c) ? 0 : -1 }`, unix.EPERM), stoppedBy: []string{seccomp}},
		{name: "mount a file system", script: errnoIsNot(fmt.Sprintf(`do { my ($s, $t, $f) = ("none", "/proctor-no-such-folder", "tmpfs"); syscall(%d, $s, $t, $f, 0, 0) }`, unix.SYS_MOUNT), unix.EPERM), stoppedBy: []string{seccomp}},
		{name: "open a raw socket", script: perl(`use Socket; socket(S, PF_INET, SOCK_RAW, 1) or exit 1`), stoppedBy: []string{seccomp}},
		{name: "open a packet socket", script: perl(`socket(S, 17, 3, 0) or exit 1`), stoppedBy: []string{seccomp}},
		// Inside only: PID 1 is the sandbox's init (no try with no wall: on
		// the host it is the host's init).
		{name: "trace the sandbox's init", script: errnoIsNot(fmt.Sprintf(`syscall(%d, 16, 1, 0, 0)`, unix.SYS_PTRACE), unix.EPERM), stoppedBy: []string{ns}, inside: true},
		{name: "run as root on the host", script: `[ "$(id -u)" = 0 ]`, stoppedBy: []string{ns}},
	}
}

// run runs script under one wall ("none", "all", "namespaces", "seccomp"
// or "landlock") and reports whether the attack worked.
func (s *scene) run(t *testing.T, wall string, a attack) (bool, string) {
	t.Helper()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + s.tmp}
	var out []byte
	var code int
	switch wall {
	case "none":
		cmd := exec.Command("bash", "-c", a.script)
		cmd.Dir, cmd.Env = s.ws, env
		out, _ = cmd.CombinedOutput()
		code = cmd.ProcessState.ExitCode()
	case "all", "namespaces":
		if wall == "namespaces" {
			env = append(env, "PROCTOR_SANDBOX_TEST_WALL=namespaces")
		}
		res, err := Command{Argv: []string{"bash", "-c", a.script}, Dir: s.ws, Env: env, Confine: &Confinement{Policy: s.policy, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		out, code = res.Output, res.Code
	default:
		cmd := exec.Command(os.Args[0], append(append([]string{"sandbox-exec"}, policyFlags(s.policy)...), "--", "bash", "-c", a.script)...)
		cmd.Dir, cmd.Env = s.ws, append(env, "PROCTOR_SANDBOX_TEST_WALL="+wall)
		out, _ = cmd.CombinedOutput()
		code = cmd.ProcessState.ExitCode()
	}
	if code == 125 {
		t.Fatalf("%s under %s: the sandbox did not start: %s", a.name, wall, out)
	}
	worked := code == 0
	if a.escaped != nil {
		worked = a.escaped(s)
	}
	if a.undo != nil {
		a.undo(s)
	}
	return worked, string(out)
}

// Every attack works with no wall (else the test proves nothing and the
// attack is skipped, saying why), fails in the sandbox, and fails under
// each wall that is to stop it alone: the namespaces without Landlock and
// seccomp, seccomp alone, Landlock alone (at an ABI that has its rule).
// It runs at the kernel's Landlock ABI, and again at ABI 2 (Linux 6.1,
// Debian 12's kernel) and with no Landlock at all: the namespaces and
// seccomp stop every attack without it.
func TestEachWallStopsItsAttacksAlone(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	seen := map[int]bool{}
	for _, cap := range []int{0, 2, NoLandlock} {
		if seen[landlockABI(cap)] {
			continue // the kernel's own ABI is 2 (Linux 6.1 to 6.6)
		}
		seen[landlockABI(cap)] = true
		t.Run(fmt.Sprintf("landlock=%d", landlockABI(cap)), func(t *testing.T) {
			s := newScene(t)
			s.policy.LandlockABI = cap
			abi := landlockABI(cap)
			for _, a := range s.attacks() {
				t.Run(a.name, func(t *testing.T) {
					holdKey(t)
					// (An attack on the sandbox's init is not tried with no
					// wall: PID 1 there is the host's init, or in a container
					// this test itself.)
					if !a.inside {
						if worked, out := s.run(t, "none", a); !worked {
							t.Skipf("fails with no wall at all, so nothing here proves a wall stops it: %s", out)
						}
					}
					time.Sleep(100 * time.Millisecond) // the listeners count what the try with no wall sent
					s.accepted.Store(0)
					for _, wall := range append([]string{"all"}, a.stoppedBy...) {
						if wall == "landlock" && abi < max(a.landlockABI, 1) {
							continue // Landlock at this ABI has no rule for it; the other walls hold
						}
						if worked, out := s.run(t, wall, a); worked {
							t.Errorf("worked under %s: %s", wall, out)
						}
					}
					if n := s.accepted.Load(); n > 0 {
						t.Errorf("%d connections reached the host's listeners", n)
					}
				})
			}
		})
	}
}

// holdKey gives the test's thread a session keyring of its own with a key
// in it (a session keyring is a thread's, and a command started from the
// thread inherits it), as a process started from a login has. The thread
// is never unlocked: it ends with the test's goroutine.
func holdKey(t *testing.T) {
	runtime.LockOSThread()
	if err := newSessionKeyring(); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.AddKey("user", "proctor-walls", []byte("secret"), unix.KEY_SPEC_SESSION_KEYRING); errors.Is(err, unix.EPERM) {
		// A seccomp profile around the test (Docker's default refuses
		// add_key) keeps keys from everyone: the keyring attacks then fail
		// with no wall, and say so.
		return
	} else if err != nil {
		t.Fatalf("add a key to the session keyring: %v", err)
	}
}

// procState is the state letter of a process (S sleeping, T stopped), or
// "" when it is gone.
func procState(pid int) string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	_, after, _ := strings.Cut(string(raw), ") ")
	state, _, _ := strings.Cut(after, " ")
	return state
}

// Work runs inside: the command writes its workspace and temp folder as
// its own, finds itself in /etc/passwd, reaches itself on its loopback,
// and reaches the model proxy — only it — on the relayed port.
func TestWorkRunsInside(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	s := newScene(t)
	sockDir := t.TempDir()
	socket := filepath.Join(sockDir, "proxy.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(socket, 0o666)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 1024)
				n, _ := c.Read(buf)
				if bytes.HasPrefix(buf[:n], []byte("GET /v1/models")) {
					c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nproxied\n"))
				}
			}()
		}
	}()
	// At this kernel's Landlock ABI, at Debian 12's (2: no TCP rules) and
	// with none: the proxy's relay is reached through each.
	for _, cap := range []int{0, 2, NoLandlock} {
		p := s.policy
		p.LandlockABI = cap
		p.Proxy = &Proxy{Socket: socket, Port: 40000 + os.Getpid()%20000}
		// A policy that names the host's /run (a toolchain under
		// /run/current-system would) still gets a /run of the view's own.
		p.Read = append(slices.Clone(p.Read), "/run")
		workInside(t, s, p)
	}
}

// workInside runs real work under p and checks it went as it should.
func workInside(t *testing.T, s *scene, p Policy) {
	t.Helper()
	script := `set -e
trap 'echo "failed: $BASH_COMMAND (line $LINENO)"' ERR
echo a > a.txt; mkdir -p "$HOME/cache"; echo b > "$HOME/cache/b"
[ "$(stat -c %u a.txt)" = "$(id -u)" ]
getent passwd "$(id -u)" | grep -q .
# the view's /run is its own: nothing is mounted there but the proxy's socket
mounts="$(awk '{print $5}' /proc/self/mountinfo | grep -E '^/run(/|$)' | grep -vx /run/proctor/proxy.sock || true)"
[ -z "$mounts" ] || { echo "the view mounts $mounts"; exit 1; }
# the init is not dumpable: nothing of the command reads its memory or
# environment (as an ordinary user the init and the command share an id)
! cat /proc/1/environ >/dev/null 2>&1 || { echo "the init's environment can be read"; exit 1; }
exec 3<>/dev/tcp/127.0.0.1/` + strconv.Itoa(p.Proxy.Port) + `
printf 'GET /v1/models HTTP/1.0\r\n\r\n' >&3
grep -q proxied <&3
echo works`
	res, err := Command{Argv: []string{"bash", "-c", script}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + s.tmp},
		Confine: &Confinement{Policy: p, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
	if err != nil || res.Code != 0 || !strings.Contains(string(res.Output), "works") {
		t.Fatalf("%v %d: %s", err, res.Code, res.Output)
	}
	uid, _ := commandID()
	info, err := os.Stat(filepath.Join(s.ws, "a.txt"))
	if err != nil || int(info.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Fatalf("the file the command wrote is not its id's (%d) on the host: %v", uid, err)
	}
}

// Each command has a process budget of its own: a command holding many
// processes leaves another its whole budget, and a small budget binds only
// its own command — whoever runs proctor, root included.
func TestProcessBudgetsAreEachCommandsOwn(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	s := newScene(t)
	start := func(max uint64, script string) *exec.Cmd {
		p := s.policy
		p.MaxProcs = max
		c := Command{Argv: []string{"sh", "-c", script}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin"}, Confine: &Confinement{Policy: p, Helper: os.Args[0]}}
		cmd, alive, report, _, err := c.build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { alive.Close(); report.Close() })
		return cmd
	}
	marker := strconv.Itoa(30000 + os.Getpid()%9999)
	// A holds 200 processes under a budget of 300…
	big := start(300, "for i in $(seq 200); do sleep "+marker+" & done; wait")
	if err := big.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-big.Process.Pid, syscall.SIGKILL); big.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for countArg(marker) < 200 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := countArg(marker); n < 200 {
		t.Fatalf("the first command holds %d processes, want 200", n)
	}
	// …while B, with a budget of 40, starts 30, and cannot start 60.
	run := func(max uint64, n int) error {
		cmd := start(max, fmt.Sprintf("for i in $(seq %d); do sleep 1 & done; wait", n))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%w: %s", err, out.String())
		}
		return nil
	}
	if err := run(40, 30); err != nil {
		t.Fatalf("a command within its own budget failed beside another that holds 200 processes: %v", err)
	}
	if err := run(40, 60); err == nil {
		t.Fatal("a command started 60 processes on a budget of 40")
	}
	var exit *exec.ExitError
	if err := run(500, 250); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	} else if err != nil {
		t.Fatalf("a budget of 40 elsewhere capped this command's 500: %v", err)
	}
}

// countArg counts the live processes with arg among their arguments.
func countArg(arg string) int {
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		raw, err := os.ReadFile(c)
		if err == nil && slices.Contains(strings.Split(string(raw), "\x00"), arg) {
			n++
		}
	}
	return n
}

// A command's time limit counts from its start: what proctor does first to
// confine it (here a slow Start) is not the command's time, and a context
// that ends before the command starts is no wall's failure.
func TestTheTimeLimitCountsFromTheCommandsStart(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	s := newScene(t)
	slow := &Confinement{Policy: s.policy, Helper: os.Args[0], Start: func(*Policy) error {
		time.Sleep(1500 * time.Millisecond)
		return nil
	}}
	res, err := Command{Argv: []string{"true"}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin"}, Confine: slow, Timeout: time.Second}.Run(context.Background())
	if err != nil || res.TimedOut || res.Code != 0 {
		t.Fatalf("a command whose confinement took longer than its limit: %+v %v", res, err)
	}
	res, err = Command{Argv: []string{"sleep", "5"}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin"}, Confine: &Confinement{Policy: s.policy, Helper: os.Args[0]}, Timeout: 300 * time.Millisecond}.Run(context.Background())
	if err != nil || !res.TimedOut {
		t.Fatalf("a command past its limit: %+v %v", res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = Command{Argv: []string{"true"}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin"}, Confine: slow}.Run(ctx)
	var se *StartError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &se) {
		t.Fatalf("a run stopped before its command started: %v, want the context's end and no wall", err)
	}
}
