// Package gate owns the decision whether a run's diff reaches the real
// source tree. It fails closed: a read-only run, a run without changes, no
// reviewer, or a reviewer that errors all end with nothing applied. An
// approved diff is applied only when every file it touches still matches the
// run's base; otherwise nothing is applied and the conflict names the
// files. A run is reviewed exactly once: concurrent reviews of one run are
// serialised by a lock file in its bundle, and the second sees the first's
// decision.
package gate

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
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
}

// Reviewer decides on a proposal; it may wait for a person.
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

// ConflictError lists files that changed in the source since the run began.
type ConflictError struct{ Files []string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("nothing was applied: %d file(s) changed in the source since the run began: %s", len(e.Files), strings.Join(e.Files, ", "))
}

// Options of a review.
type Options struct {
	ReadOnly  bool   // the run was not asked to write to the source
	Workspace string // the repository that holds the run's base commit
	Now       func() time.Time
}

// Review decides on the run in runDir and, when approved, applies its diff
// to the source tree named on its receipt. It returns the review written on
// the receipt. A conflict leaves the run unreviewed and returns a
// *ConflictError.
func Review(ctx context.Context, runDir string, reviewer Reviewer, opt Options) (*bundle.Review, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	unlock, err := lock(runDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("review %s: %w", runDir, err)
	}
	rc := b.Receipt
	if rc.Review != nil {
		return rc.Review, fmt.Errorf("%w by %s at %s", ErrAlreadyReviewed, rc.Review.ReviewedBy, rc.Review.ReviewedAt.Format(time.RFC3339))
	}
	diff, err := bundle.ReadFile(runDir, bundle.DiffFile, 64<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review %s: read diff: %w", rc.RunID, err)
	}
	review := &bundle.Review{HasDiff: len(diff) > 0, ReviewedAt: opt.Now().UTC()}
	switch {
	case opt.ReadOnly:
		review.ReviewedBy, review.Reason = "gate", "write not requested: the run was read-only"
	case len(diff) == 0 || len(rc.Changed) == 0:
		review.ReviewedBy, review.Reason = "gate", "no changes: nothing to apply"
	case rc.Source.Kind != "local" || rc.Source.Path == "":
		review.ReviewedBy, review.Reason = "gate", fmt.Sprintf("a %s source has no tree to apply to", rc.Source.Kind)
	case reviewer == nil:
		review.ReviewedBy, review.Reason = "gate", "no reviewer: denied (fail closed)"
	default:
		v, err := reviewer.Review(ctx, Proposal{RunID: rc.RunID, Task: rc.Task, Diff: string(diff), Changed: rc.Changed})
		switch {
		case err != nil:
			review.ReviewedBy, review.Reason = "gate", "the reviewer failed, so the diff is denied: "+err.Error()
		default:
			review.Approved, review.ReviewedBy, review.Reason = v.Approved, v.By, v.Reason
		}
	}
	if review.ReviewedBy == "" {
		review.ReviewedBy = "unknown"
	}
	if review.Approved {
		changed, err := apply(ctx, rc, string(diff), opt.Workspace)
		if err != nil {
			return nil, err // nothing applied; the run stays unreviewed
		}
		review.Applied, review.Changed = true, changed
	}
	rc.Review = review
	rc.Stage = bundle.StageCompleted
	switch {
	case review.Approved:
		rc.Status = bundle.StatusPassed
	case rc.Status == bundle.StatusAwaitingReview:
		rc.Status = bundle.StatusFailed
		rc.Failure = &bundle.Failure{Domain: bundle.DomainAgent, Stage: bundle.StageAwaitingReview, Code: "rejected", Message: "the diff was rejected in review: " + review.Reason}
	}
	if err := appendEvent(runDir, "review.decided", map[string]any{"approved": review.Approved, "by": review.ReviewedBy, "reason": review.Reason, "applied": review.Applied, "changed": review.Changed}, opt.Now()); err != nil {
		return nil, err
	}
	if err := bundle.WriteReceipt(runDir, &rc); err != nil {
		return nil, err
	}
	return review, nil
}

// lock takes the run's review lock, exclusively, waiting a few seconds for
// another review to finish (so that the second of two reviews at once sees
// the first's decision).
func lock(runDir string) (func(), error) {
	path := filepath.Join(runDir, ".review.lock")
	deadline := time.Now().Add(5 * time.Second)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	for errors.Is(err, fs.ErrExist) && time.Now().Before(deadline) {
		time.Sleep(25 * time.Millisecond)
		f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if errors.Is(err, fs.ErrExist) {
		// A lock left by a crashed process is stale after a while.
		if info, serr := os.Stat(path); serr == nil && time.Since(info.ModTime()) > 30*time.Minute {
			os.Remove(path)
			return lock(runDir)
		}
		return nil, ErrBusy
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", runDir, err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	f.Close()
	return func() { os.Remove(path) }, nil
}

// apply writes the diff's result into the source tree, or nothing at all.
func apply(ctx context.Context, rc bundle.Receipt, diff, repo string) ([]string, error) {
	ws := workspace.Open(repo, rc.Source.CommitSHA)
	if repo == "" || !ws.HasCommit(ctx, rc.Source.CommitSHA) {
		return nil, fmt.Errorf("cannot apply run %s: its base commit %s is not in %q; the run's workspace is gone", rc.RunID, rc.Source.CommitSHA, repo)
	}
	src := rc.Source.Path
	// 1. Conflict check: every touched file must still be as it was at the
	// base, byte for byte.
	base, err := ws.BaseBlobs(ctx, rc.Changed)
	if err != nil {
		return nil, err
	}
	var conflicts []string
	for _, p := range rc.Changed {
		got, err := blobOf(filepath.Join(src, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", p, err)
		}
		if got != base[p] {
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Files: conflicts}
	}
	// 2. Build the result beside the source: the base versions of the
	// touched files, patched.
	scratch, err := os.MkdirTemp("", "proctor-apply-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	var existing []string
	for _, p := range rc.Changed {
		if base[p] != "" {
			existing = append(existing, p)
		}
	}
	if len(existing) > 0 {
		if err := ws.Extract(ctx, rc.Source.CommitSHA, scratch, existing...); err != nil {
			return nil, err
		}
	}
	if err := workspace.ApplyPatch(ctx, scratch, diff); err != nil {
		return nil, fmt.Errorf("nothing was applied: %w", err)
	}
	// 3. Move the results into the source tree.
	for _, p := range rc.Changed {
		from, to := filepath.Join(scratch, filepath.FromSlash(p)), filepath.Join(src, filepath.FromSlash(p))
		info, err := os.Lstat(from)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("apply: delete %s: %w", p, err)
			}
		case err != nil:
			return nil, err
		default:
			data, err := os.ReadFile(from)
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return nil, err
			}
			if err := bundle.WriteFileAtomic(to, data, info.Mode().Perm()); err != nil {
				return nil, fmt.Errorf("apply: %w", err)
			}
		}
	}
	return rc.Changed, nil
}

// blobOf is the git blob id of the file at path, or "" when it does not
// exist.
func blobOf(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// appendEvent adds one event to the run's events.jsonl, after the last one.
func appendEvent(runDir, typ string, data any, now time.Time) error {
	events, _, err := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	if err != nil {
		return err
	}
	var seq int64 = 1
	if n := len(events); n > 0 {
		seq = events[n-1].Seq + 1
	}
	return bundle.AppendEvent(runDir, bundle.Event{Seq: seq, Time: now.UTC(), Type: typ}, data)
}
