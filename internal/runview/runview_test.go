package runview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

// writeRun records a finished run's bundle in runs/<id> with the given
// extra files, and indexes it.
func writeRun(t *testing.T, s *Service, id string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(s.DataDir, "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := bundle.AppendEvent(dir, 1, now, bundle.StageStartedEvent{Stage: bundle.StageRunning}); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
		Task: "t", Source: bundle.Source{Kind: bundle.SourceLocal, Path: "/src"}, Model: bundle.Model{Name: "m"}, StartedAt: now, EndedAt: &now}
	if err := bundle.WriteReceipt(dir, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := index.New(s.Store).Index(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newService(t *testing.T) *Service {
	t.Helper()
	return &Service{Store: storetest.New(t), DataDir: t.TempDir(), Limits: bundle.DefaultLimits()}
}

const diff = "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n"

// A run page reads what it can of a bundle and says what it cannot.
func TestARunIsReadAndWhatCannotBeReadIsSaid(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	writeRun(t, s, "20260101-000000-whole", map[string]string{bundle.TranscriptFile: "## user\n\nfix it\n", bundle.DiffFile: diff})
	v, err := s.Run(ctx, "20260101-000000-whole")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Events) != 1 || len(v.Transcript) == 0 || len(v.Files) != 1 || v.DiffErr != "" || v.TranscriptErr != "" || v.Live || v.CanStop ||
		!strings.Contains(v.ReceiptJSON, `"run_id": "20260101-000000-whole"`) {
		t.Fatalf("view %+v", v)
	}
	files, detail, err := s.Diff(ctx, "20260101-000000-whole")
	if err != nil || len(files) != 1 || detail.RunID != "20260101-000000-whole" {
		t.Fatalf("diff: %v %v", files, err)
	}

	// A diff that is a link out of the bundle is not followed.
	dir := writeRun(t, s, "20260101-000000-links", map[string]string{bundle.TranscriptFile: "## user\n\nhi\n"})
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte(diff), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, bundle.DiffFile)); err != nil {
		t.Fatal(err)
	}
	v, err = s.Run(ctx, "20260101-000000-links")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Files) != 0 || !strings.Contains(v.DiffErr, "diff.patch cannot be shown") || len(v.Transcript) == 0 {
		t.Fatalf("a linked diff: files %v, %q", v.Files, v.DiffErr)
	}
	var unreadable *Unreadable
	if _, _, err := s.Diff(ctx, "20260101-000000-links"); !errors.As(err, &unreadable) {
		t.Fatalf("Diff of a linked diff: %v", err)
	}
	writeRun(t, s, "20260101-000000-nodiff", nil)
	if _, _, err := s.Diff(ctx, "20260101-000000-nodiff"); !errors.Is(err, ErrNoDiff) {
		t.Fatalf("no diff: %v", err)
	}
	if _, err := s.Run(ctx, "20260101-000000-nosuch"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a run not indexed: %v", err)
	}
}

func TestEventsAreReadByCompleteLinesAndARunEnds(t *testing.T) {
	s := newService(t)
	dir := writeRun(t, s, "20260101-000000-events", nil)
	events, offset, err := EventsFrom(dir, 0)
	if err != nil || len(events) != 1 || offset == 0 {
		t.Fatalf("%d events to %d: %v", len(events), offset, err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, bundle.EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2,"type":"stage.started","data":{}}` + "\n" + `{"seq":3,"ty`)
	f.Close()
	events, next, err := EventsFrom(dir, offset)
	if err != nil || len(events) != 1 || events[0].Seq != 2 {
		t.Fatalf("after %d: %+v %v", offset, events, err)
	}
	if again, _, _ := EventsFrom(dir, next); len(again) != 0 {
		t.Fatalf("a line cut short was read: %+v", again)
	}
	if !s.Ended(dir, "20260101-000000-events") {
		t.Error("a passed run has not ended")
	}
	os.WriteFile(filepath.Join(dir, bundle.ReceiptFile), []byte(`{"status": "running"`), 0o644)
	if !s.Ended(dir, "20260101-000000-events") {
		t.Error("a receipt nobody can read: more is expected")
	}
	os.WriteFile(filepath.Join(dir, bundle.ReceiptFile), []byte(`{"status": "running"}`), 0o644)
	if s.Ended(dir, "20260101-000000-events") {
		t.Error("a running run has ended")
	}
}

// A verdict that failed with every check passing says why: the run did
// not finish its work (its failure's code and message). A failed check, a
// broken one or a budget is its own reason; a passed verdict has none.
func TestAVerdictFailedWithoutAFailedCheckSaysWhy(t *testing.T) {
	mismatch := &bundle.Failure{Code: "script_mismatch", Message: "step 2: expected denied"}
	for _, tc := range []struct {
		name    string
		verdict *store.VerdictRow
		failure *bundle.Failure
		want    string
	}{
		{"the run failed, every check passed", &store.VerdictRow{ChecksPassed: 4}, mismatch, "the run did not finish its work (script_mismatch): step 2: expected denied"},
		{"a check failed", &store.VerdictRow{ChecksPassed: 3, ChecksFailed: 1}, mismatch, ""},
		{"a check broken", &store.VerdictRow{ChecksBroken: 1}, mismatch, ""},
		{"a budget", &store.VerdictRow{Aborted: "wall_clock_s=60"}, mismatch, ""},
		{"passed", &store.VerdictRow{Passed: true, ChecksPassed: 4}, nil, ""},
		{"no verdict", nil, mismatch, ""},
	} {
		v := &View{Run: &store.RunDetail{Verdict: tc.verdict, Receipt: bundle.Receipt{Failure: tc.failure}}}
		if got := v.VerdictReason(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A transcript too large to read whole opens with its newest messages and
// says how much it leaves out, instead of showing none.
func TestATranscriptPastTheBoundShowsItsNewestMessages(t *testing.T) {
	s := newService(t)
	s.Limits.MaxTextBytes = 4 << 10
	var text strings.Builder
	text.WriteString("# Run\n\n")
	for i := range 200 {
		fmt.Fprintf(&text, "## user\n\nmessage %03d %s\n\n", i, strings.Repeat("x", 80))
	}
	writeRun(t, s, "20260101-000000-large", map[string]string{bundle.TranscriptFile: text.String()})
	v, err := s.Run(context.Background(), "20260101-000000-large")
	if err != nil {
		t.Fatal(err)
	}
	if v.TranscriptErr != "" || len(v.Transcript) == 0 {
		t.Fatalf("the transcript: %q, %d messages", v.TranscriptErr, len(v.Transcript))
	}
	first, last := v.Transcript[0].Body, v.Transcript[len(v.Transcript)-1].Body
	if !strings.HasPrefix(last, "message 199 ") || !strings.HasPrefix(first, "message ") || len(first) != len(last) {
		t.Fatalf("the page's messages run from %.20q to %.20q: want whole messages up to the newest", first, last)
	}
	if want := int64(text.Len()) - s.Limits.MaxTextBytes; v.TranscriptCut != want {
		t.Fatalf("the page leaves out %d bytes, want %d", v.TranscriptCut, want)
	}
	// One within the bound is whole, and says nothing is left out.
	writeRun(t, s, "20260101-000000-small", map[string]string{bundle.TranscriptFile: "## user\n\nfix it\n"})
	if v, err := s.Run(context.Background(), "20260101-000000-small"); err != nil || v.TranscriptCut != 0 || len(v.Transcript) != 1 {
		t.Fatalf("a small transcript: %v, cut %d, %d messages", err, v.TranscriptCut, len(v.Transcript))
	}
}
