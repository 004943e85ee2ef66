package review

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// A draft keeps the review form's decisions, edits, comments and summary,
// and nothing else a form (or an attacker) sends.
func TestADraftKeepsTheReviewFieldsOnly(t *testing.T) {
	form := url.Values{
		"part.0.1": {"accept"}, "part.2.file": {"reject"}, "edit.0.1": {"\nnew line\n"}, "edit.0.2": {""},
		"comment.0.3": {"why?"}, "line.0.3": {"12"}, "comment.1.0": {"  "}, "summary": {"look again"},
		"csrf": {"token"}, "reviewer": {"dana"}, "decision": {"approve"}, "part.../../x": {"accept"},
		"part.0.1.2": {"accept"}, "part.-1.0": {"accept"}, "part.0.x": {"accept"}, "edit.0.9": {"a", "b"},
		"viewed.3": {"1"}, "viewed.x": {"1"},
	}
	d, err := DraftFrom(form)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"part.0.1": "accept", "part.2.file": "reject", "edit.0.1": "\nnew line\n", "edit.0.2": "",
		"comment.0.3": "why?", "line.0.3": "12", "summary": "look again", "viewed.3": "1"}
	if len(d.Fields) != len(want) {
		t.Errorf("fields %v, want %v", d.Fields, want)
	}
	for k, v := range want {
		if d.Fields[k] != v {
			t.Errorf("%s = %q, want %q", k, d.Fields[k], v)
		}
	}
	sent := d.Sending("20261206-070000-next01")
	if sent.Sent == nil || sent.Sent.Run != "20261206-070000-next01" || sent.Sent.Fields["comment.0.3"] != "why?" || sent.Sent.Fields["summary"] != "look again" || len(sent.Sent.Fields) != 3 {
		t.Errorf("the request as sent: %+v", sent.Sent)
	}
	for k := range sent.Fields {
		if !strings.HasPrefix(k, "part.") && !strings.HasPrefix(k, "edit.") && !strings.HasPrefix(k, "viewed.") {
			t.Errorf("after the request was sent the draft still has %s", k)
		}
	}
	if len(sent.Fields) != 5 {
		t.Errorf("after the request was sent: %v, want the two decisions, two edits and the file viewed", sent.Fields)
	}
	big := url.Values{"edit.0.0": {strings.Repeat("x", maxDraftBytes+1)}}
	var invalid *Invalid
	if _, err := DraftFrom(big); !errors.As(err, &invalid) {
		t.Errorf("a draft past its size: %v, want *Invalid", err)
	}
}

// Drafts are kept by run and by reviewer, under the data folder whatever
// the reviewer's name, and go when the review is submitted.
func TestDraftsAreKeptByRunAndReviewer(t *testing.T) {
	s := service(t)
	id := "20261206-070000-abcdef"
	d0 := Draft{Fields: map[string]string{"part.0.0": "accept"}}
	if err := s.SaveDraft(id, "local:dana", d0); !errors.Is(err, ErrNoRun) {
		t.Fatalf("a draft of a run that is not here: %v, want ErrNoRun", err)
	}
	if err := os.MkdirAll(filepath.Join(s.DataDir, "runs", id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.DataDir, "runs", id, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := Draft{Fields: map[string]string{"part.0.0": "accept"}}
	for _, actor := range []string{"local:dana", "../../etc/passwd", "local:ed"} {
		if err := s.SaveDraft(id, actor, d); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Draft(id, "local:dana"); got.Fields["part.0.0"] != "accept" || got.Saved.IsZero() {
		t.Errorf("dana's draft: %+v", got)
	}
	if got := s.Draft(id, "local:nobody"); len(got.Fields) != 0 {
		t.Errorf("nobody's draft: %+v", got)
	}
	if got := s.Draft("20261206-070000-other1", "local:dana"); len(got.Fields) != 0 {
		t.Errorf("dana's draft of another run: %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(s.DataDir, "drafts", id))
	if len(entries) != 3 {
		t.Errorf("%d draft files, want 3 (one a reviewer, none outside the run's folder)", len(entries))
	}
	if err := s.SaveDraft("../x", "local:dana", d); !errors.Is(err, ErrNoRun) {
		t.Errorf("a hostile run id: %v, want ErrNoRun", err)
	}
	// A file in the drafts folder is read as hostile: unknown fields go.
	path, _ := s.draftPath(id, "local:ed")
	if err := os.WriteFile(path, []byte(`{"fields": {"part.0.0": "accept", "../evil": "x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.Draft(id, "local:ed"); len(got.Fields) != 1 {
		t.Errorf("ed's draft with a field no form has: %v", got.Fields)
	}
	// Submitting (or emptying) a draft removes it; the last one takes the run's folder.
	for _, actor := range []string{"local:dana", "../../etc/passwd"} {
		if err := s.DropDraft(id, actor); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveDraft(id, "local:ed", Draft{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, "drafts", id)); !os.IsNotExist(err) {
		t.Errorf("the run's drafts folder after its last draft went: %v", err)
	}
}

// A request for changes sent from a draft is kept aside until the run that
// got it ends: answered (passed, failed, awaiting review), the comments are
// that run's; ended in error, they come back into the draft, under what
// the reviewer wrote since; still running, nothing changes. A save from the
// form in between keeps what was sent.
func TestAFailedRequestForChangesGivesItsCommentsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status bundle.Status
		ended  bool
		back   bool // the comment and summary come back
		kept   bool // still kept aside
	}{
		{"ended in error", bundle.StatusError, true, true, false},
		{"answered, awaiting review", bundle.StatusAwaitingReview, true, false, false},
		{"answered, failed its checks", bundle.StatusFailed, true, false, false},
		{"still running", bundle.StatusRunning, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := service(t)
			id, next := "20261206-070000-first1", "20261206-070100-next01"
			writeReceipt(t, s.DataDir, id, bundle.Receipt{RunID: id, Status: bundle.StatusAwaitingReview})
			d := Draft{Fields: map[string]string{"part.0.0": "accept", "comment.0.1": "why?", "line.0.1": "3", "summary": "look again"}}
			if err := s.SaveDraft(id, "local:dana", d.Sending(next)); err != nil {
				t.Fatal(err)
			}
			// Typed since: a comment elsewhere, saved from the form.
			if err := s.SaveDraft(id, "local:dana", Draft{Fields: map[string]string{"part.0.0": "accept", "comment.0.2": "and this"}}); err != nil {
				t.Fatal(err)
			}
			rc := bundle.Receipt{RunID: next, Status: tc.status}
			if tc.ended {
				now := time.Now()
				rc.EndedAt = &now
			}
			writeReceipt(t, s.DataDir, next, rc)
			got := s.Draft(id, "local:dana")
			if back := got.Fields["comment.0.1"] == "why?" && got.Fields["line.0.1"] == "3" && got.Fields["summary"] == "look again"; back != tc.back {
				t.Errorf("given back %v, want %v: %v", back, tc.back, got.Fields)
			}
			if got.Fields["comment.0.2"] != "and this" || got.Fields["part.0.0"] != "accept" {
				t.Errorf("what was typed since: %v", got.Fields)
			}
			if (got.Restored == next) != tc.back {
				t.Errorf("restored %q", got.Restored)
			}
			// Once given back or answered, it is so for good.
			again := s.Draft(id, "local:dana")
			if (again.Sent != nil) != tc.kept || again.Restored != "" || (again.Fields["summary"] == "look again") != tc.back {
				t.Errorf("read again: %+v", again)
			}
		})
	}
}

// writeReceipt writes a run folder holding rc, a valid receipt with what
// rc leaves out.
func writeReceipt(t *testing.T, data, id string, rc bundle.Receipt) {
	t.Helper()
	rc.Schema, rc.Kind, rc.Stage, rc.StartedAt = bundle.ReceiptSchema, bundle.KindTask, bundle.StageCompleted, time.Now().Add(-time.Minute)
	rc.Source, rc.Model = bundle.Source{Kind: bundle.SourceLocal, Path: "/src"}, bundle.Model{Name: "m"}
	dir := filepath.Join(data, "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteJSON(filepath.Join(dir, "run.json"), rc); err != nil {
		t.Fatal(err)
	}
}
