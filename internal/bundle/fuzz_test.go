package bundle_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/; the samples are added
// too, so that the fuzzer starts from real bundles.

func FuzzReadRun(f *testing.F) {
	for _, id := range []string{"20261201-093012-k3f9qa", "20261201-101544-m2x7pb", "20261201-113020-z8c1rd"} {
		receipt, _ := os.ReadFile(filepath.Join(samples, "runs", id, "run.json"))
		verdict, _ := os.ReadFile(filepath.Join(samples, "runs", id, "verdict.json"))
		f.Add(receipt, verdict)
	}
	const id = "20261201-093012-k3f9qa"
	f.Fuzz(func(t *testing.T, receipt, verdict []byte) {
		dir := filepath.Join(t.TempDir(), id)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "run.json"), receipt, 0o644)
		if len(verdict) > 0 {
			os.WriteFile(filepath.Join(dir, "verdict.json"), verdict, 0o644)
		}
		run, err := bundle.ReadRun(dir, bundle.DefaultLimits())
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "run.json") {
				t.Fatalf("error does not name the file: %q", msg)
			}
			return
		}
		// What was accepted is valid, and writing it back reads the same.
		if err := run.Receipt.Validate("run.json", id); err != nil {
			t.Fatalf("accepted receipt does not validate: %v", err)
		}
		if err := bundle.WriteReceipt(dir, &run.Receipt); err != nil {
			t.Fatalf("write accepted receipt: %v", err)
		}
		again, err := bundle.ReadRun(dir, bundle.DefaultLimits())
		if err != nil {
			t.Fatalf("re-read written receipt: %v", err)
		}
		a, _ := json.Marshal(run.Receipt)
		b, _ := json.Marshal(again.Receipt)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the receipt:\n%s\n%s", a, b)
		}
	})
}

func FuzzReadSession(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(samples, "sessions", "sess-20261201-140200-h7.json"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "sessions", "sess-20261201-140200-h7.json")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, data, 0o644)
		s, err := bundle.ReadSession(path, bundle.DefaultLimits())
		if err != nil {
			return
		}
		if err := s.Validate(path, s.SessionID); err != nil {
			t.Fatalf("accepted session does not validate: %v", err)
		}
	})
}

func FuzzReadEvents(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(samples, "runs", "20261201-093012-k3f9qa", "events.jsonl"))
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "events.jsonl"), data, 0o644)
		lim := bundle.DefaultLimits()
		lim.MaxLineBytes = 4096
		events, _, err := bundle.ReadEvents(dir, lim)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(events); i++ {
			if events[i].Seq <= events[i-1].Seq {
				t.Fatalf("events out of order: %d after %d", events[i].Seq, events[i-1].Seq)
			}
		}
	})
}

func FuzzParseTranscript(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(samples, "runs", "20261201-093012-k3f9qa", "transcript.md"))
	f.Add(string(data))
	f.Fuzz(func(t *testing.T, text string) {
		total := 0
		for _, s := range bundle.ParseTranscript(text) {
			total += len(s.Title) + len(s.Body)
			if strings.Contains(s.Title, "\n") {
				t.Fatalf("title spans lines: %q", s.Title)
			}
		}
		if total > len(text) {
			t.Fatalf("sections hold %d bytes, more than the %d of the input", total, len(text))
		}
	})
}
