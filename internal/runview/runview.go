// Package runview reads what a run's page shows: the indexed run, and from
// its bundle (a folder, or an entry of a suite's pack, unpacked once) its
// events, transcript, diff, agent log and the changes asked of it — each
// read defensively, what cannot be read said beside the rest; and, for the
// page's live stream, the events after an offset and whether the run has
// ended.
package runview

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/live"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Service reads runs; Queue is nil where no run is launched, Board where
// no request waits for a person, Live where no run's news is published.
type Service struct {
	Store   *store.Store
	Queue   *jobs.Queue
	Board   *approval.Board
	Live    *live.Broker
	DataDir string
	Limits  bundle.Limits
	// PushedTrees are the host's mappings of pushed runs' sources to its
	// folders (records.Data.PushedTrees).
	PushedTrees map[string]string
}

func (s *Service) records() records.Data {
	return records.Data{Dir: s.DataDir, PushedTrees: s.PushedTrees}
}

// View is what a run's page shows of it.
type View struct {
	Run           *store.RunDetail
	Dir           string // the bundle's folder ("" when it cannot be read)
	ReceiptJSON   string
	BundleFiles   []string // the bundle's files that exist, for links
	Events        []bundle.Event
	EventProblems bundle.Problems
	Transcript    []Message
	TranscriptErr string
	// TranscriptCut is how many bytes of a transcript too large to read
	// whole come before the part the page shows (its newest messages).
	TranscriptCut int64
	Files         []patch.File // the diff
	DiffErr       string
	AgentLog      string                 // the end of an external agent's output (agent.log)
	Requests      []records.RequestState // the changes reviewers asked of this run
	Addressing    *records.RequestState  // the request this run was made for
	Live          bool                   // queued or running: its events stream
	CanStop       bool                   // launched here, and not ended
	// Pushed says the run was pushed to this host from elsewhere; ApplyTo
	// is the folder of this host an approval writes ("" for none: the
	// approved change is offered); Offered says an approved change waits
	// to be applied elsewhere (a patch, an mbox, apply --to or --from).
	Pushed  bool
	ApplyTo string
	Offered bool
	// Pending are the approval requests the run waits on, read from the
	// board before the run (Page).
	Pending []approval.Request
	// Find is what the transcript is searched for, Found how many of its
	// sections match it (Page).
	Find  string
	Found int
}

// NotStarted is a run launched here that has no bundle yet: it waits in
// the launch queue, or is starting.
type NotStarted struct{ Job jobs.Job }

func (e *NotStarted) Error() string { return "run " + e.Job.RunID + " has not started" }

// Page reads what run id's page shows: the approval requests it waits on
// (read first: a run shows itself awaiting approval in the index before
// its request reaches the board, so a box the page shows goes with a
// status that says so), the run, and how many sections of its transcript
// match find. A run launched here that has no bundle yet is a
// *NotStarted; one that is not indexed, store.ErrNotFound.
func (s *Service) Page(ctx context.Context, id, find string) (*View, error) {
	var pending []approval.Request
	if s.Board != nil {
		pending = s.Board.Pending(id)
	}
	v, err := s.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) && s.Queue != nil {
		if j, ok := s.Queue.Get(id); ok {
			return nil, &NotStarted{j}
		}
	}
	if err != nil {
		return nil, err
	}
	v.Pending = pending
	if v.Find = strings.TrimSpace(find); v.Find != "" {
		for _, m := range v.Transcript {
			if SectionMatches(m.TranscriptSection, v.Find) {
				v.Found++
			}
		}
	}
	return v, nil
}

// SectionMatches reports whether a transcript section's title or text
// holds find, in any case.
func SectionMatches(s bundle.TranscriptSection, find string) bool {
	f := strings.ToLower(find)
	return strings.Contains(strings.ToLower(s.Title), f) || strings.Contains(strings.ToLower(s.Body), f)
}

// ErrNoDiff is returned for a run without a diff.
var ErrNoDiff = errors.New("the run has no diff")

// Unreadable is a bundle file that cannot be shown, and why.
type Unreadable struct{ What, Why string }

func (e *Unreadable) Error() string { return e.What + " cannot be shown: " + e.Why }

// Run reads run id; store.ErrNotFound when it is not indexed.
func (s *Service) Run(ctx context.Context, id string) (*View, error) {
	detail, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &View{Run: detail}
	v.Live = detail.Status == bundle.StatusRunning || detail.Status == bundle.StatusQueued || detail.Status == bundle.StatusAwaitingApproval
	if s.launchedAndWorking(id) {
		v.Live, v.CanStop = true, true
	}
	if data, err := json.MarshalIndent(detail.Receipt, "", "  "); err == nil {
		v.ReceiptJSON = string(data)
	}
	dir, err := s.dir(detail)
	if err != nil { // a run recorded in a suite's pack that cannot be unpacked
		v.EventProblems = bundle.Problems{{File: detail.BundlePath, Message: "the run's files cannot be read: " + err.Error()}}
		v.TranscriptErr = "The transcript cannot be shown: " + err.Error()
		return v, nil
	}
	v.Dir = dir
	s.readFiles(v, dir)
	rc := &detail.Receipt
	v.ApplyTo, v.Pushed = s.records().ApplyTree(id, rc)
	v.Offered = rc.Review != nil && rc.Review.Approved && !rc.Review.Applied && rc.Review.HasDiff
	return v, nil
}

// runDir is the folder of an indexed run's bundle (dir): store.ErrNotFound,
// or an *Unreadable when it cannot be read.
func (s *Service) runDir(ctx context.Context, id string) (string, *store.RunDetail, error) {
	detail, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return "", nil, err
	}
	dir, err := s.dir(detail)
	if err != nil {
		return "", nil, &Unreadable{"The run's files", err.Error()}
	}
	return dir, detail, nil
}

// dir is the folder of a run's bundle: its own, or its pack entry unpacked.
func (s *Service) dir(detail *store.RunDetail) (string, error) {
	return bundle.Readable(detail.BundlePath, bundle.UnpackCache(s.DataDir))
}

// readFiles reads the events, the transcript, the diff and what else the
// page shows from the bundle folder. What cannot be read is said, and the
// rest is still read.
func (s *Service) readFiles(v *View, dir string) {
	v.BundleFiles = bundle.Present(dir)
	data := s.records()
	var err error
	if v.Requests, err = data.ChangeRequests(dir); err != nil {
		v.EventProblems = append(v.EventProblems, bundle.Problem{File: bundle.CommentsFile, Message: err.Error()})
	}
	v.Addressing, _ = data.Addressing(v.Run.Receipt)
	events, probs, err := bundle.ReadEvents(dir, s.Limits)
	if err != nil {
		probs = append(probs, bundle.Problem{File: bundle.EventsFile, Message: err.Error()})
	}
	v.Events, v.EventProblems = events, append(v.EventProblems, probs...)
	if data, err := bundle.ReadFile(dir, bundle.AgentLogFile, s.Limits.MaxTextBytes); err == nil {
		const tail = 16 << 10 // the end is what says how the agent stopped
		v.AgentLog = clip.Tail(strings.ToValidUTF8(string(data), "\uFFFD"), tail)
	}
	// A transcript past the bound shows its newest messages: the text
	// before the first whole section of its tail is dropped as it parses.
	switch data, cut, err := bundle.ReadTail(dir, bundle.TranscriptFile, s.Limits.MaxTextBytes); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		v.TranscriptErr = "transcript.md cannot be shown: " + err.Error()
	default:
		v.Transcript, v.TranscriptCut = Layout(bundle.ParseTranscript(string(data)), v.Events), cut
	}
	files, err := s.readDiff(dir)
	var unreadable *Unreadable
	switch {
	case errors.Is(err, ErrNoDiff):
	case errors.As(err, &unreadable):
		v.DiffErr = unreadable.Error()
	case err != nil:
		v.DiffErr = err.Error()
	}
	v.Files = files
	WritesAsDiffs(v.Transcript, files)
}

// readDiff reads and parses a bundle's diff.patch: ErrNoDiff when it has
// none, an *Unreadable (with what could be parsed) when it cannot be read
// whole.
func (s *Service) readDiff(dir string) ([]patch.File, error) {
	data, err := bundle.ReadFile(dir, bundle.DiffFile, s.Limits.MaxTextBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoDiff
	}
	if err != nil {
		return nil, &Unreadable{"diff.patch", err.Error()}
	}
	files, err := patch.Parse(string(data))
	if err != nil {
		return files, &Unreadable{"diff.patch", err.Error()}
	}
	return files, nil
}

// Diff reads an indexed run's diff: store.ErrNotFound, ErrNoDiff, or an
// *Unreadable when nothing of it can be parsed.
func (s *Service) Diff(ctx context.Context, id string) ([]patch.File, *store.RunDetail, error) {
	dir, detail, err := s.runDir(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	files, err := s.readDiff(dir)
	if err != nil && len(files) == 0 {
		return nil, nil, err
	}
	return files, detail, nil
}

// OldLines is the lines of file n of run id's diff as they were before the
// run: the file at the run's base commit, read from the repository that
// holds it (never from the agent's tree). The diff's own lines show only
// what changed; these are the lines around it.
func (s *Service) OldLines(ctx context.Context, id string, n int) (patch.File, []string, error) {
	files, detail, err := s.Diff(ctx, id)
	if err != nil {
		return patch.File{}, nil, err
	}
	if n < 0 || n >= len(files) {
		return patch.File{}, nil, fmt.Errorf("run %s: its diff has %d files, not a file %d: %w", id, len(files), n, ErrNoDiff)
	}
	f := files[n]
	if f.OldPath == "" || f.Binary {
		return f, nil, nil
	}
	// proctor's own repository of the run's base; a run from elsewhere
	// (pushed, or indexed from outside the data folder) has none here.
	rc := detail.Receipt
	repo := s.records().BaseRepo(rc.RunID, &rc)
	if repo == "" {
		return f, nil, &Unreadable{f.OldPath + " as it was before the run", "the run was made elsewhere: its repository is not opened on this host"}
	}
	ws := workspace.Open(repo, rc.Source.CommitSHA)
	data, err := ws.Show(ctx, rc.Source.CommitSHA, f.OldPath)
	if err != nil {
		return f, nil, &Unreadable{f.OldPath + " as it was before the run", err.Error()}
	}
	text := strings.ToValidUTF8(strings.TrimSuffix(string(data), "\n"), "\uFFFD")
	return f, strings.Split(text, "\n"), nil
}

// launchedAndWorking reports whether run id was launched here and is
// queued or running.
func (s *Service) launchedAndWorking(id string) bool {
	if s.Queue == nil {
		return false
	}
	j, ok := s.Queue.Get(id)
	return ok && (j.State == jobs.Queued || j.State == jobs.Running)
}

// Ended reports whether run id, whose bundle is the folder dir, has
// finished (or will never start): nothing more will be written to it.
func (s *Service) Ended(dir, id string) bool {
	if s.launchedAndWorking(id) {
		return false
	}
	data, err := bundle.ReadFile(dir, bundle.ReceiptFile, s.Limits.MaxJSONBytes)
	if err != nil {
		return s.Queue == nil // nothing launched here and no bundle: nothing will come
	}
	var r struct {
		Status bundle.Status `json:"status"`
	}
	if json.Unmarshal(data, &r) != nil {
		return true // a receipt nobody can read says nothing more is coming
	}
	return r.Status != bundle.StatusRunning && r.Status != bundle.StatusQueued
}

// EventsFrom reads the complete event lines of a bundle's events.jsonl
// after byte offset, and returns the offset after the last complete line
// (an incomplete last line is read next time).
func EventsFrom(dir string, offset int64) ([]bundle.Event, int64, error) {
	f, err := bundle.Open(dir, bundle.EventsFile)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, fmt.Errorf("read events of %s: %w", dir, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var out []bundle.Event
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		offset += int64(len(line))
		var ev bundle.Event
		if json.Unmarshal(line, &ev) == nil && ev.Type != "" {
			out = append(out, ev)
		}
	}
	return out, offset, nil
}

// An Update is what a run page's live stream sends next: one event (with
// the time of the run's first, which the timeline counts from), news that
// the approval requests waiting for a person changed, the end, or nothing
// (a keep-alive).
type Update struct {
	Event  *bundle.Event
	First  time.Time
	Reload bool // the page is out of date: its approval requests or its status changed
	Done   bool
}

// Follow sends run id's updates to send, from the event after seq after,
// until the run has ended (the last update is Done) or ctx ends. shown is
// the board's numbers of the requests the page shows (Pending), status the
// status it shows ("" for any): it is told to reload when either changes
// (a run goes from awaiting approval back to running once answered). It wakes
// when the run has news (Live) or its job here ends; a run this server is
// not running — one another process writes (proctor run on the same data
// folder) — is read again each second.
func (s *Service) Follow(ctx context.Context, id string, after int64, shown, status string, send func(Update) error) error {
	dir := filepath.Join(s.DataDir, "runs", id)
	wake, unsubscribe := s.Live.Subscribe(id)
	defer unsubscribe()
	var finished <-chan struct{}
	if s.Queue != nil {
		finished, _ = s.Queue.Finished(id)
	}
	var reread <-chan time.Time
	if wake == nil || finished == nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		reread = t.C
	}
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	var offset int64
	var first time.Time
	for {
		events, next, err := EventsFrom(dir, offset)
		if err == nil {
			offset = next
			for i := range events {
				if first.IsZero() {
					first = events[i].Time
				}
				if events[i].Seq <= after {
					continue
				}
				if err := send(Update{Event: &events[i], First: first}); err != nil {
					return err
				}
				after = events[i].Seq
			}
			// Requests get to the board after their event is written (once
			// no rule decided them).
			now := s.Pending(id)
			var changed bool
			if status != "" && len(events) > 0 { // a status changes with the events that say why (approval, stage)
				if d, err := s.Store.GetRun(ctx, id); err == nil && string(d.Status) != status {
					status, changed = string(d.Status), true
				}
			}
			if now != shown || changed {
				shown = now
				if err := send(Update{Reload: true}); err != nil {
					return err
				}
			}
		}
		if s.Ended(dir, id) {
			// One more read, so that nothing written before the end is missed.
			if events, _, err := EventsFrom(dir, offset); err == nil && slices.ContainsFunc(events, func(e bundle.Event) bool { return e.Seq > after }) {
				continue
			}
			return send(Update{Done: true})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-finished:
			finished = nil // closed: it ends the wait once
		case <-reread:
		case <-beat.C:
			if err := send(Update{}); err != nil {
				return err
			}
		}
	}
}

// Pending are the board's numbers of run id's approval requests waiting
// for a person, as a page says which it shows.
func (s *Service) Pending(id string) string {
	if s.Board == nil {
		return ""
	}
	var ids []string
	for _, p := range s.Board.Pending(id) {
		ids = append(ids, strconv.FormatInt(p.ID, 10))
	}
	return strings.Join(ids, ",")
}

// ReviewedChange reads run id's reviewed change from its bundle (a packed run's
// decision folder once it is reviewed), not from the index.
func (s *Service) ReviewedChange(ctx context.Context, id string) (*bundle.ReviewedChange, error) {
	detail, err := s.Store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	dir, err := s.dir(detail)
	if err != nil {
		return nil, &Unreadable{"The run's decision", err.Error()}
	}
	b, err := bundle.ReadRun(dir, s.Limits)
	if err != nil {
		return nil, &Unreadable{"The run's decision", err.Error()}
	}
	rc := b.Receipt
	d := &bundle.ReviewedChange{RunID: rc.RunID, Status: rc.Status, Review: rc.Review}
	diff, err := bundle.ReadFile(dir, bundle.DiffFile, s.Limits.MaxTextBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &Unreadable{"The run's diff", err.Error()}
	}
	d.Diff = string(diff)
	if rc.Review != nil && rc.Review.Approved {
		accepted, err := bundle.ReadFile(dir, bundle.OfferedFile(&rc), s.Limits.MaxTextBytes)
		if err != nil {
			return nil, &Unreadable{"The run's accepted change", err.Error()}
		}
		d.Accepted = string(accepted)
	}
	return d, nil
}

// FailedCalls are the tool calls of the run whose results say they failed
// (a command that exited other than 0 among them), in the transcript's
// order; refused calls are not among them.
func (v *View) FailedCalls() []*Result {
	var out []*Result
	for _, m := range v.Transcript {
		if r := m.Result; r != nil && r.Failed && !r.Refused {
			out = append(out, r)
		}
	}
	return out
}

// VerdictReason is why a verdict failed when no check did and no budget
// stopped the run: the run itself did not finish its work (its failure's
// code and message, such as a script mismatch). "" otherwise.
func (v *View) VerdictReason() string {
	vd, f := v.Run.Verdict, v.Run.Receipt.Failure
	if vd == nil || vd.Passed || vd.ChecksFailed > 0 || vd.ChecksBroken > 0 || vd.Aborted != "" || f == nil {
		return ""
	}
	return "the run did not finish its work (" + f.Code + "): " + f.Message
}
