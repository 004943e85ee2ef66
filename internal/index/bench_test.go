package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/store"
)

// writeSyntheticBundles writes n run bundles shaped like real ones: a
// receipt, a ~3 KB transcript, a dozen events and a small diff.
func writeSyntheticBundles(tb testing.TB, root string, n int) {
	tb.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	models := []string{"gpt-4.1", "gpt-4.1-mini", "qwen2.5-coder-32b", "claude-sonnet-4"}
	statuses := []bundle.Status{bundle.StatusPassed, bundle.StatusPassed, bundle.StatusFailed, bundle.StatusError, bundle.StatusAwaitingReview}
	para := strings.Repeat("The agent reads internal/money/money.go, finds the truncation and rewrites Cents with math.Round. ", 6)
	for i := range n {
		id := fmt.Sprintf("2026%04d-synth-%06d", i%1231, i)
		dir := filepath.Join(root, "runs", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		started := start.Add(time.Duration(i) * time.Minute)
		ended := started.Add(time.Duration(30+i%300) * time.Second)
		r := &bundle.Receipt{
			Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: statuses[i%len(statuses)],
			Stage: bundle.StageCompleted, Task: fmt.Sprintf("Fix bug %d in the invoice totals", i),
			Criteria: []string{"go test ./... passes"}, Source: bundle.Source{Kind: "local", Path: "/src/invoice", CommitSHA: "3f1c9a2e8d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a"},
			Model: bundle.Model{Profile: "p", Name: models[i%len(models)]}, StartedAt: started, EndedAt: &ended,
			Usage:   bundle.Usage{PromptTokens: int64(1000 + i%5000), CompletionTokens: 300, TotalTokens: int64(1300 + i%5000), ModelCalls: 6},
			Changed: []string{"internal/money/money.go"},
		}
		if i%3 == 0 {
			r.Kind = bundle.KindScenario
			r.Scenario = &bundle.ScenarioRef{ID: fmt.Sprintf("scenario-%d", i%40), Repeat: 1}
			if r.Status == bundle.StatusAwaitingReview {
				r.Status = bundle.StatusPassed
			}
		}
		if err := bundle.WriteJSON(filepath.Join(dir, bundle.ReceiptFile), r); err != nil {
			tb.Fatal(err)
		}
		if r.Scenario != nil {
			v := &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: r.Scenario.ID, Passed: r.Status == bundle.StatusPassed, Exchanges: 6,
				Results: []bundle.CheckResult{{Phase: "post", Name: "go-test", Passed: r.Status == bundle.StatusPassed, Detail: "exit 0"}}}
			if err := bundle.WriteJSON(filepath.Join(dir, bundle.VerdictFile), v); err != nil {
				tb.Fatal(err)
			}
		}
		transcript := fmt.Sprintf("# Run %s\n\n## user\n\n%s\n\n## assistant\n\n%s\n\n## tool read_file (call_1)\n\n    %s\n\n## assistant\n\n%s run %d\n", id, r.Task, para, para, para, i)
		events := ""
		for s := range 12 {
			events += fmt.Sprintf(`{"seq":%d,"time":"%s","type":"tool.call","data":{"name":"read_file"}}`+"\n", s+1, started.Add(time.Duration(s)*time.Second).Format(time.RFC3339))
		}
		files := map[string]string{
			bundle.TranscriptFile: transcript,
			bundle.EventsFile:     events,
			bundle.DiffFile:       "diff --git a/m.go b/m.go\n--- a/m.go\n+++ b/m.go\n@@ -1 +1 @@\n-return int64(e*100)\n+return int64(math.Round(e*100))\n",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

func freshStore(b *testing.B) *store.Store {
	b.Helper()
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "proctor.db"))
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkIndexRebuild rebuilds the index from 10,000 bundles and compares
// its rate with the store's write of the same runs (read into memory
// beforehand) measured in the same run: what reading the files costs.
func BenchmarkIndexRebuild(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	root := b.TempDir()
	writeSyntheticBundles(b, root, n)

	// Baseline: the same runs, already read, written to the store.
	entries, err := os.ReadDir(filepath.Join(root, "runs"))
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	var runs []*bundle.Run
	for _, e := range entries {
		dir := filepath.Join(root, "runs", e.Name())
		run, err := bundle.ReadRun(dir, bundle.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, dir)
		runs = append(runs, run)
	}

	var rebuild, baseline time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		base := freshStore(b)
		t0 := time.Now()
		var ups []store.BundleUpdate
		for i, r := range runs {
			ups = append(ups, store.BundleUpdate{Path: paths[i], Kind: store.BundleRun, Fingerprint: "f", Run: r})
		}
		if err := base.ApplyBundles(ctx, ups, nil); err != nil {
			b.Fatal(err)
		}
		baseline += time.Since(t0)
		base.Close()

		st := freshStore(b)
		b.StartTimer()
		t0 = time.Now()
		rep, err := index.New(st).Index(ctx, root)
		rebuild += time.Since(t0)
		b.StopTimer()
		if err != nil || rep.Indexed != n || rep.Broken != 0 {
			b.Fatalf("rebuild: indexed %d, with problems %d, err %v", rep.Indexed, rep.Broken, err)
		}
		st.Close()
		b.StartTimer()
	}
	rebuildRate := float64(n*b.N) / rebuild.Seconds()
	baseRate := float64(n*b.N) / baseline.Seconds()
	b.ReportMetric(rebuildRate, "bundles/s")
	b.ReportMetric(baseRate, "store-write-runs/s")
	b.ReportMetric(rebuildRate/baseRate, "ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkIndexUnchanged measures a pass over 10,000 bundles that have not
// changed (the cost of `proctor serve` start-up and of re-running index),
// against the full rebuild of the same bundles.
func BenchmarkIndexUnchanged(b *testing.B) {
	const n = 10000
	ctx := context.Background()
	root := b.TempDir()
	writeSyntheticBundles(b, root, n)
	st := freshStore(b)
	defer st.Close()
	t0 := time.Now()
	if _, err := index.New(st).Index(ctx, root); err != nil {
		b.Fatal(err)
	}
	full := time.Since(t0)
	b.ResetTimer()
	var pass time.Duration
	for range b.N {
		t0 := time.Now()
		rep, err := index.New(st).Index(ctx, root)
		pass += time.Since(t0)
		if err != nil || rep.Unchanged != n {
			b.Fatalf("unchanged %d of %d, err %v", rep.Unchanged, n, err)
		}
	}
	per := pass / time.Duration(b.N)
	b.ReportMetric(float64(n)/per.Seconds(), "bundles/s")
	b.ReportMetric(float64(per)/float64(full), "ratio-to-rebuild")
}
