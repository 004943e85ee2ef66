// Package gate owns the decision whether a run's diff reaches the real
// source tree, and the review journal that makes that decision survive a
// crash. It fails closed: a read-only run, a run without changes, no
// reviewer, a reviewer that gives no answer, or a run that did not succeed
// (unless forced) all end with nothing applied. An approved diff is applied
// only when every file it touches still matches the run's base; otherwise
// nothing is applied and the conflict names the files.
//
// A review is exactly once and journaled (see journal.go): the decision and
// the files it will write are made durable before the source is touched,
// then the source is written, then the receipt and event, then the caller's
// record (the audit entry), and only then is the journal removed. A process
// killed anywhere in between leaves a journal that Recover (run at start-up,
// and by the next review of the run) finishes or rolls back, so the receipt
// always says what happened to the source.
package gate

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Proposal is what a reviewer decides on.
type Proposal struct {
	RunID   string
	Task    string
	Diff    string
	Changed []string
}

// Verdict is a reviewer's decision.
type Verdict struct {
	Approved bool
	By       string
	Reason   string
	// Parts, when set, decides part by part: only the accepted hunks and
	// files (with their edits) are applied, the rest is rejected. nil
	// decides on the whole diff.
	Parts []patch.Choice
}

// ErrNothingAccepted is an approval part by part that accepts no part.
var ErrNothingAccepted = errors.New("no part of the diff was accepted: accept at least one hunk or file, or reject the whole diff")

// Reviewer decides on a proposal; it may wait for a person. An error means
// no decision was made: nothing is recorded and the run still awaits review.
type Reviewer interface {
	Review(ctx context.Context, p Proposal) (Verdict, error)
}

// ReviewerFunc adapts a function to Reviewer.
type ReviewerFunc func(ctx context.Context, p Proposal) (Verdict, error)

// Review implements Reviewer.
func (f ReviewerFunc) Review(ctx context.Context, p Proposal) (Verdict, error) { return f(ctx, p) }

// ErrAlreadyReviewed is returned when the run has a review already.
var ErrAlreadyReviewed = errors.New("the run is already reviewed")

// ErrBusy is returned while another review of the same run is in progress.
var ErrBusy = errors.New("another review of this run is in progress")

// ErrNoDecision is returned when the reviewer gave no answer (no terminal,
// end of input, a crash): nothing was recorded and the run still awaits
// review.
var ErrNoDecision = errors.New("no decision was made")

// ConflictError lists files that changed in the source since the run began
// (or, Before, that differ from the run's base because an earlier run of
// its session was not applied whole), with the conflicting parts when a
// merge found them.
type ConflictError struct {
	Files  []string
	Before bool   // they differed before the run began
	Hint   string // why, when proctor knows
}

func (e *ConflictError) Error() string {
	when := "changed in the source since the run began"
	if e.Before {
		when = "differ in the source from the run's base"
	}
	msg := fmt.Sprintf("nothing was applied: %d file(s) %s: %s", len(e.Files), when, strings.Join(e.Files, ", "))
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Earlier is a run of the same session made before the one under review:
// its changes are in that run's base.
type Earlier struct {
	RunID      string
	HasChanges bool // it changed files (else there is nothing of it to apply)
	Reviewed   bool
	Applied    bool
	InPart     bool // applied part by part, some parts rejected or edited: the source lacks what its base holds
}

// OutOfOrderError refuses to approve a session's run while an earlier run
// of the session with changes awaits review: each run is made on top of
// the one before, and they reach the source in order.
type OutOfOrderError struct{ Waiting []string }

func (e *OutOfOrderError) Error() string {
	return fmt.Sprintf("review run %s of this session first: a session's runs are applied to its source in order, each on top of the ones before, and %s still awaits review (approve or reject it, then come back)",
		e.Waiting[0], strings.Join(e.Waiting, ", "))
}

// NotAppliableError refuses to apply the diff of a run that did not succeed.
type NotAppliableError struct {
	Status   bundle.Status
	Failure  string // the failure code on the receipt, if any
	Forcible bool   // the run has ended: force may apply it
}

func (e *NotAppliableError) Error() string {
	what := "the run is " + string(e.Status)
	if e.Failure != "" {
		what += " (" + e.Failure + ")"
	}
	if !e.Forcible {
		return what + ": it has not ended, so its diff cannot be applied yet"
	}
	return what + ": its diff is not applied unless the approval is forced (force: true, or proctor apply --force), which is recorded on the receipt"
}

// Appliable reports whether a run with this status may have its diff
// applied by a plain approval: it ended and nothing went wrong.
func Appliable(status bundle.Status) bool {
	return status == bundle.StatusAwaitingReview || status == bundle.StatusPassed
}

// ended reports whether a run with this status has finished working.
func ended(status bundle.Status) bool {
	return !slices.Contains([]bundle.Status{bundle.StatusQueued, bundle.StatusRunning, bundle.StatusAwaitingApproval}, status)
}

// Decided is a review as recorded, handed to Options.Record: the caller's
// own record of it (an audit entry) must be idempotent by Op, since after a
// crash it may be called again.
type Decided struct {
	Op         string // the journal entry's id
	RunID      string
	Review     bundle.Review
	Forced     bool
	RolledBack bool   // the source could not be finished; nothing is recorded on the receipt
	Detail     string // why it was rolled back
	Actor      string
	Address    string
}

// Action names the decision in an audit log: approve, approve-forced,
// reject, or approve-rolled-back.
func (d Decided) Action() string {
	switch {
	case d.RolledBack:
		return "approve-rolled-back"
	case d.Review.Approved && d.Forced:
		return "approve-forced"
	case d.Review.Approved:
		return "approve"
	}
	return "reject"
}

// AuditDetail is what an audit entry says beside the action.
func (d Decided) AuditDetail() string {
	if d.RolledBack {
		return d.Detail
	}
	return d.Review.Reason
}

// Options of a review.
type Options struct {
	ReadOnly bool // the run was not asked to write to the source
	// Tree is the folder an approval writes: this host's choice, never the
	// receipt's (a receipt from elsewhere may name any folder). "" writes
	// none: the approval is recorded and its accepted change offered as a
	// patch and an mbox (a git source's, a run pushed from elsewhere).
	Tree string
	// Workspace is proctor's own repository of the run's base commit. ""
	// for a run made elsewhere, whose repository this host never opens:
	// its change is judged and applied from the recorded diff alone.
	Workspace string
	// Force applies an approved diff although the run failed, errored or
	// was interrupted; it is recorded on the receipt.
	Force bool
	// Earlier are the runs of the run's session before it, in order.
	Earlier []Earlier
	// Actor and Address say who asked, for Record.
	Actor, Address string
	// Record is called once the receipt holds the decision, before the
	// journal entry is removed; nil records nothing more.
	Record func(ctx context.Context, d Decided) error
	Now    func() time.Time
}

func (o *Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Review decides on the run in runDir and, when approved, applies its diff
// to the source tree named on its receipt. It returns the review written on
// the receipt. A conflict leaves the run unreviewed and returns a
// *ConflictError; no answer from the reviewer returns ErrNoDecision.
func Review(ctx context.Context, runDir string, reviewer Reviewer, opt Options) (*bundle.Review, error) {
	unlock, err := lock(ctx, runDir, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := recoverLocked(ctx, runDir, opt.Record, opt.now); err != nil {
		return nil, err
	}
	j, err := stage(ctx, runDir, reviewer, opt)
	if err != nil {
		return nil, err
	}
	return finish(ctx, runDir, j, opt.Record, opt.now)
}

// stage decides and, for an approval, checks for conflicts and builds the
// files the diff makes; then it writes the journal entry. Nothing in the
// source is touched yet.
func stage(ctx context.Context, runDir string, reviewer Reviewer, opt Options) (*journal, error) {
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("review %s: %w", runDir, err)
	}
	rc := b.Receipt
	if rc.Review != nil {
		return nil, fmt.Errorf("%w by %s at %s", ErrAlreadyReviewed, rc.Review.ReviewedBy, rc.Review.ReviewedAt.Format(time.RFC3339))
	}
	diff, err := bundle.ReadFile(runDir, bundle.DiffFile, 64<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review %s: read diff: %w", rc.RunID, err)
	}
	original := string(diff) // as recorded: its index lines say what each file was
	review := bundle.Review{HasDiff: len(diff) > 0, ReviewedAt: opt.now().UTC()}
	var changed []string  // what an approval writes: the diff's own paths, never the receipt's list
	var accepted []string // the paths accepted one by one, reviewing part by part
	switch {
	case !ended(rc.Status):
		return nil, &NotAppliableError{Status: rc.Status}
	case opt.ReadOnly:
		review.ReviewedBy, review.Reason = "gate", "write not requested: the run was read-only"
	case len(diff) == 0 || len(rc.Changed) == 0:
		review.ReviewedBy, review.Reason = "gate", "no changes: nothing to apply"
	case !rc.Source.IsGit() && rc.Source.Kind != bundle.SourceLocal:
		review.ReviewedBy, review.Reason = "gate", fmt.Sprintf("a %s source has no tree to apply to", rc.Source.Kind)
	case reviewer == nil:
		review.ReviewedBy, review.Reason = "gate", "no reviewer: denied (fail closed)"
	default:
		v, err := reviewer.Review(ctx, Proposal{RunID: rc.RunID, Task: rc.Task, Diff: string(diff), Changed: rc.Changed})
		if err != nil {
			return nil, fmt.Errorf("review %s: %w (%v); the run still awaits review", rc.RunID, ErrNoDecision, err)
		}
		review.Approved, review.ReviewedBy, review.Reason = v.Approved, v.By, v.Reason
		if v.Approved && v.Parts == nil {
			if changed, err = diffPaths(string(diff)); err != nil {
				return nil, fmt.Errorf("review %s: %w", rc.RunID, err)
			}
		}
		if v.Approved && v.Parts != nil {
			if diff, changed, err = selectParts(&review, string(diff), v.Parts); err != nil {
				return nil, fmt.Errorf("review %s: %w", rc.RunID, err)
			}
			accepted = changed
			// A change applied to no tree here is offered: its accepted
			// parts (the mbox, apply --to, apply --from) are kept before the
			// decision is journaled.
			if opt.Tree == "" {
				if err := osfile.WriteFile(filepath.Join(runDir, bundle.AcceptedFile), 0o644, true, osfile.Bytes(diff)); err != nil {
					return nil, fmt.Errorf("review %s: %w", rc.RunID, err)
				}
			}
		}
	}
	if review.ReviewedBy == "" {
		review.ReviewedBy = "unknown"
	}
	if review.Approved && !Appliable(rc.Status) {
		if !opt.Force {
			code := ""
			if rc.Failure != nil {
				code = rc.Failure.Code
			}
			return nil, &NotAppliableError{Status: rc.Status, Failure: code, Forcible: true}
		}
		review.Forced = true
	}
	var rejected, inPart []string // earlier runs of the session not applied, or applied in part
	if review.Approved {
		if rejected, inPart, err = earlierRuns(opt.Earlier); err != nil {
			return nil, err
		}
	}
	j := &journal{Schema: journalSchema, Op: newOp(), RunID: rc.RunID, State: stateApplying, Review: review, Forced: review.Forced, Actor: opt.Actor, Address: opt.Address, Source: opt.Tree}
	var files map[string][]byte
	// With no tree, an approved change is not applied here: it is offered
	// as a patch and an mbox (proctor apply --to PATH, or --from the host,
	// applies it to a checkout).
	if review.Approved && opt.Tree != "" && len(changed) > 0 {
		c := change{tree: opt.Tree, original: original, diff: string(diff), changed: changed, parts: accepted,
			repo: opt.Workspace, runID: rc.RunID, commit: rc.Source.CommitSHA, behind: slices.Concat(rejected, inPart)}
		if j.Files, files, err = c.prepare(ctx); err != nil {
			return nil, err // nothing applied; the run stays unreviewed
		}
	}
	// From here on the journal is the truth: once it is written, the
	// review happens (or is rolled back by recovery), never half.
	if err := writeJournal(runDir, j, files); err != nil {
		return nil, err
	}
	return j, nil
}

// change is an approved diff to write into a tree, and what judges it.
type change struct {
	tree     string   // the folder written
	original string   // the diff as the run recorded it: its index lines say what each file was
	diff     string   // what was accepted: the whole diff, or its accepted parts with their edits
	changed  []string // the paths diff touches
	parts    []string // the paths accepted part by part: only they may make a link out of the tree
	repo     string   // proctor's own repository of the run; "" for a run made elsewhere
	runID    string
	commit   string   // the run's base commit in repo
	behind   []string // earlier runs of its session rejected or applied in part (needs repo)
}

// prepare checks for conflicts and builds the files c makes in its tree,
// without touching it: the base versions of the touched files, patched,
// beside it. Links are read as links, in the tree and in what the diff
// makes, and never followed. With proctor's own repository the base
// commit says what each file was (fromRepo); without one, the recorded
// diff alone does (fromDiff). A run made on top of earlier runs of its
// session that were rejected or applied in part has a base the tree does
// not hold, so its change is merged into the tree as it is, hunk by hunk.
// A link out of the tree that the reviewer did not accept by itself
// refuses the whole change.
func (c change) prepare(ctx context.Context) ([]journalFile, map[string][]byte, error) {
	prepared := c.fromDiff
	if c.repo != "" {
		prepared = c.fromRepo
	}
	files, contents, err := prepared(ctx)
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) && len(c.behind) > 0 {
			ce.Before = true
			ce.Hint = fmt.Sprintf("this run was made on top of run %s of its session, which was rejected or applied in part, so the source lacks lines the run started from; the parts named meet them: apply them by hand (diff.patch), or reject this run", strings.Join(c.behind, ", "))
		}
		return nil, nil, err
	}
	var links []Link
	for _, f := range files {
		if isLink(f.New) && patch.LeavesTree(f.Path, f.Target) && !slices.Contains(c.parts, f.Path) {
			links = append(links, Link{Path: f.Path, Target: f.Target})
		}
	}
	if len(links) > 0 {
		return nil, nil, &LinkError{Links: links}
	}
	return files, contents, nil
}

// earlierRuns sorts the earlier runs of a session with changes that an
// approval of a later run stands on: those rejected, and those applied in
// part. One still waiting for review makes the approval out of order.
func earlierRuns(earlier []Earlier) (rejected, inPart []string, err error) {
	var waiting []string
	for _, e := range earlier {
		switch {
		case !e.HasChanges:
		case !e.Reviewed:
			waiting = append(waiting, e.RunID)
		case !e.Applied:
			rejected = append(rejected, e.RunID)
		case e.InPart:
			inPart = append(inPart, e.RunID)
		}
	}
	if len(waiting) > 0 {
		return nil, nil, &OutOfOrderError{Waiting: waiting}
	}
	return rejected, inPart, nil
}

// finish carries a journaled review through to its end: the source, then
// the receipt and event, then Record, then the journal is removed. Each step
// looks at what is already done, so running it again after a crash is safe.
func finish(ctx context.Context, runDir string, j *journal, record func(context.Context, Decided) error, now func() time.Time) (*bundle.Review, error) {
	if j.State == stateApplying {
		if err := settleSource(runDir, j); err != nil {
			return nil, err
		}
		if j.RolledBack {
			if err := recordRollback(runDir, j, now()); err != nil {
				return nil, err
			}
		} else if err := recordReview(runDir, j, now()); err != nil {
			return nil, err
		}
		j.State = stateRecorded
		if err := saveJournal(runDir, j); err != nil {
			return nil, err
		}
	}
	if record != nil {
		if err := record(ctx, j.decided()); err != nil {
			return nil, fmt.Errorf("record the review of run %s (it is on the receipt; the record is made at the next start): %w", j.RunID, err)
		}
	}
	if err := removeJournal(runDir); err != nil {
		return nil, err
	}
	if j.RolledBack {
		return nil, fmt.Errorf("review %s: %s; the run still awaits review", j.RunID, j.Detail)
	}
	return &j.Review, nil
}

// recordReview writes the decision on the receipt and in the events, each
// unless already there.
func recordReview(runDir string, j *journal, now time.Time) error {
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		return fmt.Errorf("record review of %s: %w", runDir, err)
	}
	rc := b.Receipt
	events, _, err := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	if err != nil {
		return err
	}
	if !hasOpEvent(events, bundle.EventReviewDecided, j.Op) {
		if err := appendEvent(runDir, events, bundle.ReviewDecidedEvent{Op: j.Op, Approved: j.Review.Approved, By: j.Review.ReviewedBy, Reason: j.Review.Reason,
			Applied: j.Review.Applied, Changed: j.Review.Changed, Forced: j.Forced}, now); err != nil {
			return err
		}
	}
	if rc.Review != nil {
		return nil
	}
	rv := j.Review
	rc.Review = &rv
	// A review ends a run that waited for it: its work finished and passed
	// its checks, whatever the reviewer decided. The decision is the review
	// (approved or rejected), never an agent failure; a run that had failed
	// keeps its status and failure.
	if rc.Status == bundle.StatusAwaitingReview && !j.Forced {
		rc.Status, rc.Stage = bundle.StatusPassed, bundle.StageCompleted
	}
	return bundle.WriteReceipt(runDir, &rc)
}

// recordRollback says in the events why a journaled approval was undone;
// the receipt keeps no review.
func recordRollback(runDir string, j *journal, now time.Time) error {
	events, _, err := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	if err != nil {
		return err
	}
	if hasOpEvent(events, bundle.EventReviewRolledBack, j.Op) {
		return nil
	}
	return appendEvent(runDir, events, bundle.ReviewRolledBackEvent{Op: j.Op, By: j.Review.ReviewedBy, Reason: j.Detail}, now)
}

func hasOpEvent(events []bundle.Event, typ, op string) bool {
	for _, e := range events {
		var d struct{ Op string }
		if e.Type == typ && json.Unmarshal(e.Data, &d) == nil && d.Op == op {
			return true
		}
	}
	return false
}

// selectParts narrows an approval to the accepted parts of the diff,
// recording on the review which parts were applied, rejected and edited.
func selectParts(review *bundle.Review, diff string, choices []patch.Choice) ([]byte, []string, error) {
	sel, err := patch.Select(diff, choices)
	if err != nil {
		return nil, nil, err
	}
	if len(sel.Applied) == 0 {
		return nil, nil, ErrNothingAccepted
	}
	ref := func(p patch.Part) bundle.ReviewPart {
		return bundle.ReviewPart{Path: p.Path, Hunk: p.Hunk + 1, Header: p.Header}
	}
	for _, p := range sel.Applied {
		review.AppliedParts = append(review.AppliedParts, ref(p))
	}
	for _, p := range sel.Rejected {
		review.RejectedParts = append(review.RejectedParts, ref(p))
	}
	for _, e := range sel.Edits {
		review.Edits = append(review.Edits, bundle.ReviewEdit{ReviewPart: ref(e.Part), Proposed: e.Proposed, Applied: e.Applied})
	}
	return []byte(sel.Diff), sel.Changed, nil
}

// fromRepo is prepare for a run of proctor's own repository.
func (c change) fromRepo(ctx context.Context) ([]journalFile, map[string][]byte, error) {
	ws := workspace.Open(c.repo, c.commit)
	if !ws.HasCommit(ctx, c.commit) {
		return nil, nil, fmt.Errorf("cannot apply run %s: its base commit %s is not in %q; the run's workspace is gone", c.runID, c.commit, c.repo)
	}
	src, err := os.OpenRoot(c.tree)
	if err != nil {
		return nil, nil, fmt.Errorf("open source %s: %w", c.tree, err)
	}
	defer src.Close()
	entries, err := ws.BaseEntries(ctx, c.changed)
	if err != nil {
		return nil, nil, err
	}
	base := map[string]string{}
	var existing, conflicts []string
	type version struct {
		data  []byte
		state string
	}
	differs := map[string]version{} // path → the source's file, where it is not the base's
	for _, p := range c.changed {
		if e, ok := entries[p]; ok && e.Mode != "160000" { // a repository inside is not a file of the source
			base[p] = e.Blob
			if e.Mode == "120000" {
				base[p] = linkState + e.Blob
			}
			existing = append(existing, p)
		}
		cur, got, err := readState(src, p)
		if err != nil {
			return nil, nil, fmt.Errorf("check %s: %w", bundle.PathName(p), err)
		}
		if got != base[p] {
			differs[p] = version{cur, got}
			if len(c.behind) == 0 || got == "" || base[p] == "" || isLink(got) || isLink(base[p]) {
				conflicts = append(conflicts, bundle.PathName(p)) // only files on both sides merge
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, nil, &ConflictError{Files: conflicts}
	}
	scratch, err := os.MkdirTemp("", "proctor-apply-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(scratch)
	if len(existing) > 0 {
		if err := ws.Extract(ctx, c.commit, scratch, existing...); err != nil {
			return nil, nil, err
		}
	}
	if err := workspace.ApplyPatch(ctx, scratch, c.diff); err != nil {
		return nil, nil, fmt.Errorf("nothing was applied: %w", err)
	}
	made, err := os.OpenRoot(scratch)
	if err != nil {
		return nil, nil, err
	}
	defer made.Close()
	var out []journalFile
	contents := map[string][]byte{}
	for _, p := range c.changed {
		f := journalFile{Path: p, Base: base[p]}
		data, state, err := readState(made, p)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s as the diff makes it: %w", bundle.PathName(p), err)
		}
		if ours, ok := differs[p]; ok { // merged into the source as it was read above
			if data, state, err = merged(ctx, ws, c.commit, p, ours.data, data, state); err != nil {
				conflicts = append(conflicts, err.Error())
				continue
			}
			f.Base = ours.state
		}
		f.madeAs(made, state, data, contents)
		out = append(out, f)
	}
	if len(conflicts) > 0 {
		return nil, nil, &ConflictError{Files: conflicts}
	}
	return out, contents, nil
}

// merged merges the change the diff makes to file p (from its base, at
// commit, to data) into ours, the source's version of it. A conflict is an
// error naming p and the lines of the merged file where the change meets
// lines the source holds differently.
func merged(ctx context.Context, ws *workspace.Workspace, commit, p string, ours, data []byte, state string) ([]byte, string, error) {
	name := bundle.PathName(p)
	if state == "" || isLink(state) {
		return nil, "", errors.New(name)
	}
	baseData, err := ws.Show(ctx, commit, p)
	if err != nil {
		return nil, "", fmt.Errorf("%s (%v)", name, err)
	}
	out, n, err := workspace.Merge3(ctx, ours, baseData, data)
	if err != nil {
		return nil, "", fmt.Errorf("%s (%v)", name, err)
	}
	if n > 0 {
		return nil, "", fmt.Errorf("%s (%s)", name, conflictLines(out))
	}
	return out, blobOfData(out), nil
}

// conflictLines names where merge-file marked conflicts: "conflicting
// lines 4–9, 20–22 of the merge".
func conflictLines(merged []byte) string {
	var spans []string
	start := 0
	for i, line := range strings.Split(string(merged), "\n") {
		switch {
		case strings.HasPrefix(line, "<<<<<<< "):
			start = i + 1
		case strings.HasPrefix(line, ">>>>>>> ") && start > 0:
			spans = append(spans, fmt.Sprintf("%d–%d", start, i+1))
			start = 0
		}
	}
	return "conflicting lines " + strings.Join(spans, ", ") + " of the merge"
}

// linkState starts the state of a link: its target's blob follows.
const linkState = "120000:"

func isLink(state string) bool { return strings.HasPrefix(state, linkState) }

// readState reads the path p inside root as git sees it, following no link
// at p: a regular file's content and blob id, a link's target and
// linkState+its blob id, or "" when there is no file there (a folder is
// not a file).
// madeAs records in f what the diff makes of its file (read from made):
// its state, and its content (kept in contents) with its link target or
// mode; nothing more for a file the diff deletes.
func (f *journalFile) madeAs(made *os.Root, state string, data []byte, contents map[string][]byte) {
	if f.New = state; state == "" {
		return
	}
	contents[f.Path] = data
	if isLink(state) {
		f.Target = string(data)
	} else if info, err := made.Lstat(filepath.FromSlash(f.Path)); err == nil {
		f.Mode = uint32(info.Mode().Perm())
	}
}

func readState(root *os.Root, p string) ([]byte, string, error) {
	name := filepath.FromSlash(p)
	info, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, "", nil
	case err != nil:
		return nil, "", err
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(name)
		if err != nil {
			return nil, "", err
		}
		return []byte(target), linkState + blobOfData([]byte(target)), nil
	case !info.Mode().IsRegular():
		return nil, "", nil
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return nil, "", err
	}
	return data, blobOfData(data), nil
}

// LinkError refuses an approval that would make links pointing outside the
// source which the reviewer did not accept one by one.
type LinkError struct{ Links []Link }

// Link is a link a diff makes.
type Link struct{ Path, Target string }

func (e *LinkError) Error() string {
	var each []string
	for _, l := range e.Links {
		each = append(each, fmt.Sprintf("%s -> %s", bundle.PathName(l.Path), l.Target))
	}
	return fmt.Sprintf("nothing was applied: the diff makes %d link(s) pointing outside the source (%s); a link is applied as a link, never followed, but one that leaves the source needs its own accept: review part by part and accept that file", len(e.Links), strings.Join(each, ", "))
}

// diffPaths are the paths a diff touches, as its headers name them (a name
// that is not UTF-8 included, byte for byte), sorted.
func diffPaths(diff string) ([]string, error) {
	files, err := patch.Parse(diff)
	if err != nil {
		return nil, fmt.Errorf("read the diff: %w", err)
	}
	var out []string
	for _, f := range files {
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func blobOfData(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// appendEvent adds one event to the run's events.jsonl, after events.
func appendEvent(runDir string, events []bundle.Event, data bundle.EventData, now time.Time) error {
	var seq int64 = 1
	if n := len(events); n > 0 {
		seq = events[n-1].Seq + 1
	}
	return bundle.AppendEvent(runDir, seq, now, data)
}
