package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
)

// seedPages indexes 110,000 runs, 100,000 of them one suite of 10,000
// scenarios run 10 times each (as a suite of generated scenarios makes).
func seedPages(b *testing.B) (*server.Server, string) {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "proctor.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(i int, suite string, scenario string, repeat int) *bundle.Run {
		t0 := start.Add(time.Duration(i) * time.Minute)
		t1 := t0.Add(40 * time.Second)
		r := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: fmt.Sprintf("2026-bench-%06d", i), Kind: bundle.KindTask, Status: bundle.StatusPassed,
			Stage: bundle.StageCompleted, Task: fmt.Sprintf("Fix bug %d in the invoice totals so that amounts round to the nearest cent", i),
			Source: bundle.Source{Kind: "local", Path: "/src/invoice"}, Model: bundle.Model{Name: []string{"gpt-4.1", "qwen2.5-coder-32b"}[i%2]},
			StartedAt: t0, EndedAt: &t1, Usage: bundle.Usage{TotalTokens: int64(1000 + i%9000)}}
		run := &bundle.Run{Dir: "/bundles/" + r.RunID, Transcript: "## user\n\nfix the bug\n"}
		if scenario != "" {
			r.Kind, r.Scenario = bundle.KindScenario, &bundle.ScenarioRef{ID: scenario, Repeat: repeat, Suite: suite}
			passed := (i+repeat)%4 != 0
			if !passed {
				r.Status = bundle.StatusFailed
			}
			run.Verdict = &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: passed,
				Results: []bundle.CheckResult{{Phase: "post", Name: "c", Passed: passed}}}
		}
		run.Receipt = r
		return run
	}
	const others, scenarios, repeats = 10000, 10000, 10
	var paths []string
	var runs []*bundle.Run
	for i := range others {
		run := mk(i, "", "", 0)
		paths, runs = append(paths, run.Dir), append(runs, run)
		if len(runs) == 5000 {
			if err := st.ApplyBundles(ctx, updates(paths, runs), nil); err != nil {
				b.Fatal(err)
			}
			paths, runs = nil, nil
		}
	}
	if err := st.ApplyBundles(ctx, updates(paths, runs), nil); err != nil {
		b.Fatal(err)
	}
	for k := 1; k <= repeats; k++ {
		var ups []store.BundleUpdate
		for i := range scenarios {
			run := mk(others+(k-1)*scenarios+i, "suite-bench", fmt.Sprintf("scenario-%05d", i), k)
			ups = append(ups, store.BundleUpdate{Path: run.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: run})
		}
		if err := st.ApplyBundles(ctx, ups, nil); err != nil {
			b.Fatal(err)
		}
	}
	return server.New(st, server.Config{LocalSecret: testSecret, DataDir: b.TempDir()}), "/suites/suite-bench"
}

// BenchmarkPages measures the 50-row runs page and the first page (50 rows
// of 10 repeats) of a suite of 100,000 runs: server time and size per page
// (targets: ≤2 ms, ≤100 KB), each as a ratio to /healthz measured in the
// same run; the runs page's rate against the JSON API's for the same rows
// (target ≥0.5); and the suite page's rate under 16 concurrent connections
// on loopback against the JSON API's runs list under the same load (target
// ≥0.5; it was 0.12 requests/s when every reader counted the suite).
func BenchmarkPages(b *testing.B) {
	srv, suitePath := seedPages(b)
	h := withSecret(srv)
	serve := timed(b, h)
	const warm = 20
	for range warm {
		serve("/healthz")
	}
	var base time.Duration
	for range 500 {
		d, _ := serve("/healthz")
		base += d
	}
	base /= 500
	// The runs page against the JSON of the same 50 rows, alternately in
	// the same loop (target: the page serves ≥50% of the API's rate).
	b.Run("runs-vs-api", func(b *testing.B) {
		var page, api time.Duration
		for range b.N {
			d, _ := serve("/runs")
			page += d
			d, _ = serve("/api/v1/runs?limit=50")
			api += d
		}
		b.ReportMetric(float64(page.Microseconds())/1000/float64(b.N), "ms/page")
		b.ReportMetric(float64(api)/float64(page), "page-rate-vs-api")
	})
	for _, page := range []struct{ name, path string }{{"runs", "/runs"}, {"suite", suitePath}} {
		b.Run(page.name, func(b *testing.B) {
			var total time.Duration
			size := 0
			for range b.N {
				d, n := serve(page.path)
				total += d
				size = n
			}
			per := total / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds())/1000, "ms/page")
			b.ReportMetric(float64(size)/1024, "KB/page")
			b.ReportMetric(float64(per)/float64(base), "ratio-to-healthz")
		})
	}
	// 16 colleagues opening the suite at once, against the JSON API's runs
	// list under the same load in the same run (target: ≥50% of its rate).
	b.Run("suite-vs-api-16-connections", func(b *testing.B) {
		ts := httptest.NewServer(h)
		defer ts.Close()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		rate := func(path string) float64 {
			const total = 4000
			var next atomic.Int64
			var wg sync.WaitGroup
			t0 := time.Now()
			for range 16 {
				wg.Go(func() {
					for next.Add(1) <= total {
						resp, err := client.Get(ts.URL + path)
						if err != nil {
							b.Error(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Errorf("%s: %s", path, resp.Status)
							return
						}
					}
				})
			}
			wg.Wait()
			return float64(total) / time.Since(t0).Seconds()
		}
		suite, api := rate(suitePath), rate("/api/v1/runs?limit=50")
		b.ReportMetric(suite, "suite-req/s")
		b.ReportMetric(api, "api-req/s")
		b.ReportMetric(suite/api, "suite-rate-vs-api")
		b.ReportMetric(0, "ns/op")
	})
}

// timed serves a GET of path by h, and returns how long it took and the
// body's size; an answer other than 200 stops the benchmark.
func timed(b *testing.B, h http.Handler) func(path string) (time.Duration, int) {
	return func(path string) (time.Duration, int) {
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(rec, req)
		d := time.Since(t0)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body)
		}
		return d, rec.Body.Len()
	}
}

// updates are the index updates of runs read from paths.
func updates(paths []string, runs []*bundle.Run) []store.BundleUpdate {
	ups := make([]store.BundleUpdate, len(runs))
	for i, r := range runs {
		ups[i] = store.BundleUpdate{Path: paths[i], Kind: store.BundleRun, Fingerprint: "f", Run: r}
	}
	return ups
}

// BenchmarkComparePage compares two suites of 10,000 scenarios run 3 times
// each (60,000 runs; one scenario in 100 regresses, one in 50 is flaky in
// the head): the page's size (target ≤100 KB) and time, and its rate
// against the JSON API's for the same page of the same comparison,
// alternately in the same run (target ≥0.5).
func BenchmarkComparePage(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "proctor.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	const scenarios, repeats = 10000, 3
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for _, suite := range []string{"suite-base", "suite-head"} {
		var ups []store.BundleUpdate
		for i := range scenarios {
			for k := 1; k <= repeats; k++ {
				n++
				passed := true
				if suite == "suite-head" {
					passed = i%100 != 7 && (i%50 != 3 || k != 2)
				}
				t0 := start.Add(time.Duration(n) * time.Second)
				t1 := t0.Add(40 * time.Second)
				scenario := fmt.Sprintf("scenario-%05d", i)
				r := &bundle.Run{Dir: fmt.Sprintf("/bundles/%s/%d", suite, n), Receipt: bundle.Receipt{Schema: bundle.ReceiptSchema,
					RunID: fmt.Sprintf("2026-cmp-%06d", n), Kind: bundle.KindScenario, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
					Task: "t", Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: "gpt-4.1"}, StartedAt: t0, EndedAt: &t1,
					Usage:    bundle.Usage{PromptTokens: int64(2000 + i%700), CompletionTokens: 300, TotalTokens: int64(2300 + i%700)},
					Scenario: &bundle.ScenarioRef{ID: scenario, Repeat: k, Suite: suite}},
					Verdict: &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: passed}}
				if !passed {
					r.Receipt.Status, r.Verdict.FirstFailure = bundle.StatusFailed, "tests-pass"
				}
				ups = append(ups, store.BundleUpdate{Path: r.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: r})
			}
			if len(ups) >= 6000 {
				if err := st.ApplyBundles(ctx, ups, nil); err != nil {
					b.Fatal(err)
				}
				ups = nil
			}
		}
		if err := st.ApplyBundles(ctx, ups, nil); err != nil {
			b.Fatal(err)
		}
	}
	serve := timed(b, withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: b.TempDir()})))
	const query = "?base=suite-base&head=suite-head"
	serve("/compare" + query) // warm the page cache of SQLite
	b.Run("page-vs-api", func(b *testing.B) {
		const rounds = 10 // each a page and an API call: a comparison is counted whole each time
		var page, api time.Duration
		size := 0
		for range rounds {
			d, n := serve("/compare" + query)
			page, size = page+d, n
			d, _ = serve("/api/v1/compare" + query)
			api += d
		}
		b.ReportMetric(float64(page.Microseconds())/1000/rounds, "ms/page")
		b.ReportMetric(float64(api.Microseconds())/1000/rounds, "ms/api")
		b.ReportMetric(float64(size)/1024, "KB/page")
		b.ReportMetric(float64(api)/float64(page), "page-rate-vs-api")
		b.ReportMetric(0, "ns/op")
		if size > 100*1024 {
			b.Errorf("the page is %d KB, target ≤100 KB", size/1024)
		}
	})
}
