package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// BenchmarkServe starts a real `proctor serve` (a child process) over a
// data folder with 100,000 runs indexed (the last 10,000 a suite of 10,000
// scenarios), loads it on loopback with 16 connections, 10,000 requests a
// page, and prints req/s and bytes of the runs page beside the JSON API's
// for the same 50 rows (target: the page ≥0.5× the API's rate), of the
// suite's page (targets ≥2,000 req/s, ≤100 KB), then the server's RSS
// (target ≤80 MiB).
func BenchmarkServe(b *testing.B) {
	ctx := context.Background()
	data := b.TempDir()
	st, err := store.Open(ctx, dbPath(data))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ups []store.BundleUpdate
	for i := range 100000 {
		t0 := start.Add(time.Duration(i) * time.Minute)
		t1 := t0.Add(40 * time.Second)
		rc := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: fmt.Sprintf("2026-load-%06d", i), Kind: bundle.KindTask, Status: bundle.StatusPassed,
			Stage: bundle.StageCompleted, Task: fmt.Sprintf("Fix bug %d in the invoice totals", i), Source: bundle.Source{Kind: "local", Path: "/src/invoice"},
			Model: bundle.Model{Name: []string{"gpt-4.1", "qwen2.5-coder-32b"}[i%2]}, StartedAt: t0, EndedAt: &t1}
		run := &bundle.Run{Dir: "/elsewhere/" + rc.RunID, Transcript: "## user\n\nfix the bug\n"}
		if i >= 90000 { // the last 10,000: one suite of 10,000 one-run scenarios
			id := fmt.Sprintf("scenario-%05d", i-90000)
			passed := i%7 != 0
			rc.Kind, rc.Scenario = bundle.KindScenario, &bundle.ScenarioRef{ID: id, Repeat: 1, Suite: "suite-load"}
			run.Verdict = &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: id, Passed: passed, Results: []bundle.CheckResult{{Phase: "post", Name: "c", Passed: passed}}}
		}
		run.Receipt = rc
		ups = append(ups, store.BundleUpdate{Path: run.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: run})
		if len(ups) == 5000 {
			if err := st.ApplyBundles(ctx, ups, nil); err != nil {
				b.Fatal(err)
			}
			ups = nil
		}
	}
	st.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", "127.0.0.1:0", "--data", data)
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1")
	base, token := benchServe(b, cmd)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}
	load := func(path string) (float64, int64) {
		const total = 10000
		var next, size atomic.Int64
		var wg sync.WaitGroup
		t0 := time.Now()
		for range 16 {
			wg.Go(func() {
				for next.Add(1) <= total && time.Since(t0) < 2*time.Minute {
					req, _ := http.NewRequest(http.MethodGet, base+path, nil)
					req.Header.Set("Authorization", "Bearer "+token) // the local secret serve printed
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					if resp.StatusCode != http.StatusOK {
						resp.Body.Close()
						b.Errorf("GET %s: %s: the figures would be an error page's", path, resp.Status)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					size.Store(n)
				}
			})
		}
		wg.Wait()
		return float64(min(next.Load(), total)) / time.Since(t0).Seconds(), size.Load()
	}
	for range b.N {
		apiRate, apiBytes := load("/api/v1/runs?limit=50")
		pageRate, pageBytes := load("/runs")
		suiteRate, suiteBytes := load("/suites/suite-load")
		b.ReportMetric(suiteRate, "suite-req/s")
		b.ReportMetric(float64(suiteBytes)/1024, "suite-KB")
		b.ReportMetric(pageRate, "page-req/s")
		b.ReportMetric(apiRate, "api-req/s")
		b.ReportMetric(pageRate/apiRate, "page-rate-vs-api")
		b.ReportMetric(float64(pageBytes)/1024, "page-KB")
		b.ReportMetric(float64(apiBytes)/1024, "api-KB")
	}
	b.ReportMetric(float64(rssKiB(b, cmd.Process.Pid))/1024, "serve-RSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// benchServe starts cmd, a `proctor serve --addr 127.0.0.1:0`, and
// reads the address it serves and the local secret it prints; the process
// is killed when the benchmark ends.
func benchServe(b *testing.B, cmd *exec.Cmd) (base, token string) {
	b.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// serve prints its address, then the address with its local secret.
	rd := bufio.NewReader(out)
	var said string
	var m []string
	for range 5 {
		line, err := rd.ReadString('\n')
		said += line
		if m = regexp.MustCompile(`token=([A-Za-z0-9_-]+)`).FindStringSubmatch(line); m != nil || err != nil {
			break
		}
	}
	go io.Copy(io.Discard, rd)
	base = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(said)
	if base == "" || m == nil {
		b.Fatalf("serve said %q", said)
	}
	return base, m[1]
}

// rssKiB is the resident memory of process pid, from /proc.
func rssKiB(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "status"))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kib int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kib)
			return kib
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
