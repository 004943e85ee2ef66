package cli

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// Escapes fail inside the sandbox and succeed with it off; real work (go
// test of the demo project, git in the workspace) still runs inside. The
// test binary is the helper (proctor sandbox-exec), as the proctor binary
// is in use.
func TestTheSandboxStopsEscapesAndLetsWorkRun(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	root := t.TempDir()
	home, data, ws, tmp, other := filepath.Join(root, "home"), filepath.Join(root, "data"), filepath.Join(root, "ws"), filepath.Join(root, "tmp"), filepath.Join(root, "data", "runs", "other", "workspace")
	for _, d := range []string{filepath.Join(home, ".ssh"), other, ws, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".ssh", "id_test"), []byte("PRIVATE KEY\n"), 0o600)
	os.WriteFile(filepath.Join(data, "proctor.db"), []byte("SQLite format 3\n"), 0o600)
	os.WriteFile(filepath.Join(other, "secret.go"), []byte("package x\n"), 0o644)
	// The proxy: a port on the host's loopback, which a confined command
	// reaches only through its init's relay to the proxy's unix socket.
	proxy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer proxy.Close()
	socket := filepath.Join(t.TempDir(), "proxy.sock")
	relayed, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(socket, 0o666)
	defer relayed.Close()
	elsewhere, _ := net.Listen("tcp", "127.0.0.1:0")
	defer elsewhere.Close()
	for _, ln := range []net.Listener{proxy, relayed, elsewhere} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	port := func(ln net.Listener) string { return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) }
	policy := sandbox.Policy{Write: []string{ws, tmp}, Proxy: &sandbox.Proxy{Socket: socket, Port: proxy.Addr().(*net.TCPAddr).Port}}
	spawning := policy
	spawning.MaxProcs = 30
	offline := policy
	offline.Proxy = nil
	shIn := func(p *sandbox.Policy, shell, script string, env ...string) (string, error) {
		c := sandbox.Command{Argv: []string{shell, "-c", script}, Dir: ws, Env: append(os.Environ(), append([]string{"HOME=" + home}, env...)...), Timeout: 10 * time.Minute}
		if p != nil {
			c.Confine = &sandbox.Confinement{Policy: *p, Helper: os.Args[0]}
		}
		res, err := c.Run(context.Background())
		switch {
		case err != nil:
			return string(res.Output), err
		case res.Code != 0:
			return string(res.Output), fmt.Errorf("exit %d (signal %v)", res.Code, res.Signal)
		}
		return string(res.Output), nil
	}
	sh := func(sandboxed bool, script string, env ...string) (string, error) {
		if sandboxed {
			return shIn(&policy, "bash", script, env...)
		}
		return shIn(nil, "bash", script, env...)
	}
	for _, tc := range []struct {
		name, script string
		policy       *sandbox.Policy
		shell        string
	}{
		{"write the home folder", "echo x > " + filepath.Join(home, "escaped"), nil, ""},
		{"read a planted ssh key", "cat " + filepath.Join(home, ".ssh", "id_test"), nil, ""},
		{"read the data folder's database", "cat " + filepath.Join(data, "proctor.db"), nil, ""},
		{"list another run's workspace", "ls " + other, nil, ""},
		{"connect to a loopback port that is not the proxy", "exec 3<>/dev/tcp/127.0.0.1/" + port(elsewhere), nil, ""},
		{"write outside the workspace", "echo x > " + filepath.Join(root, "escaped"), nil, ""},
		// dash, as bash retries a failed fork for 15 s before it gives up
		{"spawn more processes than allowed", "for i in $(seq 60); do sleep 1 & done; wait", &spawning, "sh"},
		{"connect to the proxy with the network hidden (strict)", "exec 3<>/dev/tcp/127.0.0.1/" + port(proxy), &offline, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, shell := cmp.Or(tc.policy, &policy), cmp.Or(tc.shell, "bash")
			if out, err := shIn(p, shell, tc.script); err == nil {
				t.Fatalf("escaped the sandbox: %s", out)
			}
			if out, err := shIn(nil, shell, tc.script); err != nil {
				t.Fatalf("fails without the sandbox too, so the test proves nothing: %v %s", err, out)
			}
		})
	}
	// UDP is outside what Landlock restricts: with the network hidden a
	// datagram reaches nothing on the host, and the command sees only its
	// own loopback.
	t.Run("send a datagram to the host with the network hidden (strict)", func(t *testing.T) {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		received := func(p *sandbox.Policy) bool {
			out, err := shIn(p, "bash", "echo escaped > /dev/udp/127.0.0.1/"+strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port))
			if err != nil {
				t.Fatalf("send: %v %s", err, out)
			}
			udp.SetReadDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 64)
			n, _, err := udp.ReadFrom(buf)
			return err == nil && strings.Contains(string(buf[:n]), "escaped")
		}
		if received(&offline) {
			t.Fatal("a datagram left the hidden network")
		}
		if !received(nil) {
			t.Fatal("the datagram is lost without the sandbox too, so the test proves nothing")
		}
		if out, err := shIn(&offline, "bash", "tail -n +3 /proc/net/dev | cut -d: -f1"); err != nil || strings.TrimSpace(out) != "lo" {
			t.Fatalf("interfaces with the network hidden: %v %q, want lo only", err, out)
		}
	})
	if out, err := sh(true, "exec 3<>/dev/tcp/127.0.0.1/"+port(proxy)); err != nil {
		t.Fatalf("the proxy's port is refused: %v %s", err, out)
	}
	// A file the command may run (proctor itself, as an agent's hook) is
	// there alone: it runs, and what lies beside it is not there at all.
	t.Run("run a file allowed alone, and not its neighbour", func(t *testing.T) {
		bin := filepath.Join(home, "bin")
		os.MkdirAll(bin, 0o755)
		os.WriteFile(filepath.Join(bin, "hook"), []byte("#!/bin/sh\necho hook ran\n"), 0o755)
		os.WriteFile(filepath.Join(bin, "neighbour.key"), []byte("NEIGHBOUR\n"), 0o600)
		running := policy
		running.Run = []string{filepath.Join(bin, "hook")}
		if out, err := shIn(&running, "bash", filepath.Join(bin, "hook")); err != nil || !strings.Contains(out, "hook ran") {
			t.Fatalf("the allowed file did not run: %v %s", err, out)
		}
		if out, err := shIn(&running, "bash", "test -e "+filepath.Join(bin, "neighbour.key")+" || cat "+filepath.Join(bin, "neighbour.key")); err == nil || strings.Contains(out, "NEIGHBOUR") {
			t.Fatalf("the file beside it was reached: %v %s", err, out)
		}
		if out, err := shIn(&running, "bash", "echo x >> "+filepath.Join(bin, "hook")); err == nil {
			t.Fatalf("the allowed file was written: %s", out)
		}
	})
	// The init waits for the command and exits as it did.
	if out, err := shIn(&offline, "sh", "exit 7"); err == nil || !strings.Contains(err.Error(), "exit 7") {
		t.Fatalf("exit 7 with the network hidden: %v %s", err, out)
	}

	// Real work: go test of the demo project (whose test fails on the bug
	// the demo fixes, so it must get as far as running), and git.
	if err := demo.WriteFixture(filepath.Join(ws, "invoice")); err != nil {
		t.Fatal(err)
	}
	goroot, _ := exec.Command("go", "env", "GOROOT").Output()
	modcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	// ... under the strictest policy: no way out and the default process
	// limit.
	policy = offline
	policy.MaxProcs = uint64(bounds.Defaults().MaxProcesses)
	policy.Read = []string{strings.TrimSpace(string(goroot)), strings.TrimSpace(string(modcache))}
	out, err := sh(true, "cd invoice && { go test ./... ; true; } && git init -q && git add -A && git -c user.name=t -c user.email=t@e commit -qm base && echo commits: $(git log --oneline | wc -l)",
		"GOCACHE="+filepath.Join(tmp, "gocache"), "GOPATH="+filepath.Join(tmp, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "TMPDIR="+tmp)
	if err != nil || !strings.Contains(out, "money_test.go:8: 3 x 0.29 EUR = 86 cents, want 87") || !strings.Contains(out, "commits: 1") {
		t.Fatalf("go test and git in the sandbox: %v\n%s", err, out)
	}
}

// proctor run confines the agent's commands by default and says so on the
// receipt; --sandbox off runs them with the user's permissions, recorded.
func TestRunConfinesTheAgentsCommands(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	secret := filepath.Join(t.TempDir(), "id_test")
	os.WriteFile(secret, []byte("PLANTED-KEY\n"), 0o600)
	src, dir := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"cp " + secret + " got.txt\"}}]}\n  - reply: {content: ok}\n"})
	for _, mode := range []string{"workspace", "strict", "off"} {
		data := t.TempDir()
		r := invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")},
			"run", "--dir", src, "--task", "read it", "--script", filepath.Join(dir, "model.yaml"), "--allow", "cp", "--sandbox", mode)
		if r.code != ExitOK {
			t.Fatalf("%s: %+v", mode, r)
		}
		runs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "run.json"))
		raw, _ := os.ReadFile(runs[0])
		got, _ := os.ReadFile(filepath.Join(filepath.Dir(runs[0]), "workspace", "got.txt"))
		if !strings.Contains(string(raw), `"sandbox": "`+mode+`"`) {
			t.Errorf("%s: the receipt does not record the sandbox:\n%s", mode, raw)
		}
		if leaked := strings.Contains(string(got), "PLANTED-KEY"); leaked != (mode == "off") {
			t.Errorf("%s: the command read the planted key: %v", mode, leaked)
		}
		transcript, _ := os.ReadFile(filepath.Join(filepath.Dir(runs[0]), "transcript.md"))
		// Outside the view of the host the sandbox gives, the key is not
		// even there to be denied.
		if mode != "off" && !strings.Contains(string(transcript), "Permission denied") && !strings.Contains(string(transcript), "No such file or directory") {
			t.Errorf("the approved command did not run into the sandbox:\n%s", transcript)
		}
	}
}
