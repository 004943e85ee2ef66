package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// TestMain lets a test run proctor itself as a child process (to kill it):
// with PROCTOR_TEST_MAIN set, the test binary is proctor, with the
// arguments after "--".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-exec" { // the test binary is the sandbox helper too
		os.Exit(Main(context.Background(), os.Args[1:], Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	if os.Getenv("PROCTOR_TEST_MAIN") != "" {
		if os.Getenv("PROCTOR_TEST_NO_USERNS") != "" { // a host like a default container
			if err := testutil.RefuseUserNamespaces(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(125)
			}
		}
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Exit(Main(context.Background(), args, Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// proctorChild starts proctor with args as a child process.
func proctorChild(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), "PROCTOR_TEST_MAIN=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// killedData is a data folder for runs a test kills: what a killed run's
// id left there (a user's subordinate id's, which the user cannot remove)
// is taken back and removed at the test's end, as the next run would.
func killedData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		exe, _ := os.Executable()
		if err := sandbox.RemoveAll(context.Background(), exe, dir); err != nil {
			t.Errorf("remove what the killed runs left: %v", err)
		}
	})
	return dir
}

// After kill -9 of a run, its bundle said "running" forever: only serve
// marked such runs interrupted, and only under its own data folder. Any
// `proctor index` marks a running bundle that no process holds as
// interrupted, and leaves one that is still working alone.
func TestKill9ThenIndexMarksTheRunInterrupted(t *testing.T) {
	data := t.TempDir()
	script := filepath.Join(t.TempDir(), "slow.yaml")
	os.WriteFile(script, []byte("steps:\n  - reply:\n      tool_calls:\n        - name: run_command\n          arguments: {command: \"sleep 5\", timeout_s: 60}\n  - reply: {content: done}\n"), 0o644)
	cmd := proctorChild(t, []string{"PROCTOR_DATA=" + data}, "run", "--dir", demoSource(t), "--task", "wait", "--script", script, "--allow", "sleep", "--approve", "policy")
	defer cmd.Process.Kill()
	// Wait until the run works inside its command, then kill it.
	var runDir string
	testutil.Eventually(t, 20*time.Second, "the run reaching its command", func() bool {
		dirs, _ := filepath.Glob(filepath.Join(data, "runs", "*", bundle.EventsFile))
		for _, ev := range dirs {
			if b, _ := os.ReadFile(ev); strings.Contains(string(b), `"tool.call"`) {
				runDir = filepath.Dir(ev)
			}
		}
		return runDir != ""
	})
	// While it works, index leaves it alone.
	if r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "index", filepath.Join(data, "runs")); strings.Contains(r.stdout, "marked interrupted") {
		t.Fatalf("a working run was marked interrupted: %+v", r)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// A copy of the folder elsewhere (a bundle brought from CI), indexed
	// into another data folder.
	elsewhere := filepath.Join(t.TempDir(), "from-ci")
	if err := os.CopyFS(elsewhere, os.DirFS(filepath.Dir(runDir))); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{filepath.Join(data, "runs"), elsewhere} {
		r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir()}, "index", root)
		if !strings.Contains(r.stdout, "marked interrupted 1") {
			t.Fatalf("index %s: %+v", root, r)
		}
		b, err := bundle.ReadRun(filepath.Join(root, filepath.Base(runDir)), bundle.DefaultLimits())
		if err != nil || b.Receipt.Status != bundle.StatusInterrupted || b.Receipt.EndedAt == nil {
			t.Fatalf("receipt after index: %+v %v", b.Receipt, err)
		}
	}
}

// After kill -9 of `scenario run --pack`, runs that had printed a verdict
// were missing from the pack, and scratch folders leaked. A verdict line is
// printed only once its run is durable in the pack, and the next start
// removes the scratch folder the killed suite left.
func TestKill9DuringAPackedSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	data := t.TempDir()
	env := []string{"PROCTOR_DATA=" + data}
	// What is under test is durability; --sandbox off spares each run a
	// cold Go build cache (the sandbox is tested in sandbox_test.go).
	scenarios, _ := filepath.Abs("../../examples/scenarios")
	start := time.Now()
	whole := proctorChild(t, env, "scenario", "run", "--sandbox", "off", "--pack", "--repeat", "2", scenarios)
	whole.Wait()
	took := time.Since(start)
	verdict := regexp.MustCompile(`(?m)^verdict .* (\S+\.tar)#(\S+)$`)
	printed := 0
	for round := range 6 {
		var out bytes.Buffer
		cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "scenario", "run", "--sandbox", "off", "--pack", "--repeat", "2", scenarios)
		cmd.Env = append(append(os.Environ(), "PROCTOR_TEST_MAIN=1"), env...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(round+1) * took / 7)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		for _, m := range verdict.FindAllStringSubmatch(out.String(), -1) {
			printed++
			found := false
			bundle.ReadPack(m[1], bundle.DefaultLimits(), func(p *bundle.PackedRun) error {
				found = found || p.ID == m[2]
				return nil
			})
			if !found {
				t.Fatalf("round %d: run %s printed its verdict but is not in %s", round, m[2], m[1])
			}
		}
	}
	// The next start cleans what the killed suites left.
	if r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "scenario", "run", "--sandbox", "off", "--pack", "--quiet", scenarios); r.code != ExitOK {
		t.Fatalf("a suite after the kills: %+v", r)
	}
	if left, _ := os.ReadDir(filepath.Join(data, "scratch")); len(left) != 0 {
		t.Fatalf("scratch folders left: %v", left)
	}
	// A run its pack took just before the kill is in the pack alone, not
	// also kept as a folder (two copies of one run).
	if r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "index", filepath.Join(data, "runs")); r.code != ExitOK || strings.Contains(r.stdout, "problem:") {
		t.Fatalf("index after the kills: %+v", r)
	}
	t.Logf("6 kills within a %s suite; %d printed verdicts, each in its pack", took.Round(time.Millisecond), printed)
}

// served is a `proctor serve` child: its address and the local secret
// every request to it carries.
type served struct{ url, secret string }

// serveChild starts `proctor serve` as a child process in data with the
// source root roots, and returns it and where it serves.
func serveChild(t *testing.T, data, roots string, extra ...string) (*exec.Cmd, served) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--", "serve", "--addr", "127.0.0.1:0", "--data", data, "--source-root", roots, "--sandbox", "off"}, extra...)...)
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rd := bufio.NewReader(out)
	first, _ := rd.ReadString('\n')
	go io.Copy(io.Discard, rd)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(first)
	if url == "" {
		t.Fatalf("serve said: %q", first)
	}
	secret, err := os.ReadFile(filepath.Join(data, "local.secret"))
	if err != nil {
		t.Fatal(err)
	}
	return cmd, served{url: url, secret: strings.TrimSpace(string(secret))}
}

// get requests path with the local secret.
func (s served) get(t *testing.T, path string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.secret)
	return http.DefaultClient.Do(req)
}

// postJSON posts body to path with the local secret.
func (s served) postJSON(t *testing.T, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// kill -9 of serve while a run waits for a command approval: the next
// serve marks the run interrupted, and resuming it asks the same approval
// again; approved, the run reaches its review with the change made before
// the kill.
// pending is the number of the first approval run id waits for on the
// server s, "" for none.
func pending(t *testing.T, s served, id string) string {
	resp, err := s.get(t, "/api/v1/runs/"+id+"/approvals")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var a struct{ Approvals []struct{ ID float64 } }
	json.NewDecoder(resp.Body).Decode(&a)
	if len(a.Approvals) == 0 {
		return ""
	}
	return strconv.Itoa(int(a.Approvals[0].ID))
}

// killWhileWaitingThenRestart waits for run id to ask for an approval on
// the server cmd serves at url, kills the server (kill -9), and starts
// another on the same folders; it returns the new server's URL.
func killWhileWaitingThenRestart(t *testing.T, cmd *exec.Cmd, s served, id, data, roots string) served {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "the approval request", func() bool { return pending(t, s, id) != "" })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	_, s = serveChild(t, data, roots)
	return s
}

// resumeAndApprove resumes the interrupted run id on the server at url
// with the model script after.yaml, waits for the resumed run to ask again
// for the approval the interrupted one waited for, approves it as ana, and
// returns the resumed run's id.
func resumeAndApprove(t *testing.T, s served, id string) string {
	t.Helper()
	code, out := s.postJSON(t, "/api/v1/runs/"+id+"/resume", `{"script": "after.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("resume: %d %v", code, out)
	}
	next := out["run_id"].(string)
	testutil.Eventually(t, 30*time.Second, "the same approval asked again", func() bool { return pending(t, s, next) != "" })
	if code, out := s.postJSON(t, "/api/v1/runs/"+next+"/approvals/"+pending(t, s, next), `{"decision": "approve", "reviewer": "ana"}`); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, out)
	}
	return next
}

// awaitStatus waits for run id's receipt to say status, and returns it.
func awaitStatus(t *testing.T, data, id string, status bundle.Status) bundle.Receipt {
	t.Helper()
	return awaitStatusWithin(t, 30*time.Second, data, id, status)
}

func awaitStatusWithin(t *testing.T, d time.Duration, data, id string, status bundle.Status) bundle.Receipt {
	t.Helper()
	var rc bundle.Receipt
	testutil.Eventually(t, d, "run "+id+" "+string(status), func() bool {
		b, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
		if err == nil {
			rc = b.Receipt
		}
		return err == nil && rc.Status == status
	})
	return rc
}

// A run made to address requested changes runs in the commented run's
// session; killed while it waits for an approval, it is resumed in that
// session after the restart: the same approval asked again, the new diff
// on top of the commented run's, the session listing the resumed run.
func TestKill9WhileARequestedChangeWaitsThenResumeInItsSession(t *testing.T) {
	data, roots := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(roots, "notes"), 0o755)
	os.WriteFile(filepath.Join(roots, "notes", "a.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(roots, "first.yaml"), []byte("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"One\\n\"}}]}\n  - reply: {content: Capitalised.}\n"), 0o644)
	os.WriteFile(filepath.Join(roots, "changes.yaml"), []byte("steps:\n  - expect: {last_contains: \"a.txt:1: and write b\"}\n    reply: {tool_calls: [{id: w1, name: write_file, arguments: {path: b.txt, content: \"b\\n\"}}, {id: c1, name: run_command, arguments: {command: \"ls\"}}]}\n"), 0o644)
	os.WriteFile(filepath.Join(roots, "after.yaml"), []byte("steps:\n  - expect: {last_role: tool}\n    reply: {content: Wrote b.txt.}\n"), 0o644)
	cmd, s := serveChild(t, data, roots)
	code, out := s.postJSON(t, "/api/v1/runs", `{"path": "notes", "task": "Capitalise a.txt", "script": "first.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, out)
	}
	first := out["run_id"].(string)
	awaitStatus(t, data, first, bundle.StatusAwaitingReview)
	code, out = s.postJSON(t, "/api/v1/runs/"+first+"/changes", `{"reviewer": "ana", "summary": "One more file.", "comments": [{"path": "a.txt", "line": 1, "text": "and write b"}], "script": "changes.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("request changes: %d %v", code, out)
	}
	changes := out["run_id"].(string)
	s = killWhileWaitingThenRestart(t, cmd, s, changes, data, roots)
	cut := awaitStatus(t, data, changes, bundle.StatusInterrupted)
	next := resumeAndApprove(t, s, changes)
	rc := awaitStatus(t, data, next, bundle.StatusAwaitingReview)
	if rc.SessionID != cut.SessionID || rc.SessionID != "sess-"+first || rc.Resumes != changes || rc.Addresses != first || strings.Join(rc.Changed, ",") != "b.txt" {
		t.Fatalf("the resumed run: session %s resumes %s addresses %s changed %v", rc.SessionID, rc.Resumes, rc.Addresses, rc.Changed)
	}
	// The session names the run by the time its receipt says it ended.
	sess, err := bundle.ReadSession(filepath.Join(data, "sessions", rc.SessionID+".json"), bundle.DefaultLimits())
	if err != nil || strings.Join(sess.Runs, ",") != first+","+next {
		t.Fatalf("session %+v (%v), want %s then %s", sess, err, first, next)
	}
	// The commented run is approved first, then the resumed one: both reach
	// the source in order.
	for _, id := range []string{first, next} {
		if code, out := s.postJSON(t, "/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "ana"}`); code != http.StatusOK {
			t.Fatalf("approve %s: %d %v", id, code, out)
		}
	}
	a, _ := os.ReadFile(filepath.Join(roots, "notes", "a.txt"))
	b, _ := os.ReadFile(filepath.Join(roots, "notes", "b.txt"))
	if string(a) != "One\n" || string(b) != "b\n" {
		t.Fatalf("the source: a.txt %q, b.txt %q", a, b)
	}
}

func TestKill9WhileARunWaitsThenResume(t *testing.T) {
	data, roots := t.TempDir(), t.TempDir()
	if err := os.CopyFS(filepath.Join(roots, "invoice"), os.DirFS(demoSource(t))); err != nil {
		t.Fatal(err)
	}
	demoYAML, _ := os.ReadFile("../demo/demo.yaml")
	os.WriteFile(filepath.Join(roots, "demo.yaml"), demoYAML, 0o644)
	os.WriteFile(filepath.Join(roots, "after.yaml"), []byte("steps:\n  - expect: {last_role: tool}\n    reply: {content: Tested after the restart.}\n"), 0o644)
	cmd, s := serveChild(t, data, roots)
	code, out := s.postJSON(t, "/api/v1/runs", `{"path": "invoice", "task": "Fix the rounding bug", "script": "demo.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, out)
	}
	id := out["run_id"].(string)
	s = killWhileWaitingThenRestart(t, cmd, s, id, data, roots)
	b, _ := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	if b.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("after the restart the run is %s", b.Receipt.Status)
	}
	next := resumeAndApprove(t, s, id)
	// The approved call is the demo's `go test ./...`, which compiles: on a
	// busy machine that takes a while.
	rc := awaitStatusWithin(t, 2*time.Minute, data, next, bundle.StatusAwaitingReview)
	if strings.Join(rc.Changed, ",") != "money.go,money_test.go" || rc.Resumes == "" {
		t.Fatalf("the resumed run: %+v", rc)
	}
	ev, _ := os.ReadFile(filepath.Join(data, "runs", next, bundle.EventsFile))
	if !strings.Contains(string(ev), `"go test ./..."`) || !strings.Contains(string(ev), `"by":"ana"`) {
		t.Fatalf("the resumed run's events:\n%s", ev)
	}
}
