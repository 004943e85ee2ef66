package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// commandScript is a model script whose model runs one command, then
// answers.
const commandScript = "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"touch ran\"}}]}\n  - reply: {content: done}\n"

// onlyReceipt reads the one run of a data folder: its receipt and events.
func onlyReceipt(t *testing.T, data string) (bundle.Receipt, string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d runs in %s, want 1", len(dirs), data)
	}
	raw, err := os.ReadFile(filepath.Join(dirs[0], bundle.ReceiptFile))
	if err != nil {
		t.Fatal(err)
	}
	var rc bundle.Receipt
	if err := json.Unmarshal(raw, &rc); err != nil {
		t.Fatal(err)
	}
	events, _ := os.ReadFile(filepath.Join(dirs[0], bundle.EventsFile))
	return rc, string(events)
}

// On a host that refuses the sandbox's user namespace (a container with
// Docker's default seccomp profile, here a seccomp filter around proctor),
// a confined run is refused before the agent starts: recorded as an error
// of the environment, with the wall and what to change, and no model call
// or command of the agent. The same run with --sandbox off runs.
func TestAHostWithoutAWallRefusesTheRunBeforeTheAgent(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": commandScript})
	for _, mode := range []string{"workspace", "off"} {
		t.Run(mode, func(t *testing.T) {
			data, src := t.TempDir(), t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n"})
			cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "run", "--dir", src, "--task", "touch a file", "--sandbox", mode,
				"--script", filepath.Join(dir, "model.yaml"), "--allow", "touch")
			cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1", "PROCTOR_TEST_NO_USERNS=1", "PROCTOR_DATA="+data)
			out, _ := cmd.CombinedOutput()
			rc, events := onlyReceipt(t, data)
			if mode == "off" {
				if rc.Status != bundle.StatusAwaitingReview || !strings.Contains(events, `"tool.result"`) {
					t.Fatalf("--sandbox off under the same host: %s\n%s", rc.Status, out)
				}
				return
			}
			if code := cmd.ProcessState.ExitCode(); code != ExitProblems {
				t.Errorf("exit %d, want %d", code, ExitProblems)
			}
			f := rc.Failure
			if rc.Status != bundle.StatusError || f == nil || f.Domain != bundle.DomainEnvironment || f.Code != run.CodeSandboxUnavailable {
				t.Fatalf("receipt: %s %+v\n%s", rc.Status, f, out)
			}
			for _, want := range []string{"namespaces", "seccomp", "proctor doctor", "--sandbox off"} {
				if !strings.Contains(f.Message, want) {
					t.Errorf("the failure does not say %q: %s", want, f.Message)
				}
			}
			if !strings.Contains(string(out), f.Message) {
				t.Errorf("proctor's output does not say why:\n%s", out)
			}
			for _, ev := range []string{`"model.request"`, `"tool.call"`, `"tool.result"`} {
				if strings.Contains(events, ev) {
					t.Errorf("the agent started: events hold %s", ev)
				}
			}
			if rc.Walls != nil {
				t.Errorf("walls recorded for a run that had none: %+v", rc.Walls)
			}
		})
	}
}

// A confined run's receipt names the walls its commands had, at the
// Landlock ABI this host gives (capped here to Debian 12's 2, and to
// none): the namespaces and seccomp always.
func TestTheReceiptNamesTheWalls(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": commandScript})
	for _, tc := range []struct {
		cap      string
		abi      int
		landlock []string
	}{{"2", 2, []string{"files", "refer"}}, {"0", 0, nil}} {
		t.Run("PROCTOR_LANDLOCK_ABI="+tc.cap, func(t *testing.T) {
			data, src := t.TempDir(), t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n"})
			r := invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH"), "PROCTOR_LANDLOCK_ABI": tc.cap},
				"run", "--dir", src, "--task", "touch a file", "--script", filepath.Join(dir, "model.yaml"), "--allow", "touch")
			if r.code != ExitOK {
				t.Fatalf("%+v", r)
			}
			rc, _ := onlyReceipt(t, data)
			w := rc.Walls
			if w == nil || !slices.Equal(w.Namespaces, sandbox.Namespaces) || !w.Seccomp || w.LandlockABI != tc.abi || !slices.Equal(w.Landlock, tc.landlock) || w.Caches != "overlay" {
				t.Fatalf("walls: %+v", w)
			}
			// The walls as the run starts; the id its commands run as with
			// the first of them, and on the receipt.
			walls := *w
			walls.ID, walls.IDShared = 0, false
			if w.ID == 0 || !strings.Contains(r.stdout+r.stderr, "sandbox: "+walls.String()+"\n") || !strings.Contains(r.stdout+r.stderr, fmt.Sprintf("sandbox: as id %d (", w.ID)) {
				t.Errorf("the run's progress does not name its walls and its id %d:\n%s%s", w.ID, r.stdout, r.stderr)
			}
		})
	}
	bad := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir(), "PROCTOR_LANDLOCK_ABI": "newest"}, "run", "--dir", t.TempDir(), "--task", "x", "--script", filepath.Join(dir, "model.yaml"))
	if bad.code != ExitUsage || !strings.Contains(bad.stderr, `PROCTOR_LANDLOCK_ABI="newest"`) {
		t.Errorf("a wrong PROCTOR_LANDLOCK_ABI: %+v", bad)
	}
}

// A data folder on an overlay file system (a container's own root) cannot
// hold the upper folders of the toolchain caches' overlays: the run's
// commands get plain cache folders of their own, the walls say why, and
// the commands run — none fails for it. (As root, in a mount namespace of
// the test's own.)
func TestADataFolderOnAnOverlayGivesPlainCaches(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting an overlay for the data folder needs root")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"touch ran\"}}]}\n  - reply: {content: done}\n",
		"src/a.txt": "old\n", "lower/.keep": ""})
	for _, d := range []string{"upper", "work", "root"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	script := `mount -t overlay overlay -o lowerdir=$D/lower,upperdir=$D/upper,workdir=$D/work $D/root && exec "$@"`
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", os.Args[0], "-test.run=^$", "--",
		"run", "--dir", filepath.Join(dir, "src"), "--task", "touch a file", "--script", filepath.Join(dir, "model.yaml"), "--allow", "touch")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1", "D="+dir, "PROCTOR_DATA="+filepath.Join(dir, "root", "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The mount is gone with its namespace; what was written is in upper.
	rc, events := onlyReceipt(t, filepath.Join(dir, "upper", "data"))
	if rc.Status != bundle.StatusAwaitingReview || rc.Walls == nil || !strings.HasPrefix(rc.Walls.Caches, "plain: ") {
		t.Fatalf("%s %+v\n%s", rc.Status, rc.Walls, out)
	}
	if !strings.Contains(events, `"exit":0`) {
		t.Errorf("the command did not run:\n%s", events)
	}
}

// A suite on such a host counts each case broken — the host failed it,
// not the agent — and exits 2; on a host that gives every wall, its
// summary names the walls its runs had.
func TestASuiteSaysWhichWallsItsRunsHad(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	example, err := filepath.Abs("../../examples/scenarios/asks-a-question")
	if err != nil {
		t.Fatal(err)
	}
	for _, refuse := range []bool{true, false} {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "scenario", "run", example)
		cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1", "PROCTOR_DATA="+t.TempDir())
		if refuse {
			cmd.Env = append(cmd.Env, "PROCTOR_TEST_NO_USERNS=1")
		}
		out, _ := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		switch {
		case refuse && (code != 2 || !strings.Contains(string(out), "0 passed, 0 failed, 1 broken") || !strings.Contains(string(out), "sandbox_unavailable")):
			t.Errorf("on a host without user namespaces: exit %d\n%s", code, out)
		case !refuse && (code != 0 || !strings.Contains(string(out), "\nsandbox: user, mount, pid, network, ipc, uts namespaces; seccomp; ")):
			t.Errorf("exit %d\n%s", code, out)
		}
	}
}

// proctor doctor tries each wall: on this host every one holds and it
// exits 0; on a host that refuses user namespaces it names that wall with
// its fix, says which walls it could not try without them, still tries
// Landlock and seccomp, and exits 1 (a run would be refused).
func TestDoctorSaysWhatTheHostLacks(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	doctor := func(refuse bool, args ...string) (string, int) {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--", "doctor"}, args...)...)
		// (The test binary cannot be re-run as nobody: PROCTOR_DOCTOR_NESTED.)
		cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1", "PROCTOR_DOCTOR_NESTED=1", "PROCTOR_DATA="+t.TempDir())
		if refuse {
			cmd.Env = append(cmd.Env, "PROCTOR_TEST_NO_USERNS=1")
		}
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := doctor(false)
	if code != 0 || strings.Contains(out, "FAILED") || !strings.Contains(out, "Runs with the sandbox on start here.") || !strings.Contains(out, "a confined `true` started with: user, mount") {
		t.Errorf("on this host: exit %d\n%s", code, out)
	}
	// Which id the runs get: their own (root, or subordinate ids), or the
	// user's, and why.
	ids := "  ids           every run as the user's own id " + strconv.Itoa(os.Getuid()) + ": "
	if os.Geteuid() == 0 || subordinateIDs() {
		ids = "  ids           each run an id of its own (this one would get id "
	}
	if !strings.Contains(out, ids) {
		t.Errorf("doctor does not say %q:\n%s", ids, out)
	}
	out, code = doctor(true)
	fix := []string{"fix: this host does not let a user who is not root make user namespaces", "AppArmor"}
	if os.Geteuid() == 0 {
		fix = []string{"fix: something around proctor refuses new namespaces", "--security-opt systempaths=unconfined"}
	}
	for _, want := range append(fix, "namespaces    FAILED: ", "view          not tried: it needs the namespaces", "landlock      ok (", "seccomp       ok", "Runs with the sandbox on are refused here (exit 1)") {
		if !strings.Contains(out, want) {
			t.Errorf("without user namespaces, doctor does not say %q:\n%s", want, out)
		}
	}
	if code != ExitProblems {
		t.Errorf("exit %d, want 1", code)
	}
	raw, code := doctor(true, "--json")
	var rep struct {
		Findings []sandbox.Finding
		Refused  string
	}
	if err := json.Unmarshal([]byte(raw), &rep); err != nil || code != ExitProblems || rep.Refused == "" || len(rep.Findings) != len(sandbox.SurveyedWalls) {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, raw)
	}
	if f := rep.Findings[0]; f.Wall != sandbox.WallNamespaces || f.OK || f.Fix == "" || f.Errno != int(syscall.EPERM) {
		t.Errorf("the namespaces' finding: %+v", f)
	}
}

// The AppArmor profile names the binary by its path and allows it user
// namespaces, and nothing else.
func TestTheAppArmorProfileAllowsUserNamespacesOnly(t *testing.T) {
	r := invoke(t, map[string]string{}, "doctor", "--apparmor-profile")
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	if r.code != ExitOK || !strings.Contains(r.stdout, "profile proctor "+self+" flags=(unconfined) {\n  userns,\n") || strings.Count(r.stdout, ",\n") != 2 {
		t.Errorf("%+v", r)
	}
}
