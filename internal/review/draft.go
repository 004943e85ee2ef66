package review

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// A Draft is a reviewer's review of a run not submitted yet, kept on the
// server until it is (as a pull request's pending review): each part's
// accept or reject, each hunk's edit, each line comment and the summary of
// a request for changes — the review form's fields by name.
type Draft struct {
	Fields map[string]string `json:"fields"`
	Saved  time.Time         `json:"saved"`
	// Sent is the last request for changes sent from this draft: its
	// comments and summary, kept until the run that got them has answered,
	// so that a run that fails without an answer gives them back.
	Sent *Sent `json:"sent,omitempty"`
	// Restored names the run a request went to that failed, when its
	// comments and summary came back into Fields on this reading.
	Restored string `json:"-"`
}

// Sent is a request for changes as it left a draft: Run is the run that
// was to make them.
type Sent struct {
	Run    string            `json:"run"`
	Fields map[string]string `json:"fields"`
}

// draftField is a field of the review form a draft keeps (see
// commentField): part.F.H or edit.F.H (H a hunk's number, or "file" for a
// part decided whole), comment.F.H.N or line.F.H.N, viewed.F, or the
// summary.
var draftField = regexp.MustCompile(`^(?:(?:part|edit)\.[0-9]{1,6}\.(?:[0-9]{1,6}|file)|(?:comment|line)\.[0-9]{1,6}\.[0-9]{1,6}(?:\.[0-9]{1,4})?|viewed\.[0-9]{1,6}|summary)$`)

// Limits of a draft: the form's own (a diff's parts, an edit's lines).
const (
	maxDraftFields = 20000
	maxDraftBytes  = 16 << 20
)

// DraftFrom keeps the fields of a review form a draft holds; an empty
// comment, line or summary is left out.
func DraftFrom(form url.Values) (Draft, error) {
	d := Draft{Fields: map[string]string{}}
	size := 0
	for key, vals := range form {
		if !draftField.MatchString(key) || len(vals) != 1 {
			continue
		}
		v := vals[0]
		if strings.TrimSpace(v) == "" && !strings.HasPrefix(key, "edit.") {
			continue
		}
		if size += len(key) + len(v); size > maxDraftBytes || len(d.Fields) >= maxDraftFields {
			return Draft{}, &Invalid{"draft", fmt.Sprintf("at most %d fields and %d MiB", maxDraftFields, maxDraftBytes>>20)}
		}
		d.Fields[key] = v
	}
	return d, nil
}

// Sending is the draft after its request for changes was sent to run
// next: the comments and the summary went to the agent (and are kept aside
// until it answers); the decisions and edits stay (the run still waits for
// them).
func (d Draft) Sending(next string) Draft {
	out := Draft{Fields: map[string]string{}, Sent: &Sent{Run: next, Fields: map[string]string{}}}
	for k, v := range d.Fields {
		if strings.HasPrefix(k, "part.") || strings.HasPrefix(k, "edit.") || strings.HasPrefix(k, "viewed.") {
			out.Fields[k] = v
		} else {
			out.Sent.Fields[k] = v
		}
	}
	return out
}

// giveBack puts a sent request's comments and summary back into the
// draft, where the reviewer has not written anew.
func (d *Draft) giveBack() {
	if d.Fields == nil {
		d.Fields = map[string]string{}
	}
	for k, v := range d.Sent.Fields {
		if _, typed := d.Fields[k]; !typed && draftField.MatchString(k) {
			d.Fields[k] = v
		}
	}
	d.Restored, d.Sent = d.Sent.Run, nil
}

// draftPath is where actor's draft of run id is kept: under the data
// folder's drafts/, by run, in a file named by a hash of the actor (a name
// is not a safe file name).
func (s *Service) draftPath(id, actor string) (string, error) {
	if !bundle.ValidID(id) || actor == "" || s.Runner == nil || s.DataDir == "" { // a server that only reads reviews nothing
		return "", fmt.Errorf("%w: %q", ErrNoRun, id)
	}
	sum := sha256.Sum256([]byte(actor))
	return filepath.Join(s.DataDir, "drafts", id, hex.EncodeToString(sum[:16])+".json"), nil
}

// SaveDraft keeps d as actor's draft of run id (written atomically); an
// empty draft removes it.
func (s *Service) SaveDraft(id, actor string, d Draft) error {
	path, err := s.draftPath(id, actor)
	if err != nil {
		return err
	}
	if d.Sent == nil { // a save from the form keeps what was sent aside
		d.Sent = s.readDraft(path).Sent
	}
	return s.writeDraft(id, actor, path, d)
}

// writeDraft writes d as actor's draft of run id at path; an empty draft
// removes it.
func (s *Service) writeDraft(id, actor, path string, d Draft) error {
	if len(d.Fields) == 0 && d.Sent == nil {
		return s.DropDraft(id, actor)
	}
	if _, err := s.Runner.Records().RunDir(id); err != nil { // no drafts of runs that are not here
		return fmt.Errorf("%w: %v", ErrNoRun, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save the draft review of run %s: %w", id, err)
	}
	d.Saved = time.Now().UTC()
	if err := bundle.WriteJSON(path, d); err != nil {
		return fmt.Errorf("save the draft review of run %s: %w", id, err)
	}
	return nil
}

// Draft is actor's draft of run id; none (or one that cannot be read) is
// an empty draft. When the run its last request for changes went to ended
// in error, that request's comments and summary are given back (and kept
// so): the agent never answered them.
func (s *Service) Draft(id, actor string) Draft {
	path, err := s.draftPath(id, actor)
	if err != nil {
		return Draft{}
	}
	d := s.readDraft(path)
	if d.Sent == nil {
		return d
	}
	rc, err := s.Runner.Records().Receipt(d.Sent.Run)
	if err != nil || rc.EndedAt == nil {
		return d // not ended yet (or not here): the request is still out
	}
	if rc.Status == bundle.StatusError {
		d.giveBack()
	} else {
		d.Sent = nil // answered: the comments are the next run's now
	}
	if err := s.writeDraft(id, actor, path, d); err != nil && s.Log != nil {
		s.Log.Warn("keep the draft review", "run", id, "err", err)
	}
	return d
}

// readDraft reads the draft file at path; none (or one that cannot be
// read) is an empty draft.
func (s *Service) readDraft(path string) Draft {
	data, err := bundle.ReadFile(filepath.Dir(path), filepath.Base(path), maxDraftBytes*2)
	var d Draft
	if err != nil || json.Unmarshal(data, &d) != nil {
		return Draft{}
	}
	for k := range d.Fields { // the file is the server's own, but read as any other
		if !draftField.MatchString(k) {
			delete(d.Fields, k)
		}
	}
	if d.Sent != nil && !bundle.ValidID(d.Sent.Run) {
		d.Sent = nil
	}
	return d
}

// DropDraft removes actor's draft of run id: the review was submitted.
func (s *Service) DropDraft(id, actor string) error {
	path, err := s.draftPath(id, actor)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop the draft review of run %s: %w", id, err)
	}
	os.Remove(filepath.Dir(path)) // the run's last draft: its folder goes too
	return nil
}
