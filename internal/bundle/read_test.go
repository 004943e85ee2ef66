package bundle_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

const samples = "../../testdata/bundles"

func TestReadRunSamples(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(samples, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 4 {
		t.Fatalf("want at least 4 sample runs, got %d", len(entries))
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			run, err := bundle.ReadRun(filepath.Join(samples, "runs", e.Name()), bundle.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Problems) > 0 {
				t.Fatalf("sample has problems: %v", run.Problems)
			}
			if run.Transcript == "" {
				t.Error("sample has no transcript")
			}
			events, probs, err := bundle.ReadEvents(run.Dir, bundle.DefaultLimits())
			if err != nil || len(probs) > 0 || len(events) == 0 {
				t.Fatalf("events: %d, problems %v, err %v", len(events), probs, err)
			}
			xs, probs, err := bundle.ReadExchanges(run.Dir, bundle.DefaultLimits())
			if err != nil || len(probs) > 0 || len(xs.Exchanges) == 0 {
				t.Fatalf("exchanges: %v, problems %v, err %v", xs, probs, err)
			}
		})
	}
}

// validReceipt is a minimal receipt that passes validation.
func validReceipt(id string) bundle.Receipt {
	end := time.Date(2026, 12, 1, 10, 1, 0, 0, time.UTC)
	return bundle.Receipt{
		Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed,
		Stage: bundle.StageCompleted, Task: "fix it", Source: bundle.Source{Kind: "local", Path: "/src"},
		Model: bundle.Model{Name: "m"}, StartedAt: end.Add(-time.Minute), EndedAt: &end,
	}
}

func writeBundle(t *testing.T, id string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func receiptJSON(t *testing.T, r bundle.Receipt, edit func(map[string]any)) string {
	t.Helper()
	data, _ := json.Marshal(r)
	var m map[string]any
	json.Unmarshal(data, &m)
	if edit != nil {
		edit(m)
	}
	out, _ := json.Marshal(m)
	return string(out)
}

func TestReadRunReportsFileFieldProblem(t *testing.T) {
	id := "20261201-100000-abc"
	tests := []struct {
		name  string
		files map[string]string
		want  string // a substring of the error
	}{
		{"missing run.json", map[string]string{"events.jsonl": ""}, "run.json: missing"},
		{"invalid JSON", map[string]string{"run.json": "{\n  \"schema\": \"proctor.receipt.v1\",\n  \"run_id\": \n}"}, "run.json: invalid JSON at line 4, column 1"},
		{"wrong type", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["usage"] = map[string]any{"prompt_tokens": "many"} })}, "run.json: usage.prompt_tokens: want int64, got JSON string"},
		{"negative cached tokens", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["usage"] = map[string]any{"cache_read_tokens": -5} })}, "usage.cache_read_tokens: must not be negative, got -5"},
		{"missing field", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { delete(m, "status") })}, `run.json: status: "" is not one of queued`},
		{"unknown schema", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["schema"] = "proctor.receipt.v7" })}, `schema: unknown schema version "proctor.receipt.v7"`},
		{"unsafe run id", map[string]string{"run.json": receiptJSON(t, validReceipt("../../etc"), nil)}, `run_id: "../../etc" is not a safe folder name`},
		{"run id not the folder", map[string]string{"run.json": receiptJSON(t, validReceipt("other-id"), nil)}, `run_id: "other-id" does not match its folder name`},
		{"changed path escapes", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["changed"] = []string{"ok.go", "../outside"} })}, `changed[1]: "../outside" is not a clean relative path`},
		{"absolute changed path", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["changed"] = []string{"/etc/passwd"} })}, `changed[0]: "/etc/passwd"`},
		{"ended before started", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["ended_at"] = "2020-01-01T00:00:00Z" })}, "ended_at: 2020-01-01T00:00:00Z is before started_at"},
		{"bad time", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["started_at"] = "yesterday" })}, "run.json: not an RFC 3339 time"},
		{"scenario run without scenario", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) { m["kind"] = "scenario" })}, "scenario: missing on a scenario run"},
		{"applied but rejected", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) {
			m["review"] = map[string]any{"approved": false, "applied": true, "reviewed_by": "x", "reviewed_at": "2026-12-01T10:00:00Z"}
		})}, "review.applied: true on a review that did not approve"},
		{"not an object", map[string]string{"run.json": "[1,2]"}, "run.json: (top level): want bundle.Receipt, got JSON array"},
		{"failure without code", map[string]string{"run.json": receiptJSON(t, validReceipt(id), func(m map[string]any) {
			m["failure"] = map[string]any{"domain": "weather", "message": "x"}
		})}, `failure.domain: "weather" is not one of agent`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeBundle(t, id, tc.files)
			_, err := bundle.ReadRun(dir, bundle.DefaultLimits())
			if err == nil {
				t.Fatal("ReadRun accepted a bad bundle")
			}
			var ps bundle.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error is %T, want bundle.Problems", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, tc.want)
			}
		})
	}
}

func TestReadRunKeepsGoingPastNonFatalProblems(t *testing.T) {
	id := "20261201-100000-abc"
	r := validReceipt(id)
	r.Kind = bundle.KindScenario
	r.Status = bundle.StatusFailed
	r.Scenario = &bundle.ScenarioRef{ID: "s1", Repeat: 1}
	dir := writeBundle(t, id, map[string]string{
		"run.json":      receiptJSON(t, r, nil),
		"verdict.json":  `{"schema":"proctor.verdict.v1","scenario":"s1","passed":true,"results":[{"phase":"post","name":"c","passed":false}]}`,
		"transcript.md": "## user\n\nhello\n",
	})
	run, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if run.Verdict != nil {
		t.Error("an inconsistent verdict was accepted")
	}
	if len(run.Problems) != 1 || !strings.Contains(run.Problems[0].String(), "verdict.json: passed: true, but a check did not pass") {
		t.Fatalf("problems = %v", run.Problems)
	}
	if run.Transcript == "" {
		t.Error("transcript was dropped")
	}
}

func TestReadRunRefusesHugeTranscriptButKeepsTheRun(t *testing.T) {
	id := "20261201-100000-big"
	dir := writeBundle(t, id, map[string]string{"run.json": receiptJSON(t, validReceipt(id), nil)})
	f, err := os.Create(filepath.Join(dir, "transcript.md"))
	if err != nil {
		t.Fatal(err)
	}
	// 50 MB, written sparsely so the test stays cheap.
	if err := f.Truncate(50 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	run, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if run.Transcript != "" {
		t.Error("an oversized transcript was loaded")
	}
	if len(run.Problems) != 1 || !strings.Contains(run.Problems[0].String(), "transcript.md: file too large: 50.0 MiB, over the 16.0 MiB limit; the transcript is not searchable") {
		t.Fatalf("problems = %v", run.Problems)
	}
}

func TestOpenRefusesSymlinksOutOfTheBundle(t *testing.T) {
	id := "20261201-100000-lnk"
	dir := writeBundle(t, id, map[string]string{"inside.md": "ok"})
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "transcript.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside.md", filepath.Join(dir, "diff.patch")); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.ReadFile(dir, "transcript.md", 1<<20); err == nil || !strings.Contains(err.Error(), "outside the bundle folder") {
		t.Fatalf("symlink out of the bundle: err = %v", err)
	}
	if data, err := bundle.ReadFile(dir, "diff.patch", 1<<20); err != nil || string(data) != "ok" {
		t.Fatalf("symlink inside the bundle: %q, %v", data, err)
	}
	for _, name := range []string{"../x", "/etc/passwd", "a/../../b"} {
		if _, err := bundle.Open(dir, name); err == nil {
			t.Errorf("Open(%q) succeeded", name)
		}
	}
	// A symlinked run.json leading out is a problem for the whole bundle.
	os.Symlink(outside, filepath.Join(dir, "run.json"))
	if _, err := bundle.ReadRun(dir, bundle.DefaultLimits()); err == nil || !strings.Contains(err.Error(), "outside the bundle folder") {
		t.Fatalf("ReadRun with escaping run.json: %v", err)
	}
}

func TestReadEventsSkipsBadLines(t *testing.T) {
	dir := writeBundle(t, "r1", map[string]string{"events.jsonl": strings.Join([]string{
		`{"seq":1,"time":"2026-12-01T10:00:00Z","type":"stage.started","data":{"stage":"running"}}`,
		`not json`,
		`{"seq":1,"time":"2026-12-01T10:00:01Z","type":"model.request"}`,
		``,
		`{"seq":3,"time":"2026-12-01T10:00:02Z"}`,
		`{"seq":4,"time":"2026-12-01T10:00:03Z","type":"stage.finished"}`,
	}, "\n")})
	events, probs, err := bundle.ReadEvents(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[1].Seq != 4 {
		t.Fatalf("events = %+v", events)
	}
	want := []string{"line 2: invalid JSON", "line 3: seq 1 does not follow seq 1", "line 5: type: missing"}
	if len(probs) != len(want) {
		t.Fatalf("problems = %v", probs)
	}
	for i, w := range want {
		if !strings.Contains(probs[i].String(), w) {
			t.Errorf("problem %d = %q, want %q", i, probs[i], w)
		}
	}
}

func TestReadEventsStopsAtAnOverlongLine(t *testing.T) {
	dir := writeBundle(t, "r1", map[string]string{"events.jsonl": `{"seq":1,"time":"2026-12-01T10:00:00Z","type":"a"}` + "\n" + strings.Repeat("x", 200) + "\n"})
	lim := bundle.DefaultLimits()
	lim.MaxLineBytes = 100
	events, probs, err := bundle.ReadEvents(dir, lim)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || len(probs) != 1 || !strings.Contains(probs[0].String(), "longer than 100 bytes") {
		t.Fatalf("events %d, problems %v", len(events), probs)
	}
}

func TestReadSession(t *testing.T) {
	s, err := bundle.ReadSession(filepath.Join(samples, "sessions", "sess-20261201-140200-h7.json"), bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2 {
		t.Fatalf("runs = %v", s.Runs)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "s1.json")
	os.WriteFile(bad, []byte(`{"schema":"proctor.session.v1","session_id":"s2","created_at":"2026-12-01T10:00:00Z","runs":["a","a","../b"]}`), 0o644)
	_, err = bundle.ReadSession(bad, bundle.DefaultLimits())
	for _, want := range []string{`session_id: "s2" does not match its file name "s1.json"`, `runs[1]: run "a" is listed twice`, `runs[2]: "../b" is not a safe run id`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not contain %q", err, want)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"20261201-093012-k3f9qa": true, "a": true, "A.b_c-1": true,
		"": false, ".hidden": false, "-x": false, "a/b": false, "a..b": false, "..": false,
		"a b": false, strings.Repeat("a", 129): false, "ü": false,
	} {
		if got := bundle.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestReadTail(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.md"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max     int64
		want    string
		skipped int64
	}{{20, "0123456789", 0}, {10, "0123456789", 0}, {4, "6789", 6}, {0, "", 10}} {
		data, skipped, err := bundle.ReadTail(dir, "t.md", c.max)
		if err != nil || string(data) != c.want || skipped != c.skipped {
			t.Errorf("ReadTail(max %d) = %q, %d, %v; want %q, %d", c.max, data, skipped, err, c.want, c.skipped)
		}
	}
	if _, _, err := bundle.ReadTail(dir, "missing.md", 4); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, err := bundle.ReadTail(dir, "../t.md", 4); err == nil {
		t.Error("a path out of the bundle was read")
	}
}
