package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strconv"
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
	for in, want := range map[string]Mode{"": ModeWorkspace, "workspace": ModeWorkspace, "strict": ModeStrict, "off": ModeOff} {
		if got, err := ParseMode(in); err != nil || got != want || got.Confined() == (want == ModeOff) || got.ReadsAllowList() != (want == ModeWorkspace) {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if Mode("").Confined() {
		t.Error("no mode at all (a runner without a sandbox) is confined")
	}
	if _, err := ParseMode("loose"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	p := Policy{Write: []string{"/ws", "/tmp/x"}, Read: []string{"/usr/local/go"}, Proxy: &Proxy{Socket: "/s/proxy.sock", Port: 4000}, MaxFile: 10, CPU: 5, MaxProcs: 64}
	got := strings.Join(policyFlags(p), " ")
	want := "--write /ws --write /tmp/x --read /usr/local/go --proxy-socket /s/proxy.sock --proxy-port 4000 --max-file 10 --cpu 5 --max-procs 64"
	if got != want {
		t.Fatalf("flags:\n got %s\nwant %s", got, want)
	}
	in, err := parse(append(append([]string{"--init"}, policyFlags(p)...), "--", "bash", "-c", "echo --write /etc"), &strings.Builder{})
	if q := in.policy; err != nil || !slices.Equal(q.Write, p.Write) || *q.Proxy != *p.Proxy || q.MaxProcs != 64 || in.become != -1 || !in.init || len(in.argv) != 3 {
		t.Fatalf("the flags do not read back: %+v %v", in, err)
	}
	// proctor gives the init its policy as one JSON value on a pipe: it
	// reads back whole, and nothing of it is in the command line.
	full := Policy{Write: []string{"/ws"}, Read: []string{"/r"}, Run: []string{"/bin/hook"}, Caches: []Cache{{At: "/ws/.cache", Upper: "/u", Layers: []string{"/l1", "/l2"}}},
		Etc: Readable{Dirs: []string{"/etc/ssl"}, Files: []string{"/etc/hosts"}}, Proxy: &Proxy{Socket: "/s", Port: 4001}, MaxFile: 1, CPU: 2, MaxProcs: 3, LandlockABI: 4, ID: 1900001}
	for _, spec := range []initSpec{{Policy: full, Become: 1900001, OwnWrite: true}, {Policy: Policy{Write: []string{"/ws"}}, Become: -1, Survey: true}} {
		raw, _ := json.Marshal(spec)
		args := []string{"--init", "--spec-fd", strconv.Itoa(specPipe(t, string(raw))), "--", "true"}
		in, err := parse(args, &strings.Builder{})
		if err != nil || !reflect.DeepEqual(in.policy, spec.Policy) || in.become != spec.Become || in.ownWrite != spec.OwnWrite || in.surveying != spec.Survey {
			t.Fatalf("the spec does not read back: %v\n got %+v\nwant %+v", err, in, spec)
		}
	}
	bad := specPipe(t, `{"policy": {"Caches": [{"At": "relative", "Upper": "/u"}]}}`)
	if _, err := parse([]string{"--init", "--spec-fd", strconv.Itoa(bad), "--", "true"}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("a spec with a relative cache folder: %v", err)
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
	var spec initSpec
	err = json.NewDecoder(cmd.ExtraFiles[2]).Decode(&spec) // fd 5
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil || !slices.Equal(spec.Policy.Write, []string{dir}) {
		t.Fatalf("the init's spec: %+v %v", spec, err)
	}
	if cmd.Path != "/bin/proctor" || !slices.Contains(cmd.Args, "--init") || cmd.Args[len(cmd.Args)-3] != "bash" || slices.Contains(cmd.Args, dir) {
		t.Fatalf("the helper's command line (the policy is not in it): %s %q", cmd.Path, cmd.Args)
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
	if os.Geteuid() == 0 && spec.Become != uid {
		t.Fatalf("as root, the init is told to become %d, not the command's id %d", spec.Become, uid)
	}
}

// policyFlags are p as the flags a person gives `proctor sandbox-exec`.
func policyFlags(p Policy) []string {
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
	for _, c := range p.Caches {
		out = append(out, "--cache", c.flag())
	}
	for _, d := range p.Etc.Dirs {
		out = append(out, "--etc-dir", d)
	}
	for _, f := range p.Etc.Files {
		out = append(out, "--etc-file", f)
	}
	if p.Proxy != nil {
		out = append(out, "--proxy-socket", p.Proxy.Socket, "--proxy-port", strconv.Itoa(p.Proxy.Port))
	}
	if p.LandlockABI != 0 {
		out = append(out, "--landlock-abi", strconv.Itoa(p.LandlockABI))
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

// specPipe is the read end of a pipe that holds text, as a bare file
// descriptor the reader closes (as the init does).
func specPipe(t *testing.T, text string) int {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	syscall.Write(fds[1], []byte(text))
	syscall.Close(fds[1])
	return fds[0]
}
