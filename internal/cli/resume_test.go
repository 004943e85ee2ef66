package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// waitThenStop is an approver that stops its run (as Ctrl-C would) once
// it is asked.
type waitThenStop struct{ stop context.CancelFunc }

func (w waitThenStop) Waits() bool { return true }
func (w waitThenStop) Approve(ctx context.Context, _ agent.ApprovalRequest) (agent.Decision, error) {
	time.AfterFunc(50*time.Millisecond, w.stop)
	<-ctx.Done()
	return agent.Decision{}, ctx.Err()
}

// proctor run --resume goes on from an interrupted run with the model and
// approvals given: the call that waited is asked again (allowed here by
// --allow), the new diff holds what was written before the stop, and the
// flags that belong to the interrupted run are refused.
func TestRunResumeGoesOnFromAnInterruptedRun(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "a\n"})
	writeTree(t, dir, map[string]string{"after.yaml": "steps:\n  - expect: {last_role: tool}\n    reply: {content: Listed after the restart.}\n"})
	sc, err := script.Parse("first.yaml", []byte("steps:\n  - reply: {tool_calls: [{id: w1, name: write_file, arguments: {path: b.txt, content: \"b\\n\"}}, {id: c1, name: run_command, arguments: {command: \"ls\"}}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cut, err := (&run.Runner{DataDir: data}).Run(ctx, run.Spec{SourceDir: src, Task: "write b, then list", Bounds: bounds.Defaults(),
		Model: run.ModelChoice{Script: sc}, Approver: waitThenStop{cancel}, Sandbox: "off"})
	if err != nil || cut.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("the run to resume: %v %+v", err, cut)
	}
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	id := cut.Receipt.RunID
	for _, bad := range [][]string{
		{"run", "--resume", id, "--task", "other", "--script", filepath.Join(dir, "after.yaml")},
		{"run", "--resume", id, "--dir", src, "--script", filepath.Join(dir, "after.yaml")},
		{"run", "--resume", "no-such-run", "--script", filepath.Join(dir, "after.yaml")},
		{"run", "--resume", id, "--replay", id, "--script", filepath.Join(dir, "after.yaml")},
		{"run", "--resume", id},
	} {
		if r := invoke(t, env, bad...); r.code != ExitUsage {
			t.Errorf("%v: %+v, want a usage error", bad, r)
		}
	}
	r := invoke(t, env, "run", "--resume", id, "--script", filepath.Join(dir, "after.yaml"), "--allow", "ls")
	if r.code != ExitOK || !strings.Contains(r.stdout, "status: awaiting review") {
		t.Fatalf("resume: %+v", r)
	}
	next := regexp.MustCompile(`(?m)^run (\S+):`).FindStringSubmatch(r.stdout)
	if next == nil {
		t.Fatalf("no run id in:\n%s", r.stdout)
	}
	b, err := bundle.ReadRun(filepath.Join(data, "runs", next[1]), bundle.DefaultLimits())
	if err != nil || b.Receipt.Resumes != id || strings.Join(b.Receipt.Changed, ",") != "b.txt" {
		t.Fatalf("the resumed run (%v):\n%s", err, r.stdout)
	}
	ev, _ := os.ReadFile(filepath.Join(data, "runs", next[1], bundle.EventsFile))
	if !strings.Contains(string(ev), `"command":"ls"`) || !strings.Contains(string(ev), `"approved":true,"by":"policy"`) {
		t.Fatalf("the call that waited was not asked again and allowed:\n%s", ev)
	}
}
