package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// ReplaySpec builds the spec that runs a recorded run again, offline: the
// model answers from the recorded exchanges, gated calls get the recorded
// decisions, and the source is the run's base, rebuilt from its workspace.
// cleanup removes the rebuilt source.
func (r *Runner) ReplaySpec(ctx context.Context, runID string) (Spec, func(), error) {
	nothing := func() {}
	b, dir, err := r.Records().Read(runID)
	if err != nil {
		return Spec{}, nothing, err
	}
	if r.Records().Pushed(runID) {
		// Its base is in a repository this host never opens, and the folder
		// its receipt names is the pusher's word, not a folder of this host.
		return Spec{}, nothing, fmt.Errorf("run %s was pushed from elsewhere: replay it where it ran (proctor run --replay there), not here", runID)
	}
	rc := b.Receipt
	data, err := r.Records().ExportScript(runID)
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
	repo := workspace.Open(r.Records().BaseRepo(runID, &rc), rc.Source.CommitSHA)
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
