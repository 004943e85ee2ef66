package gate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// demoRun makes a finished demo run awaiting review, with its source.
func demoRun(t *testing.T) (runDir, src string) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "invoice")
	if err := demo.WriteFixture(src); err != nil {
		t.Fatal(err)
	}
	s, _ := demo.Script()
	r := &run.Runner{DataDir: t.TempDir()}
	res, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: demo.Task, Model: run.ModelChoice{Script: s},
		Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: []string{"go test"}}})
	if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("demo run: %v %+v", err, res)
	}
	return res.Dir, src
}

func approve(by string) gate.Reviewer {
	return gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: by, Reason: "looks right"}, nil
	})
}

// opts are the gate options of a run made on this host: its own source
// folder (a local source's) as the tree an approval writes, and its own
// workspace's repository as the base.
func opts(runDir string) gate.Options {
	o := gate.Options{Workspace: filepath.Join(runDir, "workspace")}
	if b, err := bundle.ReadRun(runDir, bundle.DefaultLimits()); err == nil && b.Receipt.Source.Kind == bundle.SourceLocal {
		o.Tree = b.Receipt.Source.Path
	}
	return o
}

func TestApproveAppliesTheDiff(t *testing.T) {
	runDir, src := demoRun(t)
	rv, err := gate.Review(context.Background(), runDir, approve("ana"), opts(runDir))
	if err != nil {
		t.Fatal(err)
	}
	if !rv.Approved || !rv.Applied || rv.ReviewedBy != "ana" || strings.Join(rv.Changed, ",") != "money.go,money_test.go" {
		t.Fatalf("review = %+v", rv)
	}
	data, _ := os.ReadFile(filepath.Join(src, "money.go"))
	if !strings.Contains(string(data), "math.Round(euros * 100)") || !strings.Contains(string(data), `import "math"`) {
		t.Fatalf("source not patched:\n%s", data)
	}
	b, _ := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if b.Receipt.Review == nil || !b.Receipt.Review.Applied || b.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("receipt = %+v", b.Receipt)
	}
	// Exactly once: a second review sees the first.
	_, err = gate.Review(context.Background(), runDir, approve("bo"), opts(runDir))
	if !errors.Is(err, gate.ErrAlreadyReviewed) || !strings.Contains(err.Error(), "by ana") {
		t.Fatalf("second review: %v", err)
	}
}

func TestDecisionRules(t *testing.T) {
	reject := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: false, By: "bo", Reason: "wrong approach"}, nil
	})
	tests := []struct {
		name     string
		reviewer gate.Reviewer
		readOnly bool
		by       string
		reason   string
	}{
		{"read-only run", approve("ana"), true, "gate", "write not requested"},
		{"no reviewer", nil, false, "gate", "no reviewer: denied (fail closed)"},
		{"rejected", reject, false, "bo", "wrong approach"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runDir, src := demoRun(t)
			before, _ := os.ReadFile(filepath.Join(src, "money.go"))
			o := opts(runDir)
			o.ReadOnly = tc.readOnly
			rv, err := gate.Review(context.Background(), runDir, tc.reviewer, o)
			if err != nil {
				t.Fatal(err)
			}
			if rv.Approved || rv.Applied || rv.ReviewedBy != tc.by || !strings.Contains(rv.Reason, tc.reason) {
				t.Fatalf("review = %+v", rv)
			}
			if after, _ := os.ReadFile(filepath.Join(src, "money.go")); string(after) != string(before) {
				t.Fatal("the source changed")
			}
			// A decision is a review state, never an agent failure.
			if rc := receiptOf(t, runDir); rc.Status != bundle.StatusPassed || rc.Failure != nil {
				t.Fatalf("after the review: status %s, failure %+v", rc.Status, rc.Failure)
			}
		})
	}
}

func TestNoChangesNothingToApply(t *testing.T) {
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	s, _ := script.Parse("s.yaml", []byte("steps:\n  - reply: {content: nothing to do}\n"))
	res, err := (&run.Runner{DataDir: t.TempDir()}).Run(context.Background(), run.Spec{SourceDir: src, Task: "look", Model: run.ModelChoice{Script: s}, Bounds: bounds.Defaults()})
	if err != nil || res.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("%v %+v", err, res.Receipt)
	}
	rv, err := gate.Review(context.Background(), res.Dir, approve("ana"), opts(res.Dir))
	if err != nil || rv.Approved || rv.HasDiff || !strings.Contains(rv.Reason, "nothing to apply") {
		t.Fatalf("%+v %v", rv, err)
	}
}

func TestConflictAppliesNothing(t *testing.T) {
	runDir, src := demoRun(t)
	os.WriteFile(filepath.Join(src, "money.go"), []byte("package money\n// edited by a person meanwhile\n"), 0o644)
	_, err := gate.Review(context.Background(), runDir, approve("ana"), opts(runDir))
	var ce *gate.ConflictError
	if !errors.As(err, &ce) || strings.Join(ce.Files, ",") != "money.go" {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "money.go")); !strings.Contains(string(data), "edited by a person") {
		t.Fatal("the conflicting file was overwritten")
	}
	b, _ := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if b.Receipt.Review != nil || b.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatal("a conflict recorded a review")
	}
}

// Every file that changed in the source since the run began is named,
// before anything is written: one the run edited and one it made new,
// which a person has since made in the source.
func TestAConflictNamesEveryFile(t *testing.T) {
	runDir, src := partsRun(t)
	os.WriteFile(filepath.Join(src, "new.txt"), []byte("made by a person meanwhile\n"), 0o644)
	data, _ := os.ReadFile(filepath.Join(src, "notes.txt"))
	os.WriteFile(filepath.Join(src, "notes.txt"), append(data, "edited meanwhile\n"...), 0o644)
	_, err := gate.Review(context.Background(), runDir, approve("ana"), opts(runDir))
	var ce *gate.ConflictError
	if !errors.As(err, &ce) || strings.Join(ce.Files, ",") != "new.txt,notes.txt" && strings.Join(ce.Files, ",") != "notes.txt,new.txt" {
		t.Fatalf("err = %v, want a conflict naming new.txt and notes.txt", err)
	}
	if got, _ := os.ReadFile(filepath.Join(src, "new.txt")); string(got) != "made by a person meanwhile\n" {
		t.Fatalf("new.txt was overwritten: %q", got)
	}
	if _, err := os.Stat(filepath.Join(runDir, ".review")); err == nil {
		t.Fatal("a journal was written for a conflict")
	}
}

func TestConcurrentApprovalsApplyOnce(t *testing.T) {
	runDir, _ := demoRun(t)
	var wg sync.WaitGroup
	results := make([]error, 8)
	for i := range results {
		wg.Go(func() {
			_, results[i] = gate.Review(context.Background(), runDir, approve("r"+string(rune('a'+i))), opts(runDir))
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, gate.ErrBusy), errors.Is(err, gate.ErrAlreadyReviewed):
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d reviews succeeded, want exactly 1", ok)
	}
	events, _, _ := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	n := 0
	for _, e := range events {
		if e.Type == "review.decided" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d review events", n)
	}
}

// receiptOf reads the run's receipt.
func receiptOf(t *testing.T, runDir string) bundle.Receipt {
	t.Helper()
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return b.Receipt
}

func countEvents(t *testing.T, runDir, typ string) int {
	t.Helper()
	events, _, _ := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// `proctor apply ID < /dev/null` once recorded a permanent rejection. A
// reviewer that gives no answer decides nothing.
func TestNoAnswerDecidesNothing(t *testing.T) {
	runDir, src := demoRun(t)
	before, _ := os.ReadFile(filepath.Join(src, "money.go"))
	noAnswer := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{}, errors.New("end of input")
	})
	_, err := gate.Review(context.Background(), runDir, noAnswer, opts(runDir))
	if !errors.Is(err, gate.ErrNoDecision) {
		t.Fatalf("err = %v, want ErrNoDecision", err)
	}
	rc := receiptOf(t, runDir)
	if rc.Review != nil || rc.Status != bundle.StatusAwaitingReview || countEvents(t, runDir, "review.decided") != 0 {
		t.Fatalf("no answer recorded something: %+v", rc.Review)
	}
	if after, _ := os.ReadFile(filepath.Join(src, "money.go")); string(after) != string(before) {
		t.Fatal("the source changed")
	}
	if _, err := gate.Review(context.Background(), runDir, approve("ana"), opts(runDir)); err != nil {
		t.Fatalf("a later answer is refused: %v", err)
	}
}

// setStatus rewrites the run's receipt with another outcome.
func setStatus(t *testing.T, runDir string, status bundle.Status, code string) {
	t.Helper()
	rc := receiptOf(t, runDir)
	rc.Status = status
	rc.Failure = nil
	if code != "" {
		rc.Failure = &bundle.Failure{Domain: bundle.DomainAgent, Stage: bundle.StageVerifying, Code: code, Message: "the checks failed"}
	}
	if err := bundle.WriteReceipt(runDir, &rc); err != nil {
		t.Fatal(err)
	}
}

// A run whose checks failed was once approved through the API and applied,
// its status turned passed while failure.code still said verify_failed.
func TestRunsThatDidNotSucceedAreAppliedOnlyWhenForced(t *testing.T) {
	tests := []struct {
		status   bundle.Status
		code     string
		forcible bool
	}{
		{bundle.StatusFailed, "verify_failed", true},
		{bundle.StatusError, "model_unavailable", true},
		{bundle.StatusInterrupted, "", true},
		{bundle.StatusRunning, "", false},
		{bundle.StatusAwaitingApproval, "", false},
	}
	for _, tc := range tests {
		t.Run(string(tc.status), func(t *testing.T) {
			runDir, src := demoRun(t)
			setStatus(t, runDir, tc.status, tc.code)
			before, _ := os.ReadFile(filepath.Join(src, "money.go"))
			_, err := gate.Review(context.Background(), runDir, approve("ana"), opts(runDir))
			var na *gate.NotAppliableError
			if !errors.As(err, &na) || na.Forcible != tc.forcible {
				t.Fatalf("plain approval: %v", err)
			}
			if after, _ := os.ReadFile(filepath.Join(src, "money.go")); string(after) != string(before) {
				t.Fatal("the source changed")
			}
			if rc := receiptOf(t, runDir); rc.Review != nil || rc.Status != tc.status {
				t.Fatalf("receipt changed: %+v", rc)
			}
			o := opts(runDir)
			o.Force = true
			rv, err := gate.Review(context.Background(), runDir, approve("ana"), o)
			if !tc.forcible {
				if !errors.As(err, &na) {
					t.Fatalf("forced approval of a run that has not ended: %v", err)
				}
				return
			}
			if err != nil || !rv.Applied || !rv.Forced {
				t.Fatalf("forced approval: %+v %v", rv, err)
			}
			rc := receiptOf(t, runDir)
			if rc.Status != tc.status || (tc.code != "" && (rc.Failure == nil || rc.Failure.Code != tc.code)) || !rc.Review.Forced {
				t.Fatalf("the receipt is no longer truthful: status %s failure %+v review %+v", rc.Status, rc.Failure, rc.Review)
			}
		})
	}
	// Rejecting a failed run needs no force.
	runDir, _ := demoRun(t)
	setStatus(t, runDir, bundle.StatusFailed, "verify_failed")
	reject := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{By: "bo", Reason: "no"}, nil
	})
	if rv, err := gate.Review(context.Background(), runDir, reject, opts(runDir)); err != nil || rv.Approved {
		t.Fatalf("reject a failed run: %+v %v", rv, err)
	}
	if rc := receiptOf(t, runDir); rc.Status != bundle.StatusFailed || rc.Failure.Code != "verify_failed" {
		t.Fatalf("a rejection rewrote the failure: %+v", rc.Failure)
	}
}

func TestRecordRunsOnceAndTheJournalIsRemoved(t *testing.T) {
	runDir, _ := demoRun(t)
	var got []gate.Decided
	o := opts(runDir)
	o.Actor, o.Address = "ana", "192.0.2.1"
	o.Record = func(_ context.Context, d gate.Decided) error { got = append(got, d); return nil }
	if _, err := gate.Review(context.Background(), runDir, approve("ana"), o); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Action() != "approve" || got[0].Actor != "ana" || got[0].Op == "" || !got[0].Review.Applied {
		t.Fatalf("recorded %+v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(runDir, ".review*")); len(left) != 0 {
		t.Fatalf("journal left behind: %v", left)
	}
	if d, err := gate.Recover(context.Background(), runDir, o.Record); d != nil || err != nil || len(got) != 1 {
		t.Fatalf("recover after a clean review: %+v %v", d, err)
	}
}

// partsRun makes a finished run whose diff has a text file with three
// hunks and a new file, awaiting review, with its source.
func partsRun(t *testing.T) (runDir, src string) {
	t.Helper()
	src = t.TempDir()
	var base, changed []string
	for i := 1; i <= 40; i++ {
		base = append(base, fmt.Sprintf("line %d", i))
	}
	changed = append(changed, base...)
	changed[1], changed[19], changed[37] = "line 2 changed", "line 20 changed", "line 38 changed"
	os.WriteFile(filepath.Join(src, "notes.txt"), []byte(strings.Join(base, "\n")+"\n"), 0o644)
	yaml := fmt.Sprintf("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: notes.txt, content: %q}}, {name: write_file, arguments: {path: new.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n",
		strings.Join(changed, "\n")+"\n")
	s, err := script.Parse("model.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r := &run.Runner{DataDir: t.TempDir()}
	res, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: "change notes", Model: run.ModelChoice{Script: s}, Bounds: bounds.Defaults()})
	if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("run: %v %+v", err, res)
	}
	return res.Dir, src
}

func approveParts(by string, parts ...patch.Choice) gate.Reviewer {
	return gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: by, Parts: parts}, nil
	})
}

// Approving part by part applies exactly the accepted hunks, once, and
// the receipt says which were applied, rejected and edited, and by whom.
func TestApplyAcceptedAppliesOnlyThoseParts(t *testing.T) {
	runDir, src := partsRun(t)
	edit := "line 35\nline 36\nline 37\nline 38 as the reviewer wants it\nline 39\nline 40" // the hunk's new side, one line rewritten
	// The files of the diff are in path order: new.txt (0), notes.txt (1).
	_, err := gate.Review(context.Background(), runDir, approveParts("ana",
		patch.Choice{File: 1, Hunk: 0, Accept: true}, patch.Choice{File: 1, Hunk: 1, Accept: false},
		patch.Choice{File: 1, Hunk: 2, Accept: true, Edit: &edit}), opts(runDir))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(src, "notes.txt"))
	lines := strings.Split(string(got), "\n")
	if lines[1] != "line 2 changed" || lines[19] != "line 20" || lines[37] != "line 38 as the reviewer wants it" {
		t.Fatalf("notes.txt:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(src, "new.txt")); err == nil {
		t.Fatal("new.txt was given no decision, yet it was applied")
	}
	rc := receiptOf(t, runDir)
	if rc.Review == nil || !rc.Review.Applied || rc.Review.ReviewedBy != "ana" || strings.Join(rc.Review.Changed, ",") != "notes.txt" ||
		len(rc.Review.AppliedParts) != 2 || len(rc.Review.RejectedParts) != 2 || len(rc.Review.Edits) != 1 {
		t.Fatalf("review = %+v", rc.Review)
	}
	if e := rc.Review.Edits[0]; e.Path != "notes.txt" || e.Hunk != 3 || !strings.Contains(e.Proposed, "line 38 changed") || e.Applied != edit {
		t.Fatalf("edit = %+v", e)
	}
	if r := rc.Review.RejectedParts; r[0].Path != "new.txt" || r[0].Hunk != 0 || r[1].Hunk != 2 {
		t.Fatalf("rejected = %+v", r)
	}
	if _, err := gate.Review(context.Background(), runDir, approve("bo"), opts(runDir)); !errors.Is(err, gate.ErrAlreadyReviewed) {
		t.Fatalf("a second review: %v", err)
	}
}

// A partial approval is conflict-checked per file it writes: a file
// changed in the source (even only near a rejected hunk) refuses the whole
// approval, and a file none of whose parts is accepted is not checked.
func TestApplyAcceptedConflicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		parts    []patch.Choice
		conflict bool
	}{
		{"a line beside the rejected hunk changed", []patch.Choice{{File: 1, Hunk: 0, Accept: true}, {File: 1, Hunk: 1, Accept: false}}, true},
		{"only new.txt accepted", []patch.Choice{{File: 0, Hunk: patch.Whole, Accept: true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir, src := partsRun(t)
			data, _ := os.ReadFile(filepath.Join(src, "notes.txt"))
			edited := strings.Replace(string(data), "line 21\n", "line 21, edited by a person meanwhile\n", 1)
			os.WriteFile(filepath.Join(src, "notes.txt"), []byte(edited), 0o644)
			_, err := gate.Review(context.Background(), runDir, approveParts("ana", tc.parts...), opts(runDir))
			var ce *gate.ConflictError
			if got := errors.As(err, &ce); got != tc.conflict {
				t.Fatalf("conflict %v, want %v: %v", got, tc.conflict, err)
			}
			if now, _ := os.ReadFile(filepath.Join(src, "notes.txt")); string(now) != edited {
				t.Fatal("the person's edit was overwritten")
			}
			_, err = os.Stat(filepath.Join(src, "new.txt"))
			if applied := err == nil; applied == tc.conflict {
				t.Fatalf("new.txt applied: %v", applied)
			}
		})
	}
	runDir, _ := partsRun(t)
	if _, err := gate.Review(context.Background(), runDir, approveParts("ana", patch.Choice{File: 1, Hunk: 0, Accept: false}), opts(runDir)); !errors.Is(err, gate.ErrNothingAccepted) {
		t.Fatalf("nothing accepted: %v", err)
	}
	if _, err := gate.Review(context.Background(), runDir, approveParts("ana", patch.Choice{File: 7, Hunk: 0, Accept: true}), opts(runDir)); !errors.Is(err, patch.ErrNoSuchPart) {
		t.Fatalf("a part that is not there: %v", err)
	}
	if rc := receiptOf(t, runDir); rc.Review != nil {
		t.Fatal("a refused approval recorded a review")
	}
}
