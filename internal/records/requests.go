package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/patch"
)

// RequestChanges records a reviewer's request for changes on the run
// runID (in its comments.json) and readies the run's session to continue
// it: a run outside a session becomes the first run of a new one, over its
// own workspace. It returns the session and the message the agent is to
// get as its next user turn. The run itself stays as it is (awaiting
// review): a session's runs are applied in order, so it is approved (or
// rejected) before the run that makes the changes.
func (d Data) RequestChanges(runID string, cr bundle.ChangeRequest) (string, string, error) {
	b, dir, err := d.Read(runID)
	if err != nil {
		return "", "", fmt.Errorf("request changes: %w", err)
	}
	rc := b.Receipt
	switch {
	case d.Pushed(runID):
		return "", "", fmt.Errorf("run %s was pushed from elsewhere: its workspace is not on this host, so its changes are asked for where it ran; here, approve or reject it", runID)
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
		q, err := Quote(files, c)
		if err != nil {
			return "", "", fmt.Errorf("comment %d: %w", i+1, err)
		}
		cr.Comments[i].Quote = q
	}
	session := rc.SessionID
	if session == "" {
		if session, err = d.sessionFromRun(dir, rc); err != nil {
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
func (d Data) LinkRequest(runID, nextRun string) error {
	dir, err := d.RunDir(runID)
	if err != nil {
		return err
	}
	return updateComments(context.Background(), dir, func(c *bundle.Comments) error {
		if len(c.Requests) > 0 {
			c.Requests[len(c.Requests)-1].NextRun = nextRun
		}
		return nil
	})
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
	return updateComments(context.Background(), dir, func(c *bundle.Comments) error {
		c.Requests = append(c.Requests, cr)
		return nil
	})
}

// updateComments changes a run's comments.json under its lock (two
// reviewers answering at once both get their reply kept), atomically.
func updateComments(ctx context.Context, dir string, change func(*bundle.Comments) error) error {
	lock, err := flock.Wait(ctx, filepath.Join(dir, bundle.CommentsFile+".lock"), true)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	c, err := readComments(dir)
	if err != nil {
		return err
	}
	if err := change(&c); err != nil {
		return err
	}
	return bundle.WriteJSON(filepath.Join(dir, bundle.CommentsFile), c)
}

// Reply adds a reviewer's reply to comment number comment (from 0) of
// request number request of the run runID, at the end of its thread.
func (d Data) Reply(ctx context.Context, runID string, request, comment int, r bundle.Reply) error {
	r.Text = strings.TrimSpace(r.Text)
	if r.Text == "" || len(r.Text) > MaxComment {
		return fmt.Errorf("reply: give its text (at most %d characters)", MaxComment)
	}
	return d.updateComment(ctx, runID, request, comment, func(cm *bundle.Comment) error {
		if len(cm.Replies) >= MaxReplies {
			return fmt.Errorf("run %s: the thread of comment %d has %d replies, the most it keeps", runID, comment+1, MaxReplies)
		}
		cm.Replies = append(cm.Replies, r)
		return nil
	})
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
			fmt.Fprintf(&b, "\n- %s: %s\n", Where(c), c.Text)
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

// Addressed reports whether files, the diff of the run asked to make the
// changes, changes the code a comment on lines from to to of path is
// about: one of them or one within two lines of them, or the whole file
// (deleted, binary); a comment on line 0 is about the whole file, so any
// change to it counts. The comment's lines are the new side of the
// commented run's diff, which is the old side of the next run's (it starts
// where the commented run ended).
func Addressed(files []patch.File, path string, from, to int) bool {
	line := from
	near := func(n int) bool { return n >= from-nearLines && n <= to+nearLines }
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
	Index     int    // its place among that run's requests, from 0
	Addressed []bool // by comment
	NextState string // the next run's status, "" when unknown
}

// State is the state of comment i's thread.
func (st RequestState) State(i int) string {
	switch {
	case st.Comments[i].Resolved != nil:
		return ThreadResolved
	case i < len(st.Addressed) && st.Addressed[i]:
		return ThreadAddressed
	}
	return ThreadOpen
}

// ChangeRequests are the change requests made of the run in dir.
func (d Data) ChangeRequests(dir string) ([]RequestState, error) {
	c, err := readComments(dir)
	if err != nil {
		return nil, err
	}
	var out []RequestState
	for i, cr := range c.Requests {
		out = append(out, d.requestState(filepath.Base(dir), i, cr))
	}
	return out, nil
}

// SessionRequests are the change requests made of the runs runIDs (a
// session's, in order); a run whose comments.json cannot be read is left
// out (its own page says why).
func (d Data) SessionRequests(runIDs []string) []RequestState {
	var out []RequestState
	for _, id := range runIDs {
		dir, err := d.RunDir(id)
		if err != nil {
			continue
		}
		if rs, err := d.ChangeRequests(dir); err == nil {
			out = append(out, rs...)
		}
	}
	return out
}

// Addressing is the change request the run rc was made for, if any.
func (d Data) Addressing(rc bundle.Receipt) (*RequestState, error) {
	if rc.Addresses == "" {
		return nil, nil
	}
	dir, err := d.RunDir(rc.Addresses)
	if err != nil {
		return nil, err
	}
	c, err := readComments(dir)
	if err != nil {
		return nil, err
	}
	for i, cr := range c.Requests {
		if cr.NextRun == rc.RunID {
			st := d.requestState(rc.Addresses, i, cr)
			return &st, nil
		}
	}
	return nil, nil
}

func (d Data) requestState(runID string, index int, cr bundle.ChangeRequest) RequestState {
	st := RequestState{ChangeRequest: cr, RunID: runID, Index: index, Addressed: make([]bool, len(cr.Comments))}
	if cr.NextRun == "" {
		return st
	}
	b, dir, err := d.Read(cr.NextRun)
	if err != nil {
		return st
	}
	st.NextState = string(b.Receipt.Status)
	diff, _ := bundle.ReadFile(dir, bundle.DiffFile, 64<<20)
	files, _ := patch.Parse(string(diff))
	var commented []patch.File // read when a comment is on the old side
	for i, cm := range cr.Comments {
		span := Span(cm)
		if (span.Start.Old || span.End.Old) && commented == nil {
			commented = d.diffOf(runID)
		}
		from, to := newAt(commented, cm.Path, span.Start), newAt(commented, cm.Path, span.End)
		st.Addressed[i] = Addressed(files, cm.Path, min(from, to), max(from, to))
	}
	return st
}

// diffOf is the diff of the run runID, parsed (none when it cannot be
// read).
func (d Data) diffOf(runID string) []patch.File {
	dir, err := d.RunDir(runID)
	if err != nil {
		return []patch.File{}
	}
	diff, _ := bundle.ReadFile(dir, bundle.DiffFile, 64<<20)
	files, _ := patch.Parse(string(diff))
	return files
}

// newAt is where line r of path in files (a diff) stands in the new file.
func newAt(files []patch.File, path string, r patch.LineRef) int {
	for _, f := range files {
		if f.Path() == path {
			return f.NewAt(r)
		}
	}
	return r.N
}
