package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// RunDir is the bundle folder of a run of the data folder: its own folder
// under runs/, or for a run recorded in a pack there, an unpacked copy
// (bundle.Unpacked).
func (r *Runner) RunDir(runID string) (string, error) {
	if !bundle.ValidID(runID) {
		return "", fmt.Errorf("run %q: not a valid run id", runID)
	}
	dir := filepath.Join(r.DataDir, "runs", runID)
	if _, err := os.Stat(filepath.Join(dir, bundle.ReceiptFile)); err == nil {
		return dir, nil
	}
	// A run recorded in a suite's pack is read from an unpacked copy.
	if ref, ok := bundle.FindPacked(filepath.Join(r.DataDir, "runs"), runID); ok {
		return bundle.Unpacked(ref, bundle.UnpackCache(r.DataDir))
	}
	return "", fmt.Errorf("run %s: no bundle at %s, nor in a pack beside it", runID, dir)
}

// BaseRepo is the repository that holds the base commit of a run: its own
// workspace, or its session's.
func (r *Runner) BaseRepo(runDir string, rc *bundle.Receipt) string {
	own := filepath.Join(runDir, "workspace")
	if _, err := os.Stat(own); err == nil {
		return own
	}
	if rc.SessionID == "" {
		return own
	}
	if s, err := r.LoadSession(rc.SessionID); err == nil {
		return s.Workspace // a session made of a run works in that run's workspace
	}
	return r.WorkspaceDir(rc.SessionID)
}

// Mbox is an approved git run's change as an mbox for git am: one commit on
// top of the run's pinned commit, subject the task's first line.
func (r *Runner) Mbox(ctx context.Context, runID string) ([]byte, error) {
	b, dir, err := r.readRun(runID)
	if err != nil {
		return nil, err
	}
	rc := b.Receipt
	switch {
	case !rc.Source.IsGit():
		return nil, fmt.Errorf("run %s worked on a %s source; an mbox is offered for git runs", runID, rc.Source.Kind)
	case rc.Review == nil || !rc.Review.Approved:
		return nil, fmt.Errorf("run %s is not approved: its change is offered once it is", runID)
	}
	patch, err := bundle.ReadFile(dir, bundle.OfferedFile(&rc), bundle.DefaultLimits().MaxTextBytes)
	if err != nil {
		return nil, fmt.Errorf("run %s: read its diff: %w", runID, err)
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(rc.Task), "\n")
	if len([]rune(subject)) > 72 {
		subject = string([]rune(subject)[:71]) + "…"
	}
	msg := fmt.Sprintf("%s\n\nMade by proctor run %s (model %s), approved by %s.", subject, runID, rc.Model.Name, rc.Review.ReviewedBy)
	return workspace.Mbox(ctx, r.BaseRepo(dir, &rc), rc.Source.CommitSHA, string(patch), msg, "proctor <proctor@localhost>", rc.Review.ReviewedAt)
}

// ExportScript turns a recorded run into a model script.
func (r *Runner) ExportScript(runID string) ([]byte, error) {
	dir, err := r.RunDir(runID)
	if err != nil {
		return nil, err
	}
	xs, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("export run %s: %v", runID, probs)
	}
	return script.Export("replay of "+runID, xs)
}

// ReplaySpec builds the spec that runs a recorded run again, offline: the
// model answers from the recorded exchanges, gated calls get the recorded
// decisions, and the source is the run's base, rebuilt from its workspace.
// cleanup removes the rebuilt source.
func (r *Runner) ReplaySpec(ctx context.Context, runID string) (Spec, func(), error) {
	nothing := func() {}
	b, dir, err := r.readRun(runID)
	if err != nil {
		return Spec{}, nothing, err
	}
	rc := b.Receipt
	data, err := r.ExportScript(runID)
	if err != nil {
		return Spec{}, nothing, err
	}
	s, err := script.Parse("replay:"+runID, data)
	if err != nil {
		return Spec{}, nothing, err
	}
	events, _, err := bundle.ReadEvents(dir, bundle.DefaultLimits())
	if err != nil {
		return Spec{}, nothing, err
	}
	recorded := agent.Recorded{}
	for _, ev := range events {
		if ev.Type != bundle.EventApprovalDecided {
			continue
		}
		var d bundle.ApprovalDecidedEvent
		if json.Unmarshal(ev.Data, &d) == nil {
			recorded[d.ID] = agent.Decision{Approved: d.Approved, By: d.By, Reason: d.Reason}
		}
	}
	spec := Spec{Kind: rc.Kind, Task: rc.Task, Criteria: rc.Criteria, OutOfScope: rc.OutOfScope, Bounds: rc.Bounds,
		Model: ModelChoice{Script: s}, Approver: recorded, Scenario: rc.Scenario, SourceKind: rc.Source.Kind}
	if a := rc.Agent; a != nil && a.Kind != external.KindNative {
		// The same agent again, its model answering from the recording.
		spec.Agent = external.Agent{Name: a.Name, Kind: a.Kind, Command: a.Command}
	}
	repo := workspace.Open(r.BaseRepo(dir, &rc), rc.Source.CommitSHA)
	if rc.Source.CommitSHA != "" && repo.HasCommit(ctx, rc.Source.CommitSHA) {
		tmp, err := os.MkdirTemp("", "proctor-replay-*")
		if err != nil {
			return Spec{}, nothing, err
		}
		src := filepath.Join(tmp, "source")
		if err := repo.Extract(ctx, rc.Source.CommitSHA, src); err != nil {
			os.RemoveAll(tmp)
			return Spec{}, nothing, fmt.Errorf("rebuild the base of run %s: %w", runID, err)
		}
		spec.SourceDir = src
		return spec, func() { os.RemoveAll(tmp) }, nil
	}
	if rc.Source.Path == "" {
		return Spec{}, nothing, fmt.Errorf("replay %s: its workspace is gone and its receipt names no source path", runID)
	}
	spec.SourceDir = rc.Source.Path
	return spec, nothing, nil
}
