// Package review is what a person decides about runs: a run's diff
// approved (whole or part by part) or rejected through the gate, journaled,
// audited and indexed; the reviews a stopped process left, finished; a tool
// call a running run waits on, answered; and an approval rule made from
// such a request. The dashboard's pages and its JSON API call the same
// methods.
package review

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
)

// Service decides. Runner is nil on a server that only reads (no review
// can be made); Board is nil where no run waits for approvals.
type Service struct {
	Runner  *run.Runner
	Store   *store.Store
	Board   *approval.Board
	DataDir string
	Limits  bundle.Limits
	Log     *slog.Logger // where a failed audit entry is reported; nil: nowhere
}

// Who made a decision: the name it is recorded under, how the audit log
// names them, and the address they came from.
type Who struct {
	Name    string
	Actor   string
	Address string
}

// Diff is a decision on a run's diff.
type Diff struct {
	Approve bool
	Reason  string
	Force   bool           // apply even over files that changed in the source
	Parts   []patch.Choice // nil: the whole diff
}

// ErrNoRun is returned for a run that is not there (or not reviewable
// here).
var ErrNoRun = errors.New("no such run")

// ErrNotWaiting is returned for an approval request that no longer waits.
var ErrNotWaiting = approval.ErrNotPending

// Invalid is a request that makes no sense: which field, and why.
type Invalid struct{ Field, Problem string }

func (e *Invalid) Error() string { return e.Field + ": " + e.Problem }

// Refused says why nothing was done, as a sentence for the reviewer: a
// conflict with the source, an earlier decision, a run that did not succeed.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return e.Reason }

// Decide approves or rejects run id's diff through the gate, which
// journals the decision and writes its audit entry exactly once; the run is
// indexed again however it went.
func (s *Service) Decide(ctx context.Context, id string, who Who, d Diff) error {
	if !bundle.ValidID(id) || s.Runner == nil {
		return fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	rv, err := s.Runner.Records().Review(id)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoRun, err)
	}
	who.Name = strings.TrimSpace(who.Name)
	if err := CheckName(who.Name); err != nil {
		return err
	}
	if d.Parts != nil && !d.Approve {
		return &Invalid{"parts", "go with decision approve (a rejection is of the whole diff)"}
	}
	reason := clip.Bytes(strings.TrimSpace(d.Reason), 500)
	opt := rv.Options
	opt.Force, opt.Actor, opt.Address, opt.Record = d.Force, who.Actor, who.Address, s.record
	_, err = gate.Review(ctx, rv.Dir, gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: d.Approve, By: who.Name, Reason: reason, Parts: d.Parts}, nil
	}), opt)
	s.index(ctx, rv.Bundle)
	if err == nil {
		if err := s.DropDraft(id, who.Actor); err != nil && s.Log != nil {
			s.Log.Warn("drop a submitted draft review", "run", id, "err", err)
		}
		return nil
	}
	return &Refused{refusal(err)}
}

// refusal is why a review did nothing, as a sentence.
func refusal(err error) string {
	var conflict *gate.ConflictError
	var notAppliable *gate.NotAppliableError
	var outOfOrder *gate.OutOfOrderError
	var links *gate.LinkError
	switch {
	case errors.As(err, &conflict):
		when := "changed in the source since the run began"
		if conflict.Before {
			when = "differ in the source from what the run started from"
		}
		msg := "Nothing was applied: these files " + when + ": " + strings.Join(conflict.Files, ", ") + ". The run still waits for review."
		if conflict.Hint != "" {
			msg += " Why: " + conflict.Hint + "."
		}
		return msg
	case errors.As(err, &notAppliable), errors.As(err, &outOfOrder),
		errors.Is(err, gate.ErrNothingAccepted), errors.Is(err, patch.ErrNoSuchPart):
		return "Nothing was applied: " + err.Error() + "."
	case errors.As(err, &links):
		return "N" + strings.TrimPrefix(links.Error(), "n") + "."
	case errors.Is(err, gate.ErrAlreadyReviewed):
		return "Nothing was done: " + err.Error() + "."
	case errors.Is(err, gate.ErrBusy):
		return "Another review of this run is in progress; reload in a moment."
	}
	return "The review failed: " + err.Error()
}

// record writes a journaled review's audit entry, once per review however
// often it is called (the entry carries the journal's op id).
func (s *Service) record(ctx context.Context, d gate.Decided) error {
	return s.Store.Audit(context.WithoutCancel(ctx), store.AuditEntry{Actor: d.Actor, Action: d.Action(), Object: d.RunID, Detail: d.AuditDetail(), Address: d.Address, Op: d.Op})
}

func (s *Service) index(ctx context.Context, dir string) {
	if s.Runner != nil && s.Runner.Index != nil {
		s.Runner.Index(context.WithoutCancel(ctx), dir)
	}
}

// Recover finishes or rolls back the reviews that a stopped process left
// journaled in the data folder's runs, writes their audit entries and
// indexes them again. It reports how many it settled.
func (s *Service) Recover(ctx context.Context) (int, []error) {
	data := records.Data{Dir: s.DataDir}
	var done []gate.Decided
	var errs []error
	for _, folder := range data.ReviewFolders() {
		d, e := gate.RecoverAll(ctx, folder, s.record)
		done, errs = append(done, d...), append(errs, e...)
	}
	for _, d := range done {
		if path, err := data.IndexPath(d.RunID); err == nil {
			s.index(ctx, path)
		}
	}
	return len(done), errs
}

// Answer approves or denies request num (the board's number, never the
// model's call id) that run id waits on; reason "" says where it was
// decided.
func (s *Service) Answer(ctx context.Context, id string, num int64, who Who, approve bool, reason string) error {
	if s.Board == nil || !bundle.ValidID(id) || num < 1 {
		return fmt.Errorf("%w: no request %d of run %q waits here (requests are numbered 1, 2, …)", ErrNoRun, num, id)
	}
	if who.Name == "" {
		return &Invalid{"reviewer", "give your name, so the decision says who made it"}
	}
	d := agent.Decision{Approved: approve, By: who.Name, Reason: "denied in the dashboard"}
	if approve {
		d.Reason = "approved in the dashboard"
	}
	if r := strings.TrimSpace(reason); r != "" {
		d.Reason = r
	}
	if err := s.Board.Decide(id, num, d); err != nil {
		return err
	}
	action := "approval-deny"
	if approve {
		action = "approval-approve"
	}
	s.audit(ctx, who, action, id, "request "+strconv.FormatInt(num, 10))
	return nil
}

// RuleRequest is the rule a person asks for in an approval box: what it
// matches, its scope and for how long ("" for ever).
type RuleRequest struct {
	Match, Command, Scope, For string
}

// ApproveByRule makes the rule a person asked for from request num of run
// id, and approves the request by it. What the rule matches comes from the
// request; where it applies from the run's own record (never from the
// form); and it must allow the request it was made from, or nothing is
// made and the request still waits (an *Invalid).
func (s *Service) ApproveByRule(ctx context.Context, id string, num int64, who Who, want RuleRequest) (rules.Rule, error) {
	if s.Board == nil || !bundle.ValidID(id) {
		return rules.Rule{}, fmt.Errorf("%w: no run %q waits for an approval here", ErrNoRun, id)
	}
	var req *agent.ApprovalRequest
	for _, p := range s.Board.Pending(id) {
		if p.ID == num {
			req = &agent.ApprovalRequest{CallID: p.CallID, Tool: p.Tool, Args: p.Args}
		}
	}
	if req == nil {
		return rules.Rule{}, ErrNotWaiting
	}
	detail, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return rules.Rule{}, err
	}
	where := rules.WhereRun(detail.Receipt)
	now := time.Now()
	r := rules.Rule{Tool: req.Tool, Match: want.Match, Command: want.Command, Scope: want.Scope, CreatedBy: who.Actor, Created: now}
	switch r.Scope {
	case rules.ScopeSource:
		r.Target = where.Source
	case rules.ScopeScenario:
		r.Target = where.Scenario
	}
	if want.For != "" {
		d, err := time.ParseDuration(want.For)
		if err != nil || d <= 0 || d > 366*24*time.Hour {
			return rules.Rule{}, &Invalid{"for", fmt.Sprintf("%q: want a duration such as 8h", want.For)}
		}
		end := now.Add(d).UTC()
		r.Expires = &end
	}
	if err := r.Check(); err != nil {
		return rules.Rule{}, &Invalid{"rule", err.Error()}
	}
	if !r.Allows(*req, where, now) {
		return rules.Rule{}, &Invalid{"rule", fmt.Sprintf("a rule allowing %s would not allow this request (%s)", r.Describe(), strings.TrimSpace(req.Command()))}
	}
	if r, err = rules.At(s.DataDir).Add(r); err != nil {
		return rules.Rule{}, err
	}
	s.audit(ctx, who, "rule-add", "rule #"+strconv.FormatInt(r.ID, 10), r.Describe()+" (from run "+id+")")
	reason := fmt.Sprintf("approved in the dashboard; rule #%d made (%s)", r.ID, r.Describe())
	return r, s.Answer(ctx, id, num, who, true, reason)
}

// Reply adds who's reply to the thread of comment number comment of
// request number request (both from 0) made of run id, and audits it.
func (s *Service) Reply(ctx context.Context, id string, request, comment int, who Who, text string) error {
	if who.Name == "" {
		return &Invalid{Field: "reviewer", Problem: "give your name"}
	}
	if _, err := s.Store.GetRun(ctx, id); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: run %s is not indexed", ErrNoRun, id)
	}
	err := records.Data{Dir: s.DataDir}.Reply(ctx, id, request, comment, bundle.Reply{By: who.Name, At: time.Now().UTC(), Text: text})
	switch {
	case errors.Is(err, records.ErrNoComment):
		return fmt.Errorf("%w: %v", ErrNoRun, err)
	case err != nil:
		return &Invalid{Field: "reply", Problem: err.Error()}
	}
	s.audit(ctx, who, "reply", id, fmt.Sprintf("comment %d of request %d", comment+1, request+1))
	return nil
}

// Resolve marks the thread of comment number comment of request number
// request (both from 0) made of run id resolved by who, or open again
// (resolved false), and audits it.
func (s *Service) Resolve(ctx context.Context, id string, request, comment int, who Who, resolved bool) error {
	if who.Name == "" {
		return &Invalid{Field: "reviewer", Problem: "give your name"}
	}
	if _, err := s.Store.GetRun(ctx, id); errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: run %s is not indexed", ErrNoRun, id)
	}
	by, action := who.Name, "resolve"
	if !resolved {
		by, action = "", "unresolve"
	}
	err := records.Data{Dir: s.DataDir}.Resolve(ctx, id, request, comment, by)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoRun, err)
	}
	s.audit(ctx, who, action, id, fmt.Sprintf("comment %d of request %d", comment+1, request+1))
	return nil
}

// audit records what a person did; it never fails the decision, which is
// made.
func (s *Service) audit(ctx context.Context, who Who, action, object, detail string) {
	err := s.Store.Audit(context.WithoutCancel(ctx), store.AuditEntry{Actor: who.Actor, Action: action, Object: object, Detail: detail, Address: who.Address})
	if err != nil && s.Log != nil {
		s.Log.Warn("audit", "action", action, "object", object, "err", err)
	}
}
