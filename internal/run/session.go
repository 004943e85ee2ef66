package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// sessionState is a session being continued by a run.
type sessionState struct {
	session *bundle.Session
	isNew   bool
	ws      *workspace.Workspace
}

// lockSession holds session id for one run until unlock: a session's runs
// share one workspace and conversation, so they run one at a time, each
// waiting (until ctx ends) for the one before to be recorded. The lock is
// a flock on <data>/sessions/.<id>.lock, which the kernel drops when the
// process dies; the file stays (removing it would let two runs lock two
// files).
func (r *Runner) lockSession(ctx context.Context, id string) (unlock func(), err error) {
	if !bundle.ValidID(id) {
		return nil, fmt.Errorf("session %q: not a valid session id", id)
	}
	if err := os.MkdirAll(r.Records().SessionsDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	l, err := flock.Wait(ctx, filepath.Join(r.Records().SessionsDir(), "."+id+".lock"), true)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("session %s: stopped while waiting for its other run to end: %w", id, context.Cause(ctx))
	case err != nil:
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return func() { l.Unlock() }, nil
}

func (r *Runner) openSession(spec Spec) (*sessionState, error) {
	if spec.Session == "new" {
		now := r.now().UTC()
		id := "sess-" + NewRunID(now)
		return &sessionState{isNew: true, session: &bundle.Session{Schema: bundle.SessionSchema, SessionID: id,
			Title: bundle.Line(redact.FromEnv(r.Environ, spec.Model.Endpoint.APIKey).String(spec.Task), 80), Workspace: r.Records().WorkspaceDir(id), Source: spec.SourceDir, CreatedAt: now, UpdatedAt: now, Bounds: spec.Bounds}}, nil
	}
	s, err := r.Records().LoadSession(spec.Session)
	if _, serr := os.Stat(filepath.Join(r.Records().SessionsDir(), spec.Session+".json")); err != nil && spec.Resumes != "" && errors.Is(serr, fs.ErrNotExist) {
		// The run resumed was the session's first, stopped before the
		// session was written; the resumed run writes it.
		s, err = &bundle.Session{SessionID: spec.Session, Workspace: r.Records().WorkspaceDir(spec.Session)}, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(s.Workspace); err != nil {
		return nil, fmt.Errorf("session %s: its workspace %s is gone: %w", s.SessionID, s.Workspace, errors.Unwrap(err))
	}
	return &sessionState{session: s}, nil
}

// prepare makes the session's workspace ready for the next run and returns
// the conversation so far.
func (s *sessionState) prepare(ctx context.Context, l *live) (*workspace.Workspace, []model.Message, error) {
	l.receipt.SessionID = s.session.SessionID
	if l.spec.Resumes != "" {
		return l.resume(ctx)
	}
	lim := workspace.Limits{MaxFiles: l.spec.Bounds.MaxFiles, MaxBytes: l.spec.Bounds.MaxWorkspaceBytes}
	if s.isNew {
		ws, err := workspace.Create(ctx, l.spec.SourceDir, s.session.Workspace, "proctor: base", lim)
		return ws, nil, err
	}
	ws := workspace.Open(s.session.Workspace, "")
	// Each run of a session is diffed against the state the one before
	// left behind.
	base, err := ws.Checkpoint(ctx, "proctor: before run "+l.id)
	if err != nil {
		return nil, nil, err
	}
	ws.Base = base
	if len(s.session.Runs) == 0 || !l.spec.Agent.IsNative() {
		return ws, nil, nil // an external agent keeps its own conversation
	}
	last := filepath.Join(l.r.DataDir, "runs", s.session.Runs[len(s.session.Runs)-1])
	history, err := records.History(last)
	if err != nil {
		return nil, nil, fmt.Errorf("session %s: %w", s.session.SessionID, err)
	}
	// The run is applied to the session's own source, like the first.
	l.receipt.Source.Path = l.r.Records().SessionSource(s.session)
	return ws, history, nil
}

func (r *Runner) saveSession(l *live) error {
	if l.receipt.SessionID == "" {
		return nil
	}
	var s *bundle.Session
	if existing, err := r.Records().LoadSession(l.receipt.SessionID); err == nil {
		s = existing
	} else {
		// The title is the task, which may hold a secret.
		s = &bundle.Session{Schema: bundle.SessionSchema, SessionID: l.receipt.SessionID, Title: bundle.Line(l.redact.String(l.spec.Task), 80),
			Workspace: r.Records().WorkspaceDir(l.receipt.SessionID), Source: l.spec.SourceDir, CreatedAt: l.receipt.StartedAt, Bounds: l.spec.Bounds}
	}
	s.Runs = append(s.Runs, l.id)
	s.UpdatedAt = time.Now().UTC()
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	if err := os.MkdirAll(r.Records().SessionsDir(), 0o755); err != nil {
		return err
	}
	return bundle.WriteSession(r.Records().SessionsDir(), s)
}
