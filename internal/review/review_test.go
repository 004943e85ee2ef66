package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

func TestARefusalSaysWhyNothingWasDone(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&gate.ConflictError{Files: []string{"a.go", "b.go"}, Hint: "the source moved"},
			"Nothing was applied: these files changed in the source since the run began: a.go, b.go. The run still waits for review. Why: the source moved."},
		{&gate.ConflictError{Files: []string{"a.go"}}, "Nothing was applied: these files changed in the source since the run began: a.go. The run still waits for review."},
		{&gate.ConflictError{Files: []string{"a.go (conflicting lines 3–7 of the merge)"}, Before: true}, "Nothing was applied: these files differ in the source from what the run started from: a.go (conflicting lines 3–7 of the merge)."},
		{&gate.OutOfOrderError{Waiting: []string{"r1"}}, "Nothing was applied: review run r1 of this session first"},
		{&gate.NotAppliableError{Status: bundle.StatusFailed}, "Nothing was applied: "},
		{fmt.Errorf("select: %w", patch.ErrNoSuchPart), "Nothing was applied: select: "},
		{gate.ErrNothingAccepted, "Nothing was applied: "},
		{&gate.LinkError{Links: []gate.Link{{Path: "l", Target: "/etc"}}}, "N"},
		{gate.ErrAlreadyReviewed, "Nothing was done: "},
		{gate.ErrBusy, "Another review of this run is in progress; reload in a moment."},
		{errors.New("disk full"), "The review failed: disk full"},
	}
	for _, tc := range tests {
		if got := refusal(tc.err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("refusal(%v) = %q, want it to start %q", tc.err, got, tc.want)
		}
	}
}

func service(t *testing.T) *Service {
	t.Helper()
	data := t.TempDir()
	return &Service{Runner: &run.Runner{DataDir: data}, Store: storetest.New(t), Board: approval.NewBoard(time.Minute, nil), DataDir: data, Limits: bundle.DefaultLimits()}
}

func TestADecisionNeedsARunAndAName(t *testing.T) {
	s := service(t)
	ctx := context.Background()
	var invalid *Invalid
	for _, tc := range []struct {
		id    string
		who   Who
		d     Diff
		check func(error) bool
	}{
		{"../../etc", Who{Name: "rita"}, Diff{Approve: true}, func(err error) bool { return errors.Is(err, ErrNoRun) }},
		{"20260101-000000-nosuch", Who{Name: "rita"}, Diff{Approve: true}, func(err error) bool { return errors.Is(err, ErrNoRun) }},
	} {
		if err := s.Decide(ctx, tc.id, tc.who, tc.d); !tc.check(err) {
			t.Errorf("Decide(%q): %v", tc.id, err)
		}
	}
	if err := s.Answer(ctx, "20260101-000000-nosuch", 1, Who{}, true, ""); !errors.As(err, &invalid) || invalid.Field != "reviewer" {
		t.Errorf("an answer without a name: %v", err)
	}
	if err := s.Answer(ctx, "20260101-000000-nosuch", 0, Who{Name: "rita"}, true, ""); !errors.Is(err, ErrNoRun) {
		t.Errorf("request 0: %v", err)
	}
	if err := s.Answer(ctx, "20260101-000000-nosuch", 1, Who{Name: "rita"}, true, ""); !errors.Is(err, ErrNotWaiting) {
		t.Errorf("a request nobody asked: %v", err)
	}
}

// A rule is made from a waiting request, must allow it, is audited under
// the person's audit name, and approves the request.
func TestARuleMadeFromARequestApprovesIt(t *testing.T) {
	s := service(t)
	ctx := context.Background()
	id := "20260101-000000-rulerun"
	r := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusRunning, Stage: bundle.StageRunning,
		Task: "t", Source: bundle.Source{Kind: bundle.SourceLocal, Path: "/src/app"}, Model: bundle.Model{Name: "m"}, StartedAt: time.Now()}
	if err := s.Store.ApplyBundles(ctx, []store.BundleUpdate{{Path: "/bundles/" + id, Kind: store.BundleRun, Fingerprint: "f", Run: &bundle.Run{Dir: "/bundles/" + id, Receipt: r}}}, nil); err != nil {
		t.Fatal(err)
	}
	answered := make(chan agent.Decision, 1)
	go func() {
		d, _ := s.Board.For(id).Approve(ctx, agent.ApprovalRequest{CallID: "c1", Tool: "run_command", Args: `{"command":"go test ./..."}`})
		answered <- d
	}()
	for len(s.Board.Pending(id)) == 0 {
		time.Sleep(time.Millisecond)
	}
	who := Who{Name: "rita", Actor: "local:rita", Address: "127.0.0.1"}
	var invalid *Invalid
	if _, err := s.ApproveByRule(ctx, id, 1, who, RuleRequest{Match: "prefix", Command: "rm -rf", Scope: rules.ScopeSource}); !errors.As(err, &invalid) {
		t.Fatalf("a rule that would not allow the request: %v", err)
	}
	if _, err := s.ApproveByRule(ctx, id, 1, who, RuleRequest{Match: "prefix", Command: "go test", Scope: rules.ScopeSource, For: "forever"}); !errors.As(err, &invalid) || invalid.Field != "for" {
		t.Fatalf("a duration that is not one: %v", err)
	}
	if _, err := s.ApproveByRule(ctx, id, 2, who, RuleRequest{Match: "prefix", Command: "go test", Scope: rules.ScopeSource}); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("a request that does not wait: %v", err)
	}
	rule, err := s.ApproveByRule(ctx, id, 1, who, RuleRequest{Match: "prefix", Command: "go test", Scope: rules.ScopeSource, For: "8h"})
	if err != nil {
		t.Fatal(err)
	}
	if rule.Target != "/src/app" || rule.CreatedBy != "local:rita" || rule.Expires == nil {
		t.Errorf("rule %+v", rule)
	}
	if d := <-answered; !d.Approved || d.By != "rita" || !strings.Contains(d.Reason, "rule #1 made") {
		t.Errorf("decision %+v", d)
	}
	entries, _, err := s.Store.ListAudit(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.Actor != "local:rita" {
			t.Errorf("audit entry %+v: not under the person's audit name", e)
		}
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, " "); !strings.Contains(got, "rule-add") || !strings.Contains(got, "approval-approve") {
		t.Errorf("audit: %s", got)
	}
}
