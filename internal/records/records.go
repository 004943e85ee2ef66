// Package records reads and keeps the records of a data folder's runs
// besides running them (package run): a run's bundle folder and receipt
// (unpacked from a pack when it is in one), its sessions and their
// workspaces, the change requests made of a run and whether a later run
// addressed them, what a review of it needs from the data folder, its
// change as an mbox, its exchanges as a model script, and the conversation
// a later run goes on from.
package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Data is a data folder's runs and sessions as records: <Dir>/runs,
// <Dir>/sessions, <Dir>/workspaces, <Dir>/decisions.
type Data struct {
	Dir string
	// PushedTrees maps the source of a run pushed from elsewhere (its
	// repository URL, or its folder as the pusher's receipt names it) to
	// the folder of this host an approval of it writes: a setting of the
	// host's admin (serve --apply-pushed). A pushed run of any other
	// source writes no folder: its approved change is offered.
	PushedTrees map[string]string
}

// Limits of a request for changes.
const (
	MaxSummary  = 4000
	MaxComments = 200
	MaxComment  = 2000
	MaxReplies  = 200 // a comment's thread
)

// ErrNoComment is a reply to a comment that the run's requests do not have.
var ErrNoComment = errors.New("no such comment")

// Continuable says whether a run may go on as a session from its page
// (ContinueAsSession): a scenario run that has ended and is in no session
// yet — a failure to explore with a live model or a person's reply, on the
// workspace as it left it. Other runs go on through Request changes.
func (d Data) Continuable(rc bundle.Receipt) bool {
	if _, err := os.Stat(filepath.Join(d.SessionsDir(), "sess-"+rc.RunID+".json")); err == nil || rc.SessionID != "" {
		return false
	}
	return continuable(rc)
}

func continuable(rc bundle.Receipt) bool {
	if rc.Kind != bundle.KindScenario || rc.EndedAt == nil || rc.Source.CommitSHA == "" {
		return false
	}
	switch rc.Status {
	case bundle.StatusPassed, bundle.StatusFailed, bundle.StatusAwaitingInput, bundle.StatusInterrupted:
		return true
	}
	return false
}

// ContinueAsSession makes a scenario run the first run of a session over
// its workspace (or names the session it is in already), so that the
// conversation goes on from where the scenario left it. The session
// writes into no source folder: its runs' changes are offered, never
// applied to the scenario's fixture.
func (d Data) ContinueAsSession(runID string) (string, error) {
	b, dir, err := d.Read(runID)
	if err != nil {
		return "", err
	}
	rc := b.Receipt
	switch {
	case d.Pushed(runID):
		return "", fmt.Errorf("run %s was pushed from elsewhere: its workspace is not on this host, so it goes on where it ran", runID)
	case rc.SessionID != "":
		return rc.SessionID, nil
	case !continuable(rc):
		return "", fmt.Errorf("run %s is a %s run that is %s: a scenario run goes on as a session once it has ended; other runs go on through Request changes", runID, rc.Kind, strings.ReplaceAll(string(rc.Status), "_", " "))
	}
	if s, err := d.LoadSession("sess-" + rc.RunID); err == nil {
		return s.SessionID, nil // made already
	}
	rc.Source.Path = ""
	return d.sessionFromRun(dir, rc)
}

// sessionFromRun makes a run outside a session the first run of a new
// session over its workspace, applied to the run's source.
func (d Data) sessionFromRun(dir string, rc bundle.Receipt) (string, error) {
	ws := filepath.Join(dir, "workspace")
	if _, err := os.Stat(workspace.GitDir(ws)); err != nil {
		return "", fmt.Errorf("run %s cannot be continued: its workspace %s is gone", rc.RunID, ws)
	}
	now := time.Now().UTC()
	s := &bundle.Session{Schema: bundle.SessionSchema, SessionID: "sess-" + rc.RunID, Title: bundle.Line(rc.Task, 80), Workspace: ws,
		Source: rc.Source.Path, CreatedAt: now, UpdatedAt: now, Runs: []string{rc.RunID}, Bounds: rc.Bounds}
	if err := os.MkdirAll(d.SessionsDir(), 0o755); err != nil {
		return "", err
	}
	if err := bundle.WriteSession(d.SessionsDir(), s); err != nil {
		return "", err
	}
	return s.SessionID, nil
}

// nearLines is how far from a comment's line a later change may be and
// still address the comment.
const nearLines = 2

// Thread states: a person marked it resolved; the run asked to make the
// changes changed its code; neither.
const (
	ThreadResolved  = "resolved"
	ThreadAddressed = "addressed"
	ThreadOpen      = "open"
)

// Receipt is the receipt of the run runID of the data folder.
func (d Data) Receipt(runID string) (bundle.Receipt, error) {
	b, _, err := d.Read(runID)
	if err != nil {
		return bundle.Receipt{}, err
	}
	return b.Receipt, nil
}

func (d Data) Read(runID string) (*bundle.Run, string, error) {
	dir, err := d.RunDir(runID)
	if err != nil {
		return nil, "", err
	}
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		return nil, "", fmt.Errorf("run %s: %w", runID, err)
	}
	return b, dir, nil
}

// RunDir is the bundle folder of a run of the data folder: its own folder
// under runs/, or for a run recorded in a pack there, its decision folder
// once it has been reviewed, else an unpacked copy (bundle.Readable).
func (d Data) RunDir(runID string) (string, error) {
	dir, _, err := d.locate(runID)
	if err != nil {
		return "", err
	}
	return bundle.Readable(dir, bundle.UnpackCache(d.Dir))
}

// locate is where run runID of the data folder is recorded: its folder, or
// its pack reference (PACK#ID); pushed says it came from elsewhere (a pack
// proctor push stored: bundle.Pushed).
func (d Data) locate(runID string) (ref string, pushed bool, err error) {
	if !bundle.ValidID(runID) {
		return "", false, fmt.Errorf("run %q: not a valid run id", runID)
	}
	dir := filepath.Join(d.Dir, "runs", runID)
	if _, err := os.Stat(filepath.Join(dir, bundle.ReceiptFile)); err == nil {
		return dir, false, nil
	}
	// A run recorded in a suite's pack, or pushed from elsewhere.
	if ref, ok := bundle.FindPacked(filepath.Join(d.Dir, "runs"), runID); ok {
		pack, _, _ := bundle.SplitPackRef(ref)
		return ref, bundle.Pushed(pack), nil
	}
	return "", false, fmt.Errorf("run %s: no bundle at %s, nor in a pack beside it", runID, dir)
}

// IndexPath is what to index again after run runID's record changed: its
// folder, or its pack (which reads the decision folders beside it).
func (d Data) IndexPath(runID string) (string, error) {
	ref, _, err := d.locate(runID)
	if pack, _, ok := bundle.SplitPackRef(ref); ok {
		return pack, err
	}
	return ref, err
}

// ReviewFolders are the folders a review journal may be left in: runs/
// (run folders) and each pack's decision folder.
func (d Data) ReviewFolders() []string {
	out := []string{filepath.Join(d.Dir, "runs")}
	packs, _ := filepath.Glob(filepath.Join(d.Dir, "decisions", "*"))
	return append(out, packs...)
}

// Pushed reports whether run runID came from elsewhere (proctor push):
// its receipt, diff and transcript are data this host shows; its
// repository is never opened, the folder its receipt names never written,
// and it is never continued here.
func (d Data) Pushed(runID string) bool {
	_, pushed, err := d.locate(runID)
	return err == nil && pushed
}

// Reviewing is what a review of a run needs from the data folder.
type Reviewing struct {
	Dir     string // the folder the review works in (and the journal is kept in)
	Bundle  string // the run's bundle path, to index again after the review
	Receipt bundle.Receipt
	Options gate.Options // the tree, the base repository and the session's earlier runs; the caller adds who decides and how it is recorded
}

// Review readies a review of run runID. A run folder is reviewed in
// itself; a packed run in its decision folder, made from its pack on its
// first review (bundle.MakeDecisionDir) and kept outside every cache. The
// tree an approval writes is this host's choice: the run's own source for
// a run made here from a folder, none for a git source (its change is
// offered), and for a run pushed from elsewhere only the folder the host's
// admin mapped its source to (PushedTrees), else none. The base repository
// is proctor's own; a pushed run has none, and is judged from its
// recorded diff alone.
func (d Data) Review(runID string) (Reviewing, error) {
	ref, pushed, err := d.locate(runID)
	if err != nil {
		return Reviewing{}, err
	}
	cache := bundle.UnpackCache(d.Dir)
	rv := Reviewing{Dir: ref, Bundle: ref}
	if _, _, packed := bundle.SplitPackRef(ref); packed {
		pack, _, _ := bundle.SplitPackRef(ref)
		rv.Bundle = pack // the index reads the pack, and the decision folders beside it
		if rv.Dir, err = bundle.MakeDecisionDir(ref, cache); err != nil {
			return Reviewing{}, err
		}
	}
	b, err := bundle.ReadRun(rv.Dir, bundle.DefaultLimits())
	if err != nil {
		return Reviewing{}, err
	}
	rv.Receipt = b.Receipt
	rc := &rv.Receipt
	rv.Options.Tree = d.tree(rc, pushed)
	if pushed {
		return rv, nil
	}
	rv.Options.Workspace = d.BaseRepo(runID, rc)
	if rv.Options.Earlier, err = d.EarlierInSession(rc); err != nil {
		return Reviewing{}, err
	}
	return rv, nil
}

// ApplyTree is the folder of this host an approval of run runID (whose
// receipt is rc) writes, "" for none (its approved change is offered), and
// whether the run was pushed from elsewhere; see Review.
func (d Data) ApplyTree(runID string, rc *bundle.Receipt) (string, bool) {
	_, pushed, err := d.locate(runID)
	if err != nil {
		return "", false
	}
	return d.tree(rc, pushed), pushed
}

func (d Data) tree(rc *bundle.Receipt, pushed bool) string {
	switch {
	case pushed:
		return d.PushedTrees[pushedSource(rc)]
	case rc.Source.Kind == bundle.SourceLocal:
		return rc.Source.Path
	}
	return ""
}

// pushedSource is how a pushed run's source is named in PushedTrees: its
// repository URL, or its folder as its receipt names it.
func pushedSource(rc *bundle.Receipt) string {
	if rc.Source.IsGit() {
		return rc.Source.Repository
	}
	return rc.Source.Path
}

// BaseRepo is proctor's own repository of the base commit of run runID:
// its workspace's (for a packed run, its unpacked copy's), or its
// session's; "" for a run pushed from elsewhere, whose repository this
// host never opens (nor a session of this host its receipt may name).
func (d Data) BaseRepo(runID string, rc *bundle.Receipt) string {
	ref, pushed, err := d.locate(runID)
	if err != nil || pushed {
		return ""
	}
	dir := ref
	if _, _, packed := bundle.SplitPackRef(ref); packed {
		if dir, err = bundle.Unpacked(ref, bundle.UnpackCache(d.Dir)); err != nil {
			return ""
		}
	}
	own := filepath.Join(dir, "workspace")
	if _, err := os.Stat(own); err == nil {
		return own
	}
	if rc.SessionID == "" {
		return own
	}
	if s, err := d.LoadSession(rc.SessionID); err == nil {
		return s.Workspace // a session made of a run works in that run's workspace
	}
	return d.WorkspaceDir(rc.SessionID)
}

// Mbox is an approved run's change, when its approval wrote no folder of
// this host (a git run's, a run pushed from elsewhere), as an mbox for git
// am: one commit on top of the run's base, subject the task's first line.
// It is written from the recorded change alone (patch.Mbox).
func (d Data) Mbox(ctx context.Context, runID string) ([]byte, error) {
	b, dir, err := d.Read(runID)
	if err != nil {
		return nil, err
	}
	rc := b.Receipt
	switch {
	case rc.Review == nil || !rc.Review.Approved:
		return nil, fmt.Errorf("run %s is not approved: its change is offered once it is", runID)
	case rc.Review.Applied:
		return nil, fmt.Errorf("run %s was applied to its source folder here; its diff is diff.patch", runID)
	}
	patchText, err := bundle.ReadFile(dir, bundle.OfferedFile(&rc), bundle.DefaultLimits().MaxTextBytes)
	if err != nil {
		return nil, fmt.Errorf("run %s: read its diff: %w", runID, err)
	}
	subject, _, _ := strings.Cut(strings.TrimSpace(rc.Task), "\n")
	subject = clip.Head(subject, 72)
	msg := fmt.Sprintf("Made by proctor run %s (model %s), approved by %s.", runID, rc.Model.Name, rc.Review.ReviewedBy)
	return patch.Mbox(string(patchText), subject, msg, "proctor <proctor@localhost>", rc.Review.ReviewedAt), nil
}

// ExportScript turns a recorded run into a model script.
func (d Data) ExportScript(runID string) ([]byte, error) {
	dir, err := d.RunDir(runID)
	if err != nil {
		return nil, err
	}
	log, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("export run %s: %v", runID, probs)
	}
	return script.Export("replay of "+runID, log)
}

func (d Data) SessionsDir() string { return filepath.Join(d.Dir, "sessions") }

// WorkspaceDir is where a session keeps its workspace.
func (d Data) WorkspaceDir(sessionID string) string {
	return filepath.Join(d.Dir, "workspaces", sessionID)
}

// ErrPushedSession is the error of continuing a session pushed to this
// host from elsewhere.
var ErrPushedSession = errors.New("it was pushed to this host from elsewhere (proctor push): its runs are records here, and it goes on where it ran")

// LoadSession reads a session of the data folder: one made here, never
// one pushed from elsewhere (ErrPushedSession), whose workspace and source
// were named by the pusher.
func (d Data) LoadSession(id string) (*bundle.Session, error) {
	if !bundle.ValidID(id) {
		return nil, fmt.Errorf("session %q: not a valid session id", id)
	}
	path := filepath.Join(d.SessionsDir(), id+".json")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(filepath.Join(d.SessionsDir(), bundle.PushedSessions, id+".json")); err == nil {
			return nil, fmt.Errorf("session %s: %w", id, ErrPushedSession)
		}
	}
	s, err := bundle.ReadSession(path, bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
}

// sessionSource is the folder a session's runs apply to: the one its first
// run copied (older session files do not say; their first run's receipt
// does).
func (d Data) SessionSource(s *bundle.Session) string {
	if s.Source != "" || len(s.Runs) == 0 {
		return s.Source
	}
	b, err := bundle.ReadRun(filepath.Join(d.Dir, "runs", s.Runs[0]), bundle.DefaultLimits())
	if err != nil {
		return ""
	}
	return b.Receipt.Source.Path
}

// EarlierInSession lists the runs of rc's session before it, in order,
// with whether each is settled for the gate (see gate.Earlier). A run
// outside a session has none.
func (d Data) EarlierInSession(rc *bundle.Receipt) ([]gate.Earlier, error) {
	if rc.SessionID == "" {
		return nil, nil
	}
	s, err := d.LoadSession(rc.SessionID)
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
		b, err := bundle.ReadRun(filepath.Join(d.Dir, "runs", id), bundle.DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("session %s: run %s: %w", s.SessionID, id, err)
		}
		e := gate.Earlier{RunID: id, HasChanges: len(b.Receipt.Changed) > 0}
		if rv := b.Receipt.Review; rv != nil {
			e.Reviewed, e.Applied = true, rv.Applied
			e.InPart = rv.Applied && (len(rv.RejectedParts) > 0 || len(rv.Edits) > 0)
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
	log, _, err := bundle.ReadExchanges(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, nil, err
	}
	xs := log.Exchanges
	for i := len(xs) - 1; i >= 0; i-- {
		if len(xs[i].Response) == 0 || xs[i].Error != "" || !xs[i].ModelCall() {
			continue
		}
		raw, err := log.Request(i)
		if err != nil {
			return nil, nil, fmt.Errorf("read the history of %s: %w", runDir, err)
		}
		_, req, err := model.DecodeAnyRequest(xs[i].API, raw)
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
