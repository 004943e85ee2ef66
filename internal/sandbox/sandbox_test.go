package sandbox

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMain makes the test binary the sandbox's helper too, as the proctor
// binary is in use: `sandbox-exec` runs Main. PROCTOR_SANDBOX_TEST_WALL
// names one wall for a test of that wall alone: "namespaces" runs the init
// without Landlock and seccomp; "seccomp" and "landlock" put up only that
// wall on a command that runs in no namespace of its own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" {
		os.Exit(testHelper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func testHelper(args []string) int {
	wall := os.Getenv("PROCTOR_SANDBOX_TEST_WALL")
	switch wall {
	case "":
		code, err := Main(args, os.Stderr)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 125
		}
		return code
	}
	in, err := parse(args, os.Stderr)
	if err != nil {
		panic(err)
	}
	if wall == "namespaces" {
		code, err := initMain(in, walls{})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 125
		}
		return code
	}
	// seccomp or landlock alone: no namespace, the wall, then the command.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	if wall == "seccomp" {
		err = applySeccomp()
	} else {
		err = in.policy.restrict(landlockABI(in.policy.LandlockABI))
	}
	if err == nil {
		var path string
		if path, err = exec.LookPath(in.argv[0]); err == nil {
			err = syscall.Exec(path, in.argv, os.Environ())
		}
	}
	os.Stderr.WriteString(err.Error() + "\n")
	return 125
}

func TestModeAndFlags(t *testing.T) {
	for in, want := range map[string]string{"": ModeWorkspace, "workspace": ModeWorkspace, "strict": ModeStrict, "off": ModeOff} {
		if got, err := Mode(in); err != nil || got != want {
			t.Errorf("Mode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := Mode("loose"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	p := Policy{Write: []string{"/ws", "/tmp/x"}, Read: []string{"/usr/local/go"}, Proxy: &Proxy{Socket: "/s/proxy.sock", Port: 4000}, MaxFile: 10, CPU: 5, MaxProcs: 64}
	got := strings.Join(p.flags(), " ")
	want := "--write /ws --write /tmp/x --read /usr/local/go --proxy-socket /s/proxy.sock --proxy-port 4000 --max-file 10 --cpu 5 --max-procs 64"
	if got != want {
		t.Fatalf("flags:\n got %s\nwant %s", got, want)
	}
	in, err := parse(append(append([]string{"--init"}, p.flags()...), "--", "bash", "-c", "echo --write /etc"), &strings.Builder{})
	if q := in.policy; err != nil || !slices.Equal(q.Write, p.Write) || *q.Proxy != *p.Proxy || q.MaxProcs != 64 || in.become != -1 || !in.init || len(in.argv) != 3 {
		t.Fatalf("the flags do not read back: %+v %v", in, err)
	}
	// The helper refuses what it cannot apply, and runs nothing.
	for _, args := range [][]string{{"--proxy-port", "http", "--", "true"}, {"--proxy-socket", "/s", "--", "true"}, {"--proxy-socket", "/s", "--proxy-port", "70000", "--", "true"}, {"--write", "/ws"}, {"--nope"}} {
		if _, err := Main(args, &strings.Builder{}); err == nil {
			t.Errorf("Main(%q) ran", args)
		}
	}
}

// A confined command is built as the helper, the init of namespaces of
// its own (all six), killed when proctor dies, in a process group of its
// own, mapped to one id that is not root's.
func TestCommandBuildsTheInit(t *testing.T) {
	dir := t.TempDir()
	c := Command{Argv: []string{"bash", "-c", "true"}, Dir: dir, Confine: &Confinement{Policy: Policy{Write: []string{dir}}, Helper: "/bin/proctor"}}
	cmd, alive, report, _, err := c.build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	alive.Close()
	report.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if cmd.Path != "/bin/proctor" || !slices.Contains(cmd.Args, "--init") || cmd.Args[len(cmd.Args)-3] != "bash" {
		t.Fatalf("the helper's command line: %s %q", cmd.Path, cmd.Args)
	}
	a := cmd.SysProcAttr
	all := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if a.Cloneflags&all != all || a.Pdeathsig != syscall.SIGKILL || !a.Setpgid {
		t.Fatalf("the init's process attributes: %+v", a)
	}
	uid, _ := commandID()
	// Its own id, and as root the owner of the caches' layers (which no
	// command runs as).
	want := 1
	if os.Geteuid() == 0 {
		want = 2
	}
	if len(a.UidMappings) != want || a.UidMappings[0].HostID != uid || uid == 0 || (want == 2 && a.UidMappings[1].HostID != LayerID) {
		t.Fatalf("the command's id on the host is %d (%+v)", uid, a.UidMappings)
	}
	if os.Geteuid() == 0 && !slices.Contains(cmd.Args, "--become") {
		t.Fatal("as root, the init is not told to become the command's id")
	}
}
