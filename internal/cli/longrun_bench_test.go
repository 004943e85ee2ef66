package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// builtProctor is the proctor binary built from this checkout, as a user
// runs it (go build ./cmd/proctor).
func builtProctor(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "proctor")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/proctor").CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/proctor: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkALongRun runs, through the built binary, a scripted run of 200
// calls that each read a 16 KB file — a conversation of about 3 MB, whose
// 200 requests hold about 330 MB if each were kept whole — and reports the
// bundle's size against its conversation (target: at most 12 MB, 4×), the
// run's wall time, and the time its run page takes through `proctor serve`
// (target ≤ 1.5 s) with serve's memory after.
func BenchmarkALongRun(b *testing.B) {
	const calls = 200
	bin := builtProctor(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "big.txt"), bytes.Repeat([]byte("0123456789abcde\n"), 1024), 0o644)
	var steps strings.Builder
	steps.WriteString("steps:\n")
	for range calls {
		steps.WriteString("  - reply:\n      tool_calls: [{read: big.txt}]\n")
	}
	steps.WriteString("  - reply: {content: done}\n")
	os.WriteFile(filepath.Join(dir, "model.yaml"), []byte(steps.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "bounds.json"), []byte(fmt.Sprintf(`{"max_tool_calls": %d, "max_turns": %d, "max_tokens": 1000000000}`, calls+10, calls+10)), 0o644)
	for range b.N {
		data := b.TempDir()
		start := time.Now()
		out, err := exec.Command(bin, "run", "--data", data, "--dir", src, "--task", "read it", "--script", filepath.Join(dir, "model.yaml"),
			"--sandbox", "off", "--bounds", filepath.Join(dir, "bounds.json")).CombinedOutput()
		wall := time.Since(start)
		if err != nil || !bytes.Contains(out, []byte("status: passed")) {
			b.Fatalf("proctor run: %v\n%s", err, out)
		}
		runs, _ := os.ReadDir(filepath.Join(data, "runs"))
		if len(runs) != 1 {
			b.Fatalf("%d runs", len(runs))
		}
		runDir := filepath.Join(data, "runs", runs[0].Name())
		var size int64
		for _, name := range bundle.FileNames() {
			if info, err := os.Stat(filepath.Join(runDir, name)); err == nil {
				size += info.Size()
			}
		}
		log, _, err := bundle.ReadExchanges(runDir, bundle.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		conversation, _ := log.Size(len(log.Exchanges) - 1)
		b.ReportMetric(wall.Seconds(), "run-wall-s")
		b.ReportMetric(float64(size)/(1<<20), "bundle-MB")
		b.ReportMetric(float64(size)/float64(conversation), "bundle-vs-conversation")
		page, rss := runPageTime(b, bin, data, runs[0].Name())
		b.ReportMetric(float64(page.Milliseconds()), "run-page-ms")
		b.ReportMetric(float64(rss)/1024, "serve-RSS-MiB")
	}
	b.ReportMetric(0, "ns/op")
}

// runPageTime starts `proctor serve` on data and asks for run id's page
// five times: the median time, and serve's resident memory after.
func runPageTime(b *testing.B, bin, data, id string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--sandbox", "off")
	base, token := benchServe(b, cmd)
	var times []time.Duration
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, base+"/runs/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		times = append(times, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /runs/%s: %s", id, resp.Status)
		}
	}
	slices.Sort(times)
	return times[len(times)/2], rssKiB(b, cmd.Process.Pid)
}

// BenchmarkACommandThroughTheBinary is what the sandbox adds to each
// command an agent runs, as a user meets it: `proctor run` (the built
// binary) of a scripted agent running `true` 101 times and once, in the
// default sandbox and with --sandbox off, alternating, three rounds; a
// command's cost is the difference between the two runs of a mode over
// 100, so what a run pays once (its walls' probe, its id, its folders)
// is left out. The figure is the confined command's cost over the
// unconfined one's (target ≤ 15 ms).
func BenchmarkACommandThroughTheBinary(b *testing.B) {
	bin := builtProctor(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/x\n\ngo 1.21\n"), 0o644)
	for _, n := range []int{1, 101} {
		script := "steps:\n" + strings.Repeat("  - reply:\n      tool_calls: [{run: \"true\"}]\n", n) + "  - reply: {content: done}\n"
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("model%d.yaml", n)), []byte(script), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "bounds.json"), []byte(`{"max_tool_calls": 200, "max_turns": 200}`), 0o644)
	run := func(mode string, n int) time.Duration {
		start := time.Now()
		out, err := exec.Command(bin, "run", "--data", b.TempDir(), "--dir", src, "--task", "t", "--script", filepath.Join(dir, fmt.Sprintf("model%d.yaml", n)),
			"--sandbox", mode, "--allow", "true", "--bounds", filepath.Join(dir, "bounds.json")).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("status: passed")) {
			b.Fatalf("proctor run --sandbox %s: %v\n%s", mode, err, out)
		}
		return time.Since(start)
	}
	for range b.N {
		took := map[string][]time.Duration{}
		for range 3 {
			for _, mode := range []string{"off", "workspace"} {
				for _, n := range []int{1, 101} {
					took[fmt.Sprint(mode, n)] = append(took[fmt.Sprint(mode, n)], run(mode, n))
				}
			}
		}
		median := func(k string) time.Duration { slices.Sort(took[k]); return took[k][1] }
		per := func(mode string) float64 { return float64(median(mode+"101")-median(mode+"1")) / 100 / 1e6 }
		b.ReportMetric(per("workspace"), "confined-ms/command")
		b.ReportMetric(per("off"), "unconfined-ms/command")
		b.ReportMetric(per("workspace")-per("off"), "sandbox-ms/command")
	}
	b.ReportMetric(0, "ns/op")
}
