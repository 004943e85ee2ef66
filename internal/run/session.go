package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// sessionState is a session being continued by a run.
type sessionState struct {
	session *bundle.Session
	isNew   bool
	ws      *workspace.Workspace
}

func (r *Runner) sessionsDir() string { return filepath.Join(r.DataDir, "sessions") }

// WorkspaceDir is where a session keeps its workspace.
func (r *Runner) WorkspaceDir(sessionID string) string {
	return filepath.Join(r.DataDir, "workspaces", sessionID)
}

// LoadSession reads a session of the data folder.
func (r *Runner) LoadSession(id string) (*bundle.Session, error) {
	if !bundle.ValidID(id) {
		return nil, fmt.Errorf("session %q: not a valid session id", id)
	}
	s, err := bundle.ReadSession(filepath.Join(r.sessionsDir(), id+".json"), bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
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
	if err := os.MkdirAll(r.sessionsDir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	l, err := flock.Wait(ctx, filepath.Join(r.sessionsDir(), "."+id+".lock"), true)
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
			Title: clip(redact.FromEnv(r.Environ, spec.Model.Endpoint.APIKey).String(spec.Task), 80), Workspace: r.WorkspaceDir(id), Source: spec.SourceDir, CreatedAt: now, UpdatedAt: now, Bounds: spec.Bounds}}, nil
	}
	s, err := r.LoadSession(spec.Session)
	if _, serr := os.Stat(filepath.Join(r.sessionsDir(), spec.Session+".json")); err != nil && spec.Resumes != "" && errors.Is(serr, fs.ErrNotExist) {
		// The run resumed was the session's first, stopped before the
		// session was written; the resumed run writes it.
		s, err = &bundle.Session{SessionID: spec.Session, Workspace: r.WorkspaceDir(spec.Session)}, nil
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
	history, err := History(last)
	if err != nil {
		return nil, nil, fmt.Errorf("session %s: %w", s.session.SessionID, err)
	}
	// The run is applied to the session's own source, like the first.
	l.receipt.Source.Path = l.r.sessionSource(s.session)
	return ws, history, nil
}

// sessionSource is the folder a session's runs apply to: the one its first
// run copied (older session files do not say; their first run's receipt
// does).
func (r *Runner) sessionSource(s *bundle.Session) string {
	if s.Source != "" || len(s.Runs) == 0 {
		return s.Source
	}
	b, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", s.Runs[0]), bundle.DefaultLimits())
	if err != nil {
		return ""
	}
	return b.Receipt.Source.Path
}

// ReviewOptions are the gate options a review of the run in dir needs from
// the data folder: the repository that holds its base, and the runs of its
// session before it. The caller adds who decides and how it is recorded.
func (r *Runner) ReviewOptions(dir string, rc *bundle.Receipt) (gate.Options, error) {
	earlier, err := r.EarlierInSession(rc)
	if err != nil {
		return gate.Options{}, err
	}
	return gate.Options{Workspace: r.BaseRepo(dir, rc), Earlier: earlier}, nil
}

// EarlierInSession lists the runs of rc's session before it, in order,
// with whether each is settled for the gate (see gate.Earlier). A run
// outside a session has none.
func (r *Runner) EarlierInSession(rc *bundle.Receipt) ([]gate.Earlier, error) {
	if rc.SessionID == "" {
		return nil, nil
	}
	s, err := r.LoadSession(rc.SessionID)
	if err != nil {
		return nil, err
	}
	var out []gate.Earlier
	for _, id := range s.Runs {
		if id == rc.RunID {
			return out, nil
		}
		if id == rc.Resumes {
			continue // its changes are in rc's diff: rc goes on from its base
		}
		b, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", id), bundle.DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("session %s: run %s: %w", s.SessionID, id, err)
		}
		e := gate.Earlier{RunID: id, HasChanges: len(b.Receipt.Changed) > 0}
		if rv := b.Receipt.Review; rv != nil {
			e.Reviewed, e.Applied = true, rv.Applied
		}
		out = append(out, e)
	}
	return nil, fmt.Errorf("session %s does not hold run %s", s.SessionID, rc.RunID)
}

// History rebuilds the conversation of a finished run from its exchanges:
// the last request's messages and the reply to it, with a result for each
// of the reply's tool calls, as the next user message needs them.
func History(runDir string) ([]model.Message, error) {
	msgs, calls, err := lastExchange(runDir)
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		content := "not answered: the run ended"
		if c.Name == "ask_user" {
			content = "the question was sent to the user; their answer comes in the next message"
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: content})
	}
	return msgs, nil
}

// ResumeHistory rebuilds the conversation of an interrupted run: the last
// answered request's messages and the reply to it, a result for each of
// the reply's tool calls that ran before the interruption (its output was
// not kept, and the model is told so), and the calls that had not run —
// the one that waited for approval among them — to be run again.
func ResumeHistory(runDir string) ([]model.Message, []model.ToolCall, error) {
	msgs, calls, err := lastExchange(runDir)
	if err != nil {
		return nil, nil, err
	}
	events, _, err := bundle.ReadEvents(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, nil, err
	}
	// A call ran when it has a result, unless that result is a denial
	// because its approval was cut short (the approver failed: the server
	// stopped while it waited).
	ran, cut := map[string]bool{}, map[string]bool{}
	for _, ev := range events {
		var r bundle.ToolResultEvent
		var d bundle.ApprovalDecidedEvent
		switch {
		case ev.Type == bundle.EventToolResult && json.Unmarshal(ev.Data, &r) == nil:
			ran[r.ID] = true
		case ev.Type == bundle.EventApprovalDecided && json.Unmarshal(ev.Data, &d) == nil && d.By == "error":
			cut[d.ID] = true
		}
	}
	var pending []model.ToolCall
	for _, c := range calls {
		if ran[c.ID] && !cut[c.ID] {
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: "this call ran before proctor was restarted; its output was not kept (call it again if you need it)"})
		} else {
			pending = append(pending, c)
		}
	}
	return msgs, pending, nil
}

// lastExchange is the last answered request's messages with the reply
// appended, and the reply's tool calls.
func lastExchange(runDir string) ([]model.Message, []model.ToolCall, error) {
	xs, _, err := bundle.ReadExchanges(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, nil, err
	}
	for i := len(xs) - 1; i >= 0; i-- {
		if len(xs[i].Response) == 0 || xs[i].Error != "" {
			continue
		}
		_, req, err := model.DecodeAnyRequest(xs[i].API, xs[i].Request)
		if err != nil {
			return nil, nil, fmt.Errorf("read the history of %s: %w", runDir, err)
		}
		resp, err := model.DecodeReply(xs[i].API, xs[i].Response)
		if err != nil {
			return nil, nil, fmt.Errorf("read the history of %s: %w", runDir, err)
		}
		return append(req.Messages, resp.Message), resp.Message.ToolCalls, nil
	}
	return nil, nil, fmt.Errorf("%s has no answered model call to continue from", runDir)
}

func (r *Runner) saveSession(l *live) error {
	if l.receipt.SessionID == "" {
		return nil
	}
	var s *bundle.Session
	if existing, err := r.LoadSession(l.receipt.SessionID); err == nil {
		s = existing
	} else {
		// The title is the task, which may hold a secret.
		s = &bundle.Session{Schema: bundle.SessionSchema, SessionID: l.receipt.SessionID, Title: clip(l.redact.String(l.spec.Task), 80),
			Workspace: r.WorkspaceDir(l.receipt.SessionID), Source: l.spec.SourceDir, CreatedAt: l.receipt.StartedAt, Bounds: l.spec.Bounds}
	}
	s.Runs = append(s.Runs, l.id)
	s.UpdatedAt = time.Now().UTC()
	if s.UpdatedAt.Before(s.CreatedAt) {
		s.UpdatedAt = s.CreatedAt
	}
	if err := os.MkdirAll(r.sessionsDir(), 0o755); err != nil {
		return err
	}
	return bundle.WriteSession(r.sessionsDir(), s)
}
