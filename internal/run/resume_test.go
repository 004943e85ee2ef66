package run_test

import (
	"context"
	"encoding/json"
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
	// A receipt is a file anyone may have edited: a sandbox mode it names
	// is read as a person's would be.
	receipt := filepath.Join(first.Dir, bundle.ReceiptFile)
	orig, _ := os.ReadFile(receipt)
	var m map[string]any
	json.Unmarshal(orig, &m)
	m["sandbox"] = "loose"
	edited, _ := json.Marshal(m)
	os.WriteFile(receipt, edited, 0o644)
	if _, err := r.ResumeSpec(context.Background(), first.Receipt.RunID); err == nil || !strings.Contains(err.Error(), `sandbox: "loose" is not one of workspace, strict, off`) {
		t.Fatalf("a receipt's unknown sandbox mode: %v", err)
	}
	os.WriteFile(receipt, orig, 0o644)
	spec, err := r.ResumeSpec(context.Background(), first.Receipt.RunID)
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
	if _, err := r.ResumeSpec(context.Background(), res.Receipt.RunID); err == nil {
		t.Error("a run that was not interrupted was resumed")
	}
}

type approveAll func()

func (f approveAll) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	f()
	return agent.Decision{Approved: true, By: "test", Reason: "ok"}, nil
}

// interruptWhileAsked runs spec until its approver is asked, then stops it
// as a server's stop would; the run must end interrupted.
func interruptWhileAsked(t *testing.T, r *run.Runner, spec run.Spec) *run.Result {
	t.Helper()
	w := waitForever{asked: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-w.asked; time.Sleep(50 * time.Millisecond); cancel() }()
	spec.Approver = w
	res, err := r.Run(ctx, spec)
	if err != nil || res.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("the run that waits: %v %+v", err, res)
	}
	return res
}

const writeThenAsk = "steps:\n  - reply: {tool_calls: [{id: w1, name: write_file, arguments: {path: b.txt, content: \"b\\n\"}}, {id: c1, name: run_command, arguments: {command: \"ls\"}}]}\n"

// resumeOK resumes run id with a model that expects to see b.txt, approving
// the call that waited, and returns the resumed run.
func resumeOK(t *testing.T, r *run.Runner, id string) *run.Result {
	t.Helper()
	spec, err := r.ResumeSpec(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	spec.Approver = agent.Chain{Next: approveAll(func() {})}
	spec.Model = run.ModelChoice{Script: parseScript(t, "steps:\n  - expect: {last_contains: \"b.txt\"}\n    reply: {content: \"Wrote b.txt and listed it.\"}\n")}
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("resume %s: %v", id, err)
	}
	if res.Receipt.Status != bundle.StatusAwaitingReview || res.Receipt.Resumes != id {
		t.Fatalf("the resumed run: %+v %+v", res.Receipt, res.Receipt.Failure)
	}
	return res
}

// A run of a session (a later one, or the first, stopped before the
// session file was written) is resumed in its session: on the session's
// workspace as the run left it, diffed against that run's base, and the
// session lists the resumed run. Once another run has continued the
// session, the interrupted run is no longer resumed.
func TestASessionsRunIsResumedInItsSession(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	r := &run.Runner{DataDir: t.TempDir()}
	writeA := parseScript(t, "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"A\\n\"}}]}\n  - reply: {content: done}\n")
	first, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: "edit a", Bounds: bounds.Defaults(), Session: "new", Model: run.ModelChoice{Script: writeA}})
	if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("the first run: %v %+v", err, first)
	}
	sid := first.Receipt.SessionID
	cut := interruptWhileAsked(t, r, run.Spec{Task: "write b, then list", Bounds: bounds.Defaults(), Session: sid, Model: run.ModelChoice{Script: parseScript(t, writeThenAsk)}})
	res := resumeOK(t, r, cut.Receipt.RunID)
	if res.Receipt.SessionID != sid || strings.Join(res.Receipt.Changed, ",") != "b.txt" || res.Receipt.Source.Path != src {
		t.Errorf("resumed: session %s, changed %v, source %s; want %s, b.txt (a.txt was the first run's), %s", res.Receipt.SessionID, res.Receipt.Changed, res.Receipt.Source.Path, sid, src)
	}
	s, err := r.Records().LoadSession(sid)
	if err != nil || strings.Join(s.Runs, ",") != first.Receipt.RunID+","+cut.Receipt.RunID+","+res.Receipt.RunID {
		t.Errorf("session runs %v (%v), want the first, the interrupted and the resumed", s.Runs, err)
	}
	earlier, err := r.Records().EarlierInSession(&res.Receipt)
	if err != nil || len(earlier) != 1 || earlier[0].RunID != first.Receipt.RunID {
		t.Errorf("earlier in the session %+v (%v), want the first run alone (the interrupted one's changes are the resumed one's)", earlier, err)
	}
	if _, err := r.ResumeSpec(context.Background(), cut.Receipt.RunID); err == nil || !strings.Contains(err.Error(), "resumed already") {
		t.Errorf("resuming twice: %v", err)
	}
	next, err := r.Run(context.Background(), run.Spec{Task: "and c", Bounds: bounds.Defaults(), Session: sid, Model: run.ModelChoice{Script: parseScript(t, "steps:\n  - reply: {content: done}\n")}})
	if err != nil || next.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("continue the session: %v %+v", err, next)
	}
	if _, err := r.ResumeSpec(context.Background(), cut.Receipt.RunID); err == nil || !strings.Contains(err.Error(), "continue the session") {
		t.Errorf("resuming after the session went on: %v", err)
	}

	t.Run("the session's first run, killed before the session was written", func(t *testing.T) {
		cut := interruptWhileAsked(t, r, run.Spec{SourceDir: src, Task: "write b, then list", Bounds: bounds.Defaults(), Session: "new", Model: run.ModelChoice{Script: parseScript(t, writeThenAsk)}})
		// A killed process writes no session file (a stopped one does).
		if err := os.Remove(filepath.Join(r.DataDir, "sessions", cut.Receipt.SessionID+".json")); err != nil {
			t.Fatal(err)
		}
		res := resumeOK(t, r, cut.Receipt.RunID)
		s, err := r.Records().LoadSession(cut.Receipt.SessionID)
		if err != nil || strings.Join(s.Runs, ",") != res.Receipt.RunID || s.Source != src {
			t.Errorf("session %+v (%v), want the resumed run over %s", s, err, src)
		}
	})
}

// A run on a repository is resumed on a copy of its clone, and the
// resumed run's receipt names the same repository, ref and commit.
func TestARepositoryRunIsResumedWithItsSource(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	r := &run.Runner{DataDir: t.TempDir()}
	cut := interruptWhileAsked(t, r, run.Spec{SourceDir: src, Task: "write b, then list", Bounds: bounds.Defaults(), Model: run.ModelChoice{Script: parseScript(t, writeThenAsk)}})
	// Make the record say what a repository run's says: the clone is the
	// workspace, the source a repository pinned to the base.
	rc := cut.Receipt
	rc.Source = bundle.Source{Kind: "git", Repository: "https://git.example/o/n.git", Ref: "main", CommitSHA: rc.Source.CommitSHA, Tree: "t"}
	if err := bundle.WriteJSON(filepath.Join(cut.Dir, bundle.ReceiptFile), rc); err != nil {
		t.Fatal(err)
	}
	res := resumeOK(t, r, rc.RunID)
	if got := res.Receipt.Source; got.Kind != "git" || got.Repository != rc.Source.Repository || got.Ref != "main" || got.CommitSHA != rc.Source.CommitSHA || got.Path != "" {
		t.Errorf("resumed source %+v, want %+v", got, rc.Source)
	}
	if strings.Join(res.Receipt.Changed, ",") != "b.txt" {
		t.Errorf("changed %v", res.Receipt.Changed)
	}
}
