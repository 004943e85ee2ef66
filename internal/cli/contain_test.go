package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/testutil"
	"golang.org/x/sys/unix"
)

// hostileAgents are the ways an agent's command runs in a run: as
// proctor's own agent's run_command (approved), and as an external agent.
// Each runs `sh attack.sh` in its workspace (a file of the source): the
// model script is hostileScript.
var hostileAgents = []struct {
	name string
	args func(script string) []string
}{
	{"run_command", func(script string) []string {
		return []string{"--script", script, "--allow", "sh attack.sh"}
	}},
	{"external agent", func(script string) []string {
		return []string{"--script", script, "--agent", "command", "--", "sh", "attack.sh"}
	}},
}

// hostileScript is a model script whose model asks to run attack.sh.
const hostileScript = "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"sh attack.sh\"}}]}\n  - reply: {content: done}\n"

// The agent plays an attacker in its own workspace: it sets git config
// that runs a program (core.fsmonitor; a clean filter named by
// .gitattributes) and a diff format of its own (diff.noprefix). proctor's
// own git, which runs unconfined after the agent, runs none of it, and the
// diff it records is the one format it applies.
func TestTheAgentsGitConfigRunsNothingOutsideTheSandbox(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	out := t.TempDir()
	marker := filepath.Join(out, "pwned")
	attack := `printf '#!/bin/sh\necho ran >> ` + marker + `\ncat\n' > "$PWD/.p"; chmod +x "$PWD/.p"; ` +
		`git config core.fsmonitor "$PWD/.p"; git config filter.x.clean "$PWD/.p"; git config filter.x.required true; ` +
		`echo '* filter=x' > .gitattributes; git config diff.noprefix true; echo changed >> a.txt`
	dir := t.TempDir()
	script := filepath.Join(dir, "model.yaml")
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
	for _, mode := range []string{"workspace", "strict"} {
		for _, a := range hostileAgents {
			t.Run(mode+"/"+a.name, func(t *testing.T) {
				os.Remove(marker)
				data, src := t.TempDir(), t.TempDir()
				writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": attack})
				args := append([]string{"run", "--dir", src, "--task", "change a.txt", "--sandbox", mode}, a.args(script)...)
				r := invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")}, args...)
				if r.code != ExitOK {
					t.Fatalf("%+v", r)
				}
				if got, err := os.ReadFile(marker); err == nil {
					t.Fatalf("proctor's git ran the agent's program outside the sandbox: %s", got)
				}
				diffs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "diff.patch"))
				if len(diffs) != 1 {
					t.Fatalf("%d diffs", len(diffs))
				}
				diff, _ := os.ReadFile(diffs[0])
				if !strings.Contains(string(diff), "diff --git a/a.txt b/a.txt\n") || !strings.Contains(string(diff), "+changed\n") {
					t.Fatalf("the recorded diff is not in proctor's format:\n%s", diff)
				}
			})
		}
	}
}

// runHostile runs attack (a shell script, attack.sh in the source) as the
// agent a, in mode, and returns the data folder and the workspace.
func runHostile(t *testing.T, mode string, a int, attack string) (data, ws string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "model.yaml")
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
	data, src := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": attack})
	args := append([]string{"run", "--dir", src, "--task", "attack", "--sandbox", mode}, hostileAgents[a].args(script)...)
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH"), "PROCTOR_SANDBOX_READ": os.Getenv("PROCTOR_SANDBOX_READ")}, args...)
	if r.code != ExitOK && r.code != ExitProblems {
		t.Fatalf("%+v", r)
	}
	if key := os.Getenv("PROCTOR_TEST_PROVIDER_KEY"); key != "" && (strings.Contains(r.stdout+r.stderr, key) || strings.Contains(r.stdout+r.stderr, reverse(key))) {
		t.Errorf("the provider key from proctor's environment is in proctor's output:\n%s%s", r.stdout, r.stderr)
	}
	runs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "workspace"))
	if len(runs) != 1 {
		t.Fatalf("%d workspaces: %+v", len(runs), r)
	}
	return data, runs[0]
}

// worked lists the marker files (*.worked) the attack left in the
// workspace: each is an escape that succeeded.
func worked(ws string) []string {
	m, _ := filepath.Glob(filepath.Join(ws, "*.worked"))
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// hostile is an attack from inside the sandbox and what it is tried
// against: a provider key in proctor's environment (readable through
// /proc), a process outside (to signal), unix sockets outside (abstract
// and by path), and a marker its leftover processes carry.
type hostile struct {
	secret, marker, attack string
	victim                 *exec.Cmd
	accepted               *atomic.Int32
	udp                    net.PacketConn
	tool                   string // a host file in the read allow-list
	toolTime               time.Time
}

// newHostile sets the scene and writes the attack: it reads proctor's
// environment through /proc, uses root's capabilities (a device node, a
// raw socket, /etc/shadow), signals the process outside, connects to the
// sockets outside, leaves processes behind (nohup, setsid, many) and sets
// git config that would run a program outside (core.fsmonitor, a clean
// filter); reaches the host's loopback over TCP, MPTCP and UDP and reads
// its sockets in /proc/net and /sys; changes the mode, times and
// attributes of a host file in the read allow-list and of proctor's own
// repository of the workspace (workspace.git/config); runs as root, reads
// and writes keyrings, makes a user namespace; each escape that works
// leaves NAME.worked in the workspace.
func newHostile(t *testing.T) *hostile {
	h := &hostile{secret: "sk-contain-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-provider-key", accepted: new(atomic.Int32)}
	t.Setenv("PROCTOR_TEST_PROVIDER_KEY", h.secret)
	h.victim = exec.Command("sleep", "600")
	if err := h.victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.victim.Process.Kill(); h.victim.Wait() })
	sockDir := t.TempDir()
	abstract := "@proctor-contain-" + strconv.Itoa(os.Getpid())
	for _, addr := range []string{abstract, filepath.Join(sockDir, "outside.sock")} {
		testutil.Listener(t, "unix", addr, h.accepted)
	}
	tcp := testutil.Listener(t, "tcp", "127.0.0.1:0", h.accepted)
	tcpPort := tcp.Addr().(*net.TCPAddr).Port
	var err error
	if h.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.udp.Close() })
	// The read allow-list holds a file of the host's.
	allowed := t.TempDir()
	os.Chmod(allowed, 0o755)
	h.tool = filepath.Join(allowed, "tool")
	os.WriteFile(h.tool, []byte("#!/bin/sh\n"), 0o755)
	info, _ := os.Stat(h.tool)
	h.toolTime = info.ModTime()
	t.Setenv("PROCTOR_SANDBOX_READ", allowed)
	h.marker = strconv.Itoa(40000 + os.Getpid()%9999)
	connect := func(addr, name string) string {
		return `perl -e 'use Socket; socket(S, PF_UNIX, SOCK_STREAM, 0) or die; connect(S, pack_sockaddr_un("` + addr + `")) or exit 1' && touch ` + name + ".worked\n"
	}
	outside := filepath.Join(t.TempDir(), "pwned")
	h.attack = "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null | grep PROCTOR_TEST_PROVIDER | rev > leak.txt\n" +
		"grep -q . leak.txt && touch environ.worked\n" +
		"mknod dev c 1 3 && touch mknod.worked\n" +
		"perl -e 'use Socket; socket(S, PF_INET, SOCK_RAW, 1) or exit 1' && touch rawsocket.worked\n" +
		"cat /etc/shadow > /dev/null && touch shadow.worked\n" +
		"kill -STOP " + strconv.Itoa(h.victim.Process.Pid) + " && touch signal.worked\n" +
		connect(`\0`+abstract[1:], "abstract") +
		connect(filepath.Join(sockDir, "outside.sock"), "pathsocket") +
		"(nohup sleep " + h.marker + " >/dev/null 2>&1 &)\n" +
		"setsid sleep " + h.marker + " >/dev/null 2>&1 &\n" +
		"for i in $(seq 40); do (sleep " + h.marker + " &); done\n" +
		`printf '#!/bin/sh\ntouch ` + outside + `\ncat\n' > "$PWD/.p"; chmod +x "$PWD/.p"; git config core.fsmonitor "$PWD/.p"; ` +
		`git config filter.x.clean "$PWD/.p"; echo '* filter=x' > .gitattributes` + "\n" +
		fmt.Sprintf("perl -e 'use Socket; socket(S, PF_INET, SOCK_STREAM, 0) or exit 1; connect(S, pack_sockaddr_in(%d, inet_aton(\"127.0.0.1\"))) or exit 1' && touch tcp.worked\n", tcpPort) +
		fmt.Sprintf("perl -e 'use Socket; socket(S, PF_INET, SOCK_STREAM, 262) or exit 1; connect(S, pack_sockaddr_in(%d, inet_aton(\"127.0.0.1\"))) or exit 1' && touch mptcp.worked\n", tcpPort) +
		fmt.Sprintf(`perl -e 'use Socket; socket(S, PF_INET, SOCK_DGRAM, 0) or exit 1; send(S, "escaped", 0, pack_sockaddr_in(%d, inet_aton("127.0.0.1")))'`+"\n", h.udp.LocalAddr().(*net.UDPAddr).Port) +
		fmt.Sprintf("grep -qi ':%04X ' /proc/net/tcp /proc/net/tcp6 && touch procnet.worked\n", tcpPort) +
		"ls /sys/class/net | grep -q . && touch sys.worked\n" +
		"chmod 4755 " + h.tool + " && touch setuid.worked\n" +
		"touch -d 2001-01-01 " + h.tool + " && touch utime.worked\n" +
		fmt.Sprintf(`perl -e 'my ($p, $n, $v) = ("%s", "user.proctor", "x"); exit(syscall(%d, $p, $n, $v, 1, 0) == 0 ? 0 : 1)' && touch xattr.worked`+"\n", h.tool, unix.SYS_SETXATTR) +
		"chmod 777 ../workspace.git/config && touch gitconfig.worked\n" +
		`[ "$(id -u)" = 0 ] && touch root.worked` + "\n" +
		fmt.Sprintf(`perl -e 'exit(syscall(%d, 0, -3, 0) > 0 ? 0 : 1)' && touch sessionkeyring.worked`+"\n", unix.SYS_KEYCTL) +
		fmt.Sprintf(`perl -e 'my ($t, $d, $v) = ("user", "proctor-planted", "x"); exit(syscall(%d, $t, $d, $v, 1, -4) > 0 ? 0 : 1)' && touch userkeyring.worked`+"\n", unix.SYS_ADD_KEY) +
		"unshare -U true && touch userns.worked\n" +
		"echo changed >> a.txt\n"
	t.Cleanup(func() {
		if _, err := os.Stat(outside); err == nil {
			t.Error("proctor's git ran the agent's program outside the sandbox")
		}
	})
	return h
}

// check asserts that no escape worked in the run of data whose workspace
// is ws, and undoes what one did.
func (h *hostile) check(t *testing.T, data, ws string) {
	t.Helper()
	if got := worked(ws); len(got) > 0 {
		t.Errorf("escapes that worked: %v", got)
	}
	if n := h.accepted.Swap(0); n > 0 {
		t.Errorf("%d connections reached sockets outside", n)
	}
	h.udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, _, err := h.udp.ReadFrom(make([]byte, 64)); err == nil {
		t.Errorf("a datagram of %d bytes reached the host", n)
	}
	if info, err := os.Stat(h.tool); err != nil || info.Mode() != 0o755 || !info.ModTime().Equal(h.toolTime) {
		t.Errorf("the host's file in the read allow-list changed: %v %v", info.Mode(), info.ModTime())
		os.Chmod(h.tool, 0o755)
	}
	if _, err := unix.Getxattr(h.tool, "user.proctor", nil); err == nil {
		t.Error("the host's file in the read allow-list has an attribute the command set")
		unix.Removexattr(h.tool, "user.proctor")
	}
	if info, err := os.Stat(filepath.Join(filepath.Dir(ws), "workspace.git", "config")); err != nil || info.Mode().Perm()&0o022 != 0 {
		t.Errorf("proctor's repository of the workspace changed mode: %v %v", info.Mode(), err)
	}
	if state := procState(h.victim.Process.Pid); state != "S" {
		t.Errorf("the process outside is in state %q after the attack", state)
	}
	syscall.Kill(h.victim.Process.Pid, syscall.SIGCONT)
	if left := processesWith(h.marker); len(left) > 0 {
		t.Errorf("%d processes of the run outlived it: %v", len(left), left)
	}
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		raw, _ := os.ReadFile(p)
		if bytes.Contains(raw, []byte(h.secret)) || bytes.Contains(raw, []byte(reverse(h.secret))) {
			t.Errorf("the provider key from proctor's environment is in %s", p)
		}
		return nil
	})
}

// The agent plays an attacker inside the sandbox (newHostile), as
// proctor's own agent's command and as an external agent, in workspace and
// strict mode, through proctor run. None of it works.
func TestTheSandboxContainsAHostileAgent(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	h := newHostile(t)
	// With the sandbox off the attack works: the test can fail.
	t.Run("off", func(t *testing.T) {
		_, ws := runHostile(t, "off", 0, h.attack)
		got := worked(ws)
		wants := []string{"tcp.worked", "mptcp.worked", "procnet.worked", "sys.worked", "setuid.worked", "utime.worked", "gitconfig.worked", "environ.worked"}
		// A seccomp profile around the test (Docker's default refuses
		// add_key) keeps keys from everyone, with the sandbox off too.
		if _, err := unix.AddKey("user", "proctor-probe", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING); !errors.Is(err, unix.EPERM) {
			wants = append(wants, "userkeyring.worked")
		}
		for _, want := range wants {
			if !slices.Contains(got, want) {
				t.Errorf("%s: the attack does not work even with the sandbox off (%v)", want, got)
			}
		}
		os.Chmod(h.tool, 0o755)
		os.Chtimes(h.tool, h.toolTime, h.toolTime)
		unix.Removexattr(h.tool, "user.proctor")
		h.accepted.Store(0)
		h.udp.SetReadDeadline(time.Now().Add(time.Second))
		if _, _, err := h.udp.ReadFrom(make([]byte, 64)); err != nil {
			t.Errorf("the datagram did not reach the host even with the sandbox off: %v", err)
		}
		syscall.Kill(h.victim.Process.Pid, syscall.SIGCONT)
		for _, p := range processesWith(h.marker) {
			pid, _, _ := strings.Cut(p, ":")
			n, _ := strconv.Atoi(pid)
			syscall.Kill(n, syscall.SIGKILL)
		}
	})
	for _, mode := range []string{"workspace", "strict"} {
		for a := range hostileAgents {
			t.Run(mode+"/"+hostileAgents[a].name, func(t *testing.T) {
				data, ws := runHostile(t, mode, a, h.attack)
				h.check(t, data, ws)
			})
		}
	}
}

// The same attack through proctor serve: runs launched with the API, as
// proctor's own agent and as an agent of agents.yaml, in workspace and
// strict mode.
func TestTheSandboxContainsAHostileAgentThroughServe(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	h := newHostile(t)
	data, roots := t.TempDir(), t.TempDir()
	writeTree(t, roots, map[string]string{"src/a.txt": "old\n", "src/attack.sh": h.attack, "model.yaml": hostileScript,
		"agents.yaml": "agents:\n  - {name: hostile, kind: command, command: [sh, attack.sh]}\n"})
	_, srv := serveChild(t, data, roots, "--agents", filepath.Join(roots, "agents.yaml"))
	for _, mode := range []string{"workspace", "strict"} {
		for _, agent := range []string{"native", "hostile"} {
			t.Run(mode+"/"+agent, func(t *testing.T) {
				code, out := srv.postJSON(t, "/api/v1/runs", `{"path": "src", "task": "attack", "script": "model.yaml", "agent": "`+agent+`", "sandbox": "`+mode+`", "allow": ["sh attack.sh"]}`)
				if code != http.StatusAccepted {
					t.Fatalf("launch: %d %v", code, out)
				}
				id, _ := out["run_id"].(string)
				rc := awaitStatus(t, data, id, bundle.StatusAwaitingReview)
				if rc.Sandbox != mode {
					t.Fatalf("the run's sandbox is %q", rc.Sandbox)
				}
				h.check(t, data, filepath.Join(data, "runs", id, "workspace"))
				for _, page := range []string{"/runs/" + id, "/runs/" + id + "/files/diff.patch", "/runs/" + id + "/files/transcript.md", "/api/v1/runs/" + id} {
					resp, err := srv.get(t, page)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(h.secret)) || bytes.Contains(body, []byte(reverse(h.secret))) {
						t.Errorf("%s: %d, or the provider key is on it", page, resp.StatusCode)
					}
				}
			})
		}
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

// processesWith lists the live processes (not zombies) whose arguments
// include arg.
func processesWith(arg string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		raw, err := os.ReadFile(c)
		if err != nil || !slices.Contains(strings.Split(string(raw), "\x00"), arg) {
			continue
		}
		pid := filepath.Base(filepath.Dir(c))
		n, _ := strconv.Atoi(pid)
		if s := procState(n); s != "" && s != "Z" {
			out = append(out, pid+":"+strings.ReplaceAll(string(raw), "\x00", " "))
		}
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// A proctor killed with -9 leaves nothing of its runs running: the
// external agent, what it started (nohup, setsid) and its loop writing
// into the workspace all end with it.
func TestKill9LeavesNoProcessOfTheRun(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	for _, mode := range []string{"workspace", "strict"} {
		t.Run(mode, func(t *testing.T) {
			marker := strconv.Itoa(50000 + os.Getpid()%9999)
			data, src, dir := killedData(t), t.TempDir(), t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": "(nohup sleep " + marker + " >/dev/null 2>&1 &)\nsetsid sleep " + marker + " >/dev/null 2>&1 &\n" +
				"while :; do echo x >> loop.txt; sleep 0.1; done\n"})
			writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
			cmd := proctorChild(t, []string{"PROCTOR_DATA=" + data}, append([]string{"run", "--dir", src, "--task", "attack", "--sandbox", mode}, hostileAgents[1].args(filepath.Join(dir, "model.yaml"))...)...)
			defer cmd.Process.Kill()
			var loop string
			testutil.Eventually(t, 20*time.Second, "the agent writing its loop", func() bool {
				m, _ := filepath.Glob(filepath.Join(data, "runs", "*", "workspace", "loop.txt"))
				if len(m) == 1 {
					loop = m[0]
				}
				return loop != "" && len(processesWith(marker)) == 2
			})
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			testutil.Eventually(t, 10*time.Second, "no process of the run left", func() bool { return len(processesWith(marker)) == 0 })
			before, _ := os.Stat(loop)
			time.Sleep(500 * time.Millisecond)
			if after, _ := os.Stat(loop); after.Size() != before.Size() {
				t.Fatalf("the agent's loop still writes into the workspace after proctor was killed (%d then %d bytes)", before.Size(), after.Size())
			}
		})
	}
}

// A token written literally in agents.yaml's env is a secret like one from
// the environment: the agent prints it and writes it into the workspace,
// and it is in no file of the data folder but the workspace itself.
func TestALiteralTokenInAgentsYAMLIsRedacted(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	token := "literal-agents-yaml-token-" + strconv.Itoa(os.Getpid())
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript,
		"agents.yaml": "agents:\n  - name: leaky\n    kind: command\n    command: [sh, -c, 'echo token $API_TOKEN; echo $API_TOKEN > tok.txt']\n    env: {API_TOKEN: " + token + "}\n"})
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, "run", "--dir", src, "--task", "leak", "--sandbox", "off",
		"--script", filepath.Join(dir, "model.yaml"), "--agents", filepath.Join(dir, "agents.yaml"), "--agent", "leaky")
	if r.code != ExitOK || strings.Contains(r.stdout+r.stderr, token) {
		t.Fatalf("%+v", r)
	}
	var seen bool
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		raw, _ := os.ReadFile(p)
		switch {
		case strings.Contains(p, string(filepath.Separator)+"workspace"+string(filepath.Separator)):
			seen = seen || bytes.Contains(raw, []byte(token))
		case bytes.Contains(raw, []byte(token)):
			t.Errorf("the literal token is in %s", p)
		}
		return nil
	})
	if !seen {
		t.Fatal("the agent never got the token, so the test proves nothing")
	}
}

// max_workspace_bytes holds while a command writes, not only after it:
// the command is stopped soon after the workspace goes over the bound, the
// run fails on the bound, and the diff of a workspace over its bounds is
// not recorded (so nothing of it can be approved).
func TestTheWorkspaceBoundStopsACommandThatWritesPastIt(t *testing.T) {
	write := "for i in $(seq 200); do head -c 500000 /dev/zero > f$i.bin; sleep 0.02; done\n"
	for a := range hostileAgents {
		t.Run(hostileAgents[a].name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
			data, src := t.TempDir(), t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": write})
			args := append([]string{"run", "--dir", src, "--task", "fill", "--sandbox", "off", "--max-workspace-bytes", "5000000"}, hostileAgents[a].args(filepath.Join(dir, "model.yaml"))...)
			r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, args...)
			runs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
			if len(runs) != 1 {
				t.Fatalf("%+v", r)
			}
			raw, _ := os.ReadFile(filepath.Join(runs[0], "run.json"))
			if !strings.Contains(string(raw), `"code": "workspace_bound"`) {
				t.Fatalf("the run did not fail on the bound:\n%s", raw)
			}
			if _, err := os.Stat(filepath.Join(runs[0], "diff.patch")); err == nil {
				t.Error("the diff of a workspace over its bounds was recorded")
			}
			files, _ := filepath.Glob(filepath.Join(runs[0], "workspace", "f*.bin"))
			if a == 0 && len(files) >= 200 {
				t.Errorf("the command wrote all %d files: it was not stopped at the bound", len(files))
			}
		})
	}
}

// max_workspace_bytes holds the run's private temp folder too ($TMPDIR,
// HOME and the caches of a confined command): a command that fills it is
// stopped as one that fills the workspace, and nothing of it is recorded.
func TestTheWorkspaceBoundHoldsTheRunsTempFolder(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	write := "for i in $(seq 60); do head -c 500000 /dev/zero > \"$TMPDIR/f$i.bin\"; sleep 0.02; done; echo changed >> a.txt\n"
	for a := range hostileAgents {
		t.Run(hostileAgents[a].name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
			data, src := t.TempDir(), t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": write})
			args := append([]string{"run", "--dir", src, "--task", "fill", "--max-workspace-bytes", "10000000"}, hostileAgents[a].args(filepath.Join(dir, "model.yaml"))...)
			r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, args...)
			runs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
			if len(runs) != 1 {
				t.Fatalf("%+v", r)
			}
			raw, _ := os.ReadFile(filepath.Join(runs[0], "run.json"))
			if !strings.Contains(string(raw), `"code": "workspace_bound"`) || !strings.Contains(string(raw), "temp folder") {
				t.Fatalf("the run did not fail on the bound of its temp folder:\n%s", raw)
			}
			if _, err := os.Stat(filepath.Join(runs[0], "diff.patch")); err == nil {
				t.Error("the diff of a run over its bounds was recorded")
			}
		})
	}
}

// Each run's process budget is its own: a run holding 200 processes leaves
// another run with --max-processes 50 its 50, and that small budget caps
// no other run (the sandbox once put every command in one pids cgroup
// whose limit the last one set).
func TestProcessBudgetsAreEachRunsOwn(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	marker := strconv.Itoa(20000 + os.Getpid()%9999)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
	script := filepath.Join(dir, "model.yaml")
	source := func(attack string) string {
		src := t.TempDir()
		writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": attack})
		return src
	}
	holder := proctorChild(t, []string{"PROCTOR_DATA=" + killedData(t)}, append([]string{"run", "--dir", source("for i in $(seq 200); do sleep " + marker + " & done; wait\n"), "--task", "hold"},
		hostileAgents[1].args(script)...)...)
	defer func() { holder.Process.Kill(); holder.Wait() }()
	testutil.Eventually(t, 30*time.Second, "a run holding 200 processes", func() bool { return len(processesWith(marker)) >= 200 })
	starts := func(maxProcs string, n int) bool {
		data := t.TempDir()
		args := []string{"run", "--dir", source(fmt.Sprintf("for i in $(seq %d); do sleep 1 & done; wait; echo started >> a.txt\n", n)), "--task", "start"}
		if maxProcs != "" {
			args = append(args, "--max-processes", maxProcs)
		}
		args = append(args, hostileAgents[1].args(script)...)
		invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, args...)
		a, _ := os.ReadFile(filepath.Join(onlyRun(t, data), "workspace", "a.txt"))
		return strings.Contains(string(a), "started")
	}
	if !starts("50", 40) {
		t.Error("a run with --max-processes 50 could not start 40 processes beside a run holding 200")
	}
	if starts("50", 80) {
		t.Error("a run with --max-processes 50 started 80 processes")
	}
	if !starts("", 300) {
		t.Error("after a run with --max-processes 50, another run could not start 300 processes under the default budget")
	}
	if n := len(processesWith(marker)); n < 200 {
		t.Errorf("the run holding 200 processes lost some: %d left", n)
	}
}

// onlyRun is the folder of the one run in a data folder.
func onlyRun(t *testing.T, data string) string {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "run.json"))
	if len(runs) != 1 {
		t.Fatalf("%d runs in %s", len(runs), data)
	}
	return filepath.Dir(runs[0])
}
