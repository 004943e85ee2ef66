package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

type waitForever struct{ asked chan struct{} }

func (w waitForever) Waits() bool { return true }
func (w waitForever) Approve(ctx context.Context, _ agent.ApprovalRequest) (agent.Decision, error) {
	close(w.asked)
	<-ctx.Done()
	return agent.Decision{}, ctx.Err()
}

func parseScript(t *testing.T, src string) *script.Script {
	t.Helper()
	s, err := script.Parse("model.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A run stopped while it waits for an approval is resumed as a new run:
// its workspace as it was (the file written before the stop is in the new
// diff), its conversation rebuilt, and the call that waited asked about
// again before the model is called.
func TestAnInterruptedRunIsResumed(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	r := &run.Runner{DataDir: t.TempDir()}
	w := waitForever{asked: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-w.asked; time.Sleep(50 * time.Millisecond); cancel() }()
	first, _ := r.Run(ctx, run.Spec{SourceDir: src, Task: "write b, then list", Bounds: bounds.Defaults(), Approver: w,
		Model: run.ModelChoice{Script: parseScript(t, "steps:\n  - reply: {tool_calls: [{id: w1, name: write_file, arguments: {path: b.txt, content: \"b\\n\"}}, {id: c1, name: run_command, arguments: {command: \"ls\"}}]}\n")}})
	if first == nil || first.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("the first run: %+v", first)
	}
	spec, err := r.ResumeSpec(first.Receipt.RunID)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	spec.Approver = agent.Chain{Next: approveAll(func() { asked++ })}
	spec.Model = run.ModelChoice{Script: parseScript(t, "steps:\n  - expect: {last_contains: \"b.txt\"}\n    reply: {content: \"Wrote b.txt and listed it.\"}\n")}
	res, err := r.Run(context.Background(), spec)
	if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview || res.Receipt.Resumes != first.Receipt.RunID {
		t.Fatalf("the resumed run: %v %+v %+v", err, res.Receipt, res.Receipt.Failure)
	}
	if asked != 1 {
		t.Errorf("the waiting call was asked about %d times, want 1", asked)
	}
	if strings.Join(res.Receipt.Changed, ",") != "b.txt" {
		t.Errorf("changed %v, want b.txt (written before the stop)", res.Receipt.Changed)
	}
	tr, _ := os.ReadFile(filepath.Join(res.Dir, bundle.TranscriptFile))
	if !strings.Contains(string(tr), "its output was not kept") || !strings.Contains(string(tr), "## tool run_command (c1) — approved") {
		t.Errorf("transcript:\n%s", tr)
	}
	if _, err := r.ResumeSpec(res.Receipt.RunID); err == nil {
		t.Error("a run that was not interrupted was resumed")
	}
}

type approveAll func()

func (f approveAll) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	f()
	return agent.Decision{Approved: true, By: "test", Reason: "ok"}, nil
}
