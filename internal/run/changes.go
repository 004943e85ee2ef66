package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Limits of a request for changes.
const (
	MaxSummary  = 4000
	MaxComments = 200
	MaxComment  = 2000
)

// RequestChanges records a reviewer's request for changes on the run
// runID (in its comments.json) and readies the run's session to continue
// it: a run outside a session becomes the first run of a new one, over its
// own workspace. It returns the session and the message the agent is to
// get as its next user turn. The run itself stays as it is (awaiting
// review): a session's runs are applied in order, so it is approved (or
// rejected) before the run that makes the changes.
func (r *Runner) RequestChanges(runID string, cr bundle.ChangeRequest) (string, string, error) {
	b, dir, err := r.readRun(runID)
	if err != nil {
		return "", "", fmt.Errorf("request changes: %w", err)
	}
	rc := b.Receipt
	switch {
	case rc.Review != nil:
		return "", "", fmt.Errorf("run %s is reviewed already (%s by %s); request changes of a run that awaits review", runID, reviewWord(rc.Review), rc.Review.ReviewedBy)
	case rc.Status != bundle.StatusAwaitingReview && rc.Status != bundle.StatusPassed && rc.Status != bundle.StatusFailed:
		return "", "", fmt.Errorf("run %s is %s; changes are requested of a run that has ended", runID, strings.ReplaceAll(string(rc.Status), "_", " "))
	case rc.Kind == bundle.KindScenario:
		return "", "", fmt.Errorf("run %s is a scenario run; change the scenario instead", runID)
	}
	cr.Summary = strings.TrimSpace(cr.Summary)
	if cr.Summary == "" && len(cr.Comments) == 0 {
		return "", "", errors.New("say what to change: a summary, or a comment on a line")
	}
	if len(cr.Summary) > MaxSummary || len(cr.Comments) > MaxComments {
		return "", "", fmt.Errorf("at most %d characters of summary and %d comments", MaxSummary, MaxComments)
	}
	diff, _ := bundle.ReadFile(dir, bundle.DiffFile, 64<<20)
	files, _ := patch.Parse(string(diff))
	for i, c := range cr.Comments {
		cr.Comments[i].Text = strings.TrimSpace(c.Text)
		if cr.Comments[i].Text == "" || len(c.Text) > MaxComment {
			return "", "", fmt.Errorf("comment %d on %s: give its text (at most %d characters)", i+1, c.Path, MaxComment)
		}
		q, ok := Quote(files, c.Path, c.Line)
		if !ok {
			return "", "", fmt.Errorf("comment %d: %s:%d is not a line of the run's diff", i+1, c.Path, c.Line)
		}
		cr.Comments[i].Quote = q
	}
	session := rc.SessionID
	if session == "" {
		if session, err = r.sessionFromRun(dir, rc); err != nil {
			return "", "", err
		}
	}
	cr.Session = session
	if err := appendRequest(dir, cr); err != nil {
		return "", "", err
	}
	return session, ChangesMessage(runID, cr), nil
}

// LinkRequest records which run was asked to make the last requested
// changes of runID.
func (r *Runner) LinkRequest(runID, nextRun string) error {
	dir, err := r.RunDir(runID)
	if err != nil {
		return err
	}
	c, err := readComments(dir)
	if err != nil || len(c.Requests) == 0 {
		return err
	}
	c.Requests[len(c.Requests)-1].NextRun = nextRun
	return bundle.WriteJSON(filepath.Join(dir, bundle.CommentsFile), c)
}

func readComments(dir string) (bundle.Comments, error) {
	c := bundle.Comments{Schema: bundle.CommentsSchema}
	data, err := bundle.ReadFile(dir, bundle.CommentsFile, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(dir, bundle.CommentsFile), err)
	}
	return c, nil
}

func appendRequest(dir string, cr bundle.ChangeRequest) error {
	c, err := readComments(dir)
	if err != nil {
		return err
	}
	c.Requests = append(c.Requests, cr)
	return bundle.WriteJSON(filepath.Join(dir, bundle.CommentsFile), c)
}

// sessionFromRun makes a run outside a session the first run of a new
// session over its workspace, applied to the run's source.
func (r *Runner) sessionFromRun(dir string, rc bundle.Receipt) (string, error) {
	ws := filepath.Join(dir, "workspace")
	if _, err := os.Stat(workspace.GitDir(ws)); err != nil {
		return "", fmt.Errorf("run %s cannot be continued: its workspace %s is gone", rc.RunID, ws)
	}
	now := r.now().UTC()
	s := &bundle.Session{Schema: bundle.SessionSchema, SessionID: "sess-" + rc.RunID, Title: clip(rc.Task, 80), Workspace: ws,
		Source: rc.Source.Path, CreatedAt: now, UpdatedAt: now, Runs: []string{rc.RunID}, Bounds: rc.Bounds}
	if err := os.MkdirAll(r.sessionsDir(), 0o755); err != nil {
		return "", err
	}
	if err := bundle.WriteSession(r.sessionsDir(), s); err != nil {
		return "", err
	}
	return s.SessionID, nil
}

// Quote is the code a comment on path:line is about: that line of the new
// side of the diff (line 0: the file's first hunk's changed lines). ok is
// false when the diff has no such file or line.
func Quote(files []patch.File, path string, line int) (string, bool) {
	for _, f := range files {
		if f.Path() != path {
			continue
		}
		var changed []string
		for _, h := range f.Hunks {
			for _, l := range h.Lines {
				if line > 0 && l.NewNo == line && l.Kind != patch.Deleted && l.Kind != patch.Note {
					return l.Text, true
				}
				if l.Kind == patch.Added && len(changed) < 5 {
					changed = append(changed, l.Text)
				}
			}
		}
		if line == 0 {
			return strings.Join(changed, "\n"), true
		}
	}
	return "", false
}

// ChangesMessage is the user turn that asks the agent for the changes.
func ChangesMessage(runID string, cr bundle.ChangeRequest) string {
	// The first line is the new run's title in lists: who asked, and what.
	var b strings.Builder
	first := fmt.Sprintf("%d comments on your changes.", len(cr.Comments))
	if len(cr.Comments) == 1 {
		first = "a comment on your changes."
	}
	if cr.Summary != "" {
		first, _, _ = strings.Cut(cr.Summary, "\n")
	}
	fmt.Fprintf(&b, "Changes requested by %s: %s\n\nA reviewer asked for changes to what you did (run %s).\n", cr.By, first, runID)
	if _, rest, ok := strings.Cut(cr.Summary, "\n"); ok && strings.TrimSpace(rest) != "" {
		b.WriteString("\n" + strings.TrimSpace(rest) + "\n")
	}
	if len(cr.Comments) > 0 {
		b.WriteString("\nComments on your changes:\n")
		for _, c := range cr.Comments {
			where := c.Path
			if c.Line > 0 {
				where += ":" + strconv.Itoa(c.Line)
			}
			fmt.Fprintf(&b, "\n- %s: %s\n", where, c.Text)
			for _, q := range strings.Split(c.Quote, "\n") {
				if c.Quote != "" {
					b.WriteString("  > " + q + "\n")
				}
			}
		}
	}
	b.WriteString("\nMake these changes in the workspace, then say what you changed.")
	return b.String()
}

func reviewWord(rv *bundle.Review) string {
	if rv.Approved {
		return "approved"
	}
	return "rejected"
}

// nearLines is how far from a comment's line a later change may be and
// still address the comment.
const nearLines = 2

// Addressed reports whether files, the diff of the run asked to make the
// changes, changes the code a comment on path:line is about: that line or
// one within two lines of it, or the whole file (deleted, binary); a
// comment on line 0 is about the whole file, so any change to it counts.
// The comment's lines are the new side of the commented run's diff, which
// is the old side of the next run's (it starts where the commented run
// ended).
func Addressed(files []patch.File, path string, line int) bool {
	near := func(n int) bool { return n >= line-nearLines && n <= line+nearLines }
	for _, f := range files {
		if f.OldPath != path {
			continue
		}
		if line == 0 || f.Binary || f.Mode == "deleted" {
			return true
		}
		for _, h := range f.Hunks {
			at, replaces := h.After, false // the old line an added line follows; whether it replaces deleted lines
			for _, l := range h.Lines {
				switch l.Kind {
				case patch.Context:
					at, replaces = l.OldNo, false
				case patch.Deleted:
					if at, replaces = l.OldNo, true; near(at) {
						return true
					}
				case patch.Added: // inserted between old lines at and at+1
					if !replaces && (near(at) || near(at+1)) {
						return true
					}
				}
			}
		}
	}
	return false
}

// RequestState is a change request with, for each comment, whether the run
// asked to make it changed the code the comment is on (Addressed; the
// reviewer judges the rest on that run's page).
type RequestState struct {
	bundle.ChangeRequest
	RunID     string // the run the request was made of
	Addressed []bool // by comment
	NextState string // the next run's status, "" when unknown
}

// ChangeRequests are the change requests made of the run in dir.
func (r *Runner) ChangeRequests(dir string) ([]RequestState, error) {
	c, err := readComments(dir)
	if err != nil {
		return nil, err
	}
	var out []RequestState
	for _, cr := range c.Requests {
		out = append(out, r.requestState(filepath.Base(dir), cr))
	}
	return out, nil
}

// SessionRequests are the change requests made of the runs runIDs (a
// session's, in order); a run whose comments.json cannot be read is left
// out (its own page says why).
func (r *Runner) SessionRequests(runIDs []string) []RequestState {
	var out []RequestState
	for _, id := range runIDs {
		dir, err := r.RunDir(id)
		if err != nil {
			continue
		}
		if rs, err := r.ChangeRequests(dir); err == nil {
			out = append(out, rs...)
		}
	}
	return out
}

// Addressing is the change request the run rc was made for, if any.
func (r *Runner) Addressing(rc bundle.Receipt) (*RequestState, error) {
	if rc.Addresses == "" {
		return nil, nil
	}
	dir, err := r.RunDir(rc.Addresses)
	if err != nil {
		return nil, err
	}
	c, err := readComments(dir)
	if err != nil {
		return nil, err
	}
	for _, cr := range c.Requests {
		if cr.NextRun == rc.RunID {
			st := r.requestState(rc.Addresses, cr)
			return &st, nil
		}
	}
	return nil, nil
}

func (r *Runner) requestState(runID string, cr bundle.ChangeRequest) RequestState {
	st := RequestState{ChangeRequest: cr, RunID: runID, Addressed: make([]bool, len(cr.Comments))}
	if cr.NextRun == "" {
		return st
	}
	b, dir, err := r.readRun(cr.NextRun)
	if err != nil {
		return st
	}
	st.NextState = string(b.Receipt.Status)
	diff, _ := bundle.ReadFile(dir, bundle.DiffFile, 64<<20)
	files, _ := patch.Parse(string(diff))
	for i, cm := range cr.Comments {
		st.Addressed[i] = Addressed(files, cm.Path, cm.Line)
	}
	return st
}

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
	if _, _, err := ResumeHistory(dir); err != nil {
		return Spec{}, fmt.Errorf("resume run %s: %w", runID, err)
	}
	rc := b.Receipt
	if rc.SessionID != "" {
		if _, err := r.resumedSession(ctx, rc); err != nil {
			return Spec{}, err
		}
	}
	return Spec{Kind: rc.Kind, SourceDir: rc.Source.Path, SourceKind: rc.Source.Kind, Task: rc.Task, Criteria: rc.Criteria, OutOfScope: rc.OutOfScope,
		Bounds: rc.Bounds, Sandbox: rc.Sandbox, Resumes: runID, Session: rc.SessionID, Addresses: rc.Addresses}, nil
}

// Receipt is the receipt of the run runID of the data folder.
func (r *Runner) Receipt(runID string) (bundle.Receipt, error) {
	b, _, err := r.readRun(runID)
	if err != nil {
		return bundle.Receipt{}, err
	}
	return b.Receipt, nil
}

func (r *Runner) readRun(runID string) (*bundle.Run, string, error) {
	dir, err := r.RunDir(runID)
	if err != nil {
		return nil, "", err
	}
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		return nil, "", fmt.Errorf("run %s: %w", runID, err)
	}
	return b, dir, nil
}

// interrupted reads the run runID, which must be an interrupted run of
// proctor's own agent outside a scenario.
func (r *Runner) interrupted(runID string) (*bundle.Run, string, error) {
	b, dir, err := r.readRun(runID)
	if err != nil {
		return nil, "", fmt.Errorf("resume: %w", err)
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
	dir := r.WorkspaceDir(rc.SessionID)
	if s, err := r.LoadSession(rc.SessionID); err == nil {
		dir = s.Workspace
		if n := len(s.Runs); n > 0 {
			if last, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", s.Runs[n-1]), bundle.DefaultLimits()); err == nil && last.Receipt.Resumes == rc.RunID {
				return nil, fmt.Errorf("run %s was resumed already, as run %s; continue the session instead", rc.RunID, last.Receipt.RunID)
			}
		}
	} else if _, serr := os.Stat(filepath.Join(r.sessionsDir(), rc.SessionID+".json")); !errors.Is(serr, fs.ErrNotExist) {
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
	history, pending, err := ResumeHistory(dir)
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
