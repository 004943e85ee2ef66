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
}

// draftField is a field a draft keeps: part.F.H, edit.F.H, comment.F.H or
// line.F.H (H a hunk's number, or "file" for a part decided whole),
// viewed.F (file F marked viewed), or the summary.
var draftField = regexp.MustCompile(`^(?:(?:part|edit|comment|line)\.[0-9]{1,6}\.(?:[0-9]{1,6}|file)|viewed\.[0-9]{1,6}|summary)$`)

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

// WithoutRequest is the draft after its request for changes was sent: the
// comments and the summary went to the agent; the decisions and edits stay
// (the run still waits for them).
func (d Draft) WithoutRequest() Draft {
	out := Draft{Fields: map[string]string{}}
	for k, v := range d.Fields {
		if strings.HasPrefix(k, "part.") || strings.HasPrefix(k, "edit.") || strings.HasPrefix(k, "viewed.") {
			out.Fields[k] = v
		}
	}
	return out
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
	if len(d.Fields) == 0 {
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
// an empty draft.
func (s *Service) Draft(id, actor string) Draft {
	path, err := s.draftPath(id, actor)
	if err != nil {
		return Draft{}
	}
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
