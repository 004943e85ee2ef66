package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// ResumeSpec is the spec of a run that goes on from the interrupted run
// runID (a server stopped while it waited for an approval or worked): the
// same task, source, bounds, kind and session, its workspace as it was,
// its conversation rebuilt from its exchanges, and its calls that had not
// run run first — a gated one asked about again. The caller adds the model
// and the approver. Only proctor's own agent can be resumed this way; a
// run of a session only while it is the session's latest (no run has
// continued the session since).
func (r *Runner) ResumeSpec(ctx context.Context, runID string) (Spec, error) {
	b, dir, err := r.interrupted(runID)
	if err != nil {
		return Spec{}, err
	}
	if _, _, err := records.ResumeHistory(dir); err != nil {
		return Spec{}, fmt.Errorf("resume run %s: %w", runID, err)
	}
	rc := b.Receipt
	if rc.SessionID != "" {
		if _, err := r.resumedSession(ctx, rc); err != nil {
			return Spec{}, err
		}
	}
	// (the bundle's reader has checked the receipt's mode; "" is the
	// runner's, for a run from before proctor had a sandbox)
	return Spec{Kind: rc.Kind, SourceDir: rc.Source.Path, SourceKind: rc.Source.Kind, Task: rc.Task, Criteria: rc.Criteria, OutOfScope: rc.OutOfScope,
		Bounds: rc.Bounds, Sandbox: sandbox.Mode(rc.Sandbox), Resumes: runID, Session: rc.SessionID, Addresses: rc.Addresses}, nil
}

// interrupted reads the run runID, which must be an interrupted run of
// proctor's own agent outside a scenario.
func (r *Runner) interrupted(runID string) (*bundle.Run, string, error) {
	b, dir, err := r.Records().Read(runID)
	if err != nil {
		return nil, "", fmt.Errorf("resume: %w", err)
	}
	if r.Records().Pushed(runID) {
		return nil, "", fmt.Errorf("run %s was pushed from elsewhere: it is resumed where it ran, not here", runID)
	}
	if err := Resumable(b.Receipt); err != nil {
		return nil, "", err
	}
	return b, dir, nil
}

// Resumable says why the run of receipt rc cannot be resumed, nil when it
// can: it must be an interrupted run of proctor's own agent outside a
// scenario.
func Resumable(rc bundle.Receipt) error {
	switch {
	case rc.Status != bundle.StatusInterrupted:
		return fmt.Errorf("run %s is %s; only an interrupted run is resumed", rc.RunID, strings.ReplaceAll(string(rc.Status), "_", " "))
	case rc.Agent != nil && rc.Agent.Kind != "" && rc.Agent.Kind != "native":
		return fmt.Errorf("run %s's agent (%s) keeps its own conversation; start a new run instead", rc.RunID, rc.Agent.Name)
	case rc.Kind == bundle.KindScenario:
		return fmt.Errorf("run %s is a scenario run; run the scenario again instead", rc.RunID)
	}
	return nil
}

// resumedSession is the workspace of the session of the interrupted run
// rc, which must still stand where that run left it: at the run's base,
// with its changes uncommitted (a later run of the session checkpoints the
// workspace and so moves it on), and not resumed already (the session's
// latest run is not its resumption).
func (r *Runner) resumedSession(ctx context.Context, rc bundle.Receipt) (*workspace.Workspace, error) {
	dir := r.Records().WorkspaceDir(rc.SessionID)
	if s, err := r.Records().LoadSession(rc.SessionID); err == nil {
		dir = s.Workspace
		if n := len(s.Runs); n > 0 {
			if last, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", s.Runs[n-1]), bundle.DefaultLimits()); err == nil && last.Receipt.Resumes == rc.RunID {
				return nil, fmt.Errorf("run %s was resumed already, as run %s; continue the session instead", rc.RunID, last.Receipt.RunID)
			}
		}
	} else if _, serr := os.Stat(filepath.Join(r.Records().SessionsDir(), rc.SessionID+".json")); !errors.Is(serr, fs.ErrNotExist) {
		return nil, fmt.Errorf("resume run %s: %w", rc.RunID, err) // a session file that cannot be read
	}
	ws := workspace.Open(dir, rc.Source.CommitSHA)
	head, err := ws.Head(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("resume run %s: the workspace of session %s (%s) cannot be read: %w", rc.RunID, rc.SessionID, dir, err)
	case head != rc.Source.CommitSHA:
		return nil, fmt.Errorf("run %s cannot be resumed: session %s has gone on since (its workspace is past the run's base); continue the session instead", rc.RunID, rc.SessionID)
	}
	return ws, nil
}

// resume readies a resumed run: its workspace (a copy of the interrupted
// run's, against its base; a session's own, as the run left it), its
// conversation, and its calls still to run. The source is the interrupted
// run's (a repository's url, ref and commit too).
func (l *live) resume(ctx context.Context) (*workspace.Workspace, []model.Message, error) {
	b, dir, err := l.r.interrupted(l.spec.Resumes)
	if err != nil {
		return nil, nil, err
	}
	history, pending, err := records.ResumeHistory(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("resume run %s: %w", l.spec.Resumes, err)
	}
	var ws *workspace.Workspace
	if b.Receipt.SessionID != "" {
		ws, err = l.r.resumedSession(ctx, b.Receipt)
	} else if ws, err = workspace.CopyOf(ctx, filepath.Join(dir, "workspace"), filepath.Join(l.dir, "workspace"), b.Receipt.Source.CommitSHA); err != nil {
		err = fmt.Errorf("resume run %s: %w", l.spec.Resumes, err)
	}
	if err != nil {
		return nil, nil, err
	}
	src := b.Receipt.Source
	src.Path = l.receipt.Source.Path
	l.receipt.Source = src
	l.pending = pending
	return ws, history, nil
}
