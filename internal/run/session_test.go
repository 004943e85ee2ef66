package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

func TestSessionContinuesConversationAndWorkspace(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	r := &run.Runner{DataDir: t.TempDir()}
	first, _ := script.Parse("first.yaml", []byte(`steps:
  - reply:
      tool_calls: [{name: write_file, arguments: {path: CHANGELOG.md, content: "v1\n"}}]
  - reply:
      content: "Should the changelog mention the date?"
      tool_calls: [{name: ask_user, arguments: {question: "Mention the date?"}}]
`))
	res1, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "start a changelog", Model: run.ModelChoice{Script: first}, Bounds: bounds.Defaults(), Session: "new"})
	if err != nil {
		t.Fatal(err)
	}
	sid := res1.Receipt.SessionID
	if res1.Receipt.Status != bundle.StatusAwaitingInput || sid == "" {
		t.Fatalf("first run: %s, session %q", res1.Receipt.Status, sid)
	}
	// The answer continues the same conversation in the same workspace.
	second, _ := script.Parse("second.yaml", []byte(`steps:
  - expect: {last_role: user, last_contains: "yes, with the date"}
    reply:
      tool_calls: [{name: edit_file, arguments: {path: CHANGELOG.md, search: "v1", replace: "v1 (2026-12-02)"}}]
  - reply: {content: "Added the date."}
`))
	res2, err := r.Run(ctx, run.Spec{Task: "yes, with the date", Model: run.ModelChoice{Script: second}, Bounds: bounds.Defaults(), Session: sid})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Receipt.Status != bundle.StatusAwaitingReview || res2.Receipt.SessionID != sid {
		t.Fatalf("second run: %+v %+v", res2.Receipt.Status, res2.Receipt.Failure)
	}
	// The second run's diff holds only its own change.
	diff, _ := os.ReadFile(filepath.Join(res2.Dir, bundle.DiffFile))
	if !strings.Contains(string(diff), "-v1\n+v1 (2026-12-02)") || strings.Contains(string(diff), "new file mode") {
		t.Fatalf("second diff:\n%s", diff)
	}
	// The second request carried the whole first conversation.
	xlog, _, _ := bundle.ReadExchanges(res2.Dir, bundle.DefaultLimits())
	firstReq, _ := xlog.Request(0)
	if !strings.Contains(string(firstReq), "Mention the date?") || !strings.Contains(string(firstReq), "start a changelog") {
		t.Fatalf("history missing from %s", firstReq)
	}
	s, err := r.Records().LoadSession(sid)
	if err != nil || len(s.Runs) != 2 || s.Runs[0] != res1.RunID || s.Runs[1] != res2.RunID {
		t.Fatalf("session %+v %v", s, err)
	}
	if _, err := r.Run(ctx, run.Spec{Task: "x", Model: run.ModelChoice{Script: second}, Session: "no-such-session"}); err == nil {
		t.Fatal("an unknown session was accepted")
	}
}

// A session's later runs could never be applied: their receipts named the
// session workspace, which already holds their changes. They are applied to
// the session's source, in order.
func TestSessionRunsApplyToTheSourceInOrder(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	r := &run.Runner{DataDir: t.TempDir()}
	step := func(task, yaml string, session string) *run.Result {
		t.Helper()
		sc, err := script.Parse("s.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		spec := run.Spec{Task: task, Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults(), Session: session}
		if session == "new" {
			spec.SourceDir = src
		}
		res, err := r.Run(ctx, spec)
		if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview {
			t.Fatalf("%s: %v %+v", task, err, res)
		}
		return res
	}
	res1 := step("start a changelog", "steps:\n  - reply:\n      tool_calls: [{name: write_file, arguments: {path: CHANGELOG.md, content: \"v1\\n\"}}]\n  - reply: {content: done}\n", "new")
	sid := res1.Receipt.SessionID
	res2 := step("date it", "steps:\n  - reply:\n      tool_calls: [{name: edit_file, arguments: {path: CHANGELOG.md, search: \"v1\", replace: \"v1 (2026-12-03)\"}}]\n  - reply: {content: done}\n", sid)
	if res2.Receipt.Source.Path != src {
		t.Fatalf("the second run applies to %q, want the session's source %q", res2.Receipt.Source.Path, src)
	}
	approve := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "ana"}, nil
	})
	review := func(res *run.Result) error {
		rvw, err := r.Records().Review(res.RunID)
		opt := rvw.Options
		if err != nil {
			t.Fatal(err)
		}
		_, err = gate.Review(ctx, res.Dir, approve, opt)
		return err
	}
	// Out of order: the second waits for the first, and says so.
	var oo *gate.OutOfOrderError
	if err := review(res2); !errors.As(err, &oo) || oo.Waiting[0] != res1.RunID {
		t.Fatalf("approving run 2 first: %v", err)
	}
	if _, err := os.Stat(filepath.Join(src, "CHANGELOG.md")); err == nil {
		t.Fatal("something was applied out of order")
	}
	if err := review(res1); err != nil {
		t.Fatal(err)
	}
	if err := review(res2); err != nil {
		t.Fatalf("approving run 2 after run 1: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(src, "CHANGELOG.md")); string(data) != "v1 (2026-12-03)\n" {
		t.Fatalf("the source holds %q, want both runs' changes", data)
	}
}

// A session made of a run by a request for changes works in that run's
// workspace: the run that makes the changes is approved after the
// commented one, and both reach the source.
func TestRequestedChangesApplyAfterTheCommentedRun(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("one\n"), 0o644)
	r := &run.Runner{DataDir: t.TempDir()}
	script := func(yaml string) run.ModelChoice { return run.ModelChoice{Script: parseScript(t, yaml)} }
	first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "add two", Bounds: bounds.Defaults(),
		Model: script("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\ntwo\\n\"}}]}\n  - reply: {content: done}\n")})
	if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("first: %v %+v", err, first)
	}
	sid, msg, err := r.Records().RequestChanges(first.RunID, bundle.ChangeRequest{By: "ana", Comments: []bundle.Comment{{Path: "a.txt", Line: 2, Text: "shout it"}}})
	if err != nil {
		t.Fatal(err)
	}
	next, err := r.Run(ctx, run.Spec{Task: msg, Session: sid, Addresses: first.RunID, Bounds: bounds.Defaults(),
		Model: script("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\nTWO\\n\"}}]}\n  - reply: {content: done}\n")})
	if err != nil || next.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("next: %v %+v", err, next)
	}
	approve := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "ana"}, nil
	})
	for _, res := range []*run.Result{first, next} {
		rvw, err := r.Records().Review(res.RunID)
		opt := rvw.Options
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gate.Review(ctx, res.Dir, approve, opt); err != nil {
			t.Fatalf("approve %s: %v", res.RunID, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(data) != "one\nTWO\n" {
		t.Fatalf("the source holds %q, want both runs' changes", data)
	}
}

// held is an approver that tells when it is asked, then approves once let go.
type held struct{ asked, release chan struct{} }

func (h held) Approve(ctx context.Context, _ agent.ApprovalRequest) (agent.Decision, error) {
	close(h.asked)
	<-h.release
	return agent.Decision{Approved: true, By: "test"}, nil
}

// A session's runs run one at a time: a run launched while another run of
// the session works waits for it to be recorded, then goes on from its
// conversation.
func TestASessionsRunsRunOneAtATime(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	r := &run.Runner{DataDir: t.TempDir()}
	parse := func(yaml string) run.ModelChoice { return run.ModelChoice{Script: parseScript(t, yaml)} }
	first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "say hello", Session: "new", Bounds: bounds.Defaults(), Model: parse("steps:\n  - reply: {content: hello}\n")})
	if err != nil || first.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("first: %v %+v", err, first)
	}
	sid := first.Receipt.SessionID
	h := held{asked: make(chan struct{}), release: make(chan struct{})}
	second := make(chan *run.Result)
	go func() {
		res, err := r.Run(ctx, run.Spec{Task: "list the files", Session: sid, Bounds: bounds.Defaults(), Approver: h,
			Model: parse("steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: ls}}]}\n  - reply: {content: listed}\n")})
		if err != nil {
			t.Error(err)
		}
		second <- res
	}()
	<-h.asked
	third := make(chan *run.Result)
	go func() {
		res, err := r.Run(ctx, run.Spec{Task: "and now?", Session: sid, Bounds: bounds.Defaults(),
			Model: parse("steps:\n  - expect: {last_contains: \"and now?\"}\n    reply: {content: done}\n")})
		if err != nil {
			t.Error(err)
		}
		third <- res
	}()
	select {
	case <-third:
		t.Fatal("a run of the session ran while another of it worked")
	case <-time.After(300 * time.Millisecond):
	}
	close(h.release)
	res2, res3 := <-second, <-third
	log3, _, _ := bundle.ReadExchanges(res3.Dir, bundle.DefaultLimits())
	raw3, _ := log3.Request(0)
	_, req, err := model.DecodeAnyRequest(log3.Exchanges[0].API, raw3)
	if err != nil || !strings.Contains(fmt.Sprint(req.Messages), "list the files") {
		t.Fatalf("the third run did not go on from the second: %v %v", req.Messages, err)
	}
	s, _ := r.Records().LoadSession(sid)
	if strings.Join(s.Runs, ",") != strings.Join([]string{first.RunID, res2.RunID, res3.RunID}, ",") {
		t.Fatalf("session runs %v", s.Runs)
	}
}

// A session's later run is merged into the source as it is when an earlier
// run was applied in part: its change reaches the source where it does not
// meet the parts left out, and where it does, nothing is applied and the
// conflicting lines are named as differing from the run's base (not as
// changed since the run began).
func TestALaterRunMergesAfterAnEarlierOneAppliedInPart(t *testing.T) {
	ctx := context.Background()
	lines := func(change map[int]string) string {
		var out []string
		for i := 1; i <= 30; i++ {
			l := fmt.Sprintf("line %d", i)
			if c, ok := change[i]; ok {
				l = c
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n") + "\n"
	}
	write := func(content string) run.ModelChoice {
		return run.ModelChoice{Script: parseScript(t, fmt.Sprintf("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: %q}}]}\n  - reply: {content: done}\n", content))}
	}
	for _, tc := range []struct {
		name     string
		second   map[int]string // the later run's file, over the first run's
		want     string         // the source after it is applied; "" refused
		conflict string
	}{
		{"apart from the part left out", map[int]string{2: "line 2 first", 25: "line 25 first", 12: "line 12 second"},
			lines(map[int]string{2: "line 2 first", 12: "line 12 second"}), ""},
		{"on the part left out", map[int]string{2: "line 2 first", 25: "line 25 second"}, "", "a.txt (conflicting lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			os.WriteFile(filepath.Join(src, "a.txt"), []byte(lines(nil)), 0o644)
			r := &run.Runner{DataDir: t.TempDir()}
			first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "change two lines", Bounds: bounds.Defaults(),
				Model: write(lines(map[int]string{2: "line 2 first", 25: "line 25 first"}))})
			if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
				t.Fatalf("first: %v %+v", err, first)
			}
			sid, msg, err := r.Records().RequestChanges(first.RunID, bundle.ChangeRequest{By: "ana", Summary: "more"})
			if err != nil {
				t.Fatal(err)
			}
			next, err := r.Run(ctx, run.Spec{Task: msg, Session: sid, Addresses: first.RunID, Bounds: bounds.Defaults(), Model: write(lines(tc.second))})
			if err != nil || next.Receipt.Status != bundle.StatusAwaitingReview {
				t.Fatalf("next: %v %+v", err, next)
			}
			// The first run is applied in part: its hunk at line 2, not the one at 25.
			rvw, _ := r.Records().Review(first.RunID)
			opt := rvw.Options
			inPart := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
				return gate.Verdict{Approved: true, By: "ana", Parts: []patch.Choice{{File: 0, Hunk: 0, Accept: true}, {File: 0, Hunk: 1, Accept: false}}}, nil
			})
			if _, err := gate.Review(ctx, first.Dir, inPart, opt); err != nil {
				t.Fatal(err)
			}
			rvw, _ = r.Records().Review(next.RunID)
			opt = rvw.Options
			approve := gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
				return gate.Verdict{Approved: true, By: "ana"}, nil
			})
			_, err = gate.Review(ctx, next.Dir, approve, opt)
			data, _ := os.ReadFile(filepath.Join(src, "a.txt"))
			var ce *gate.ConflictError
			switch {
			case tc.want != "" && (err != nil || string(data) != tc.want):
				t.Fatalf("apply the later run: %v; the source holds\n%s", err, data)
			case tc.want == "" && (!errors.As(err, &ce) || !ce.Before || !strings.Contains(strings.Join(ce.Files, ","), tc.conflict)):
				t.Fatalf("a conflict with the part left out: %v (%+v), want one naming %q as differing from the base", err, ce, tc.conflict)
			case tc.want == "" && string(data) != lines(map[int]string{2: "line 2 first"}):
				t.Fatalf("a refused apply changed the source:\n%s", data)
			}
		})
	}
}
