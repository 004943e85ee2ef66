package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkScenarioRunPack runs a suite of 10,000 one-turn scripted
// scenarios the way a user does — the built binary's `proctor scenario run
// --pack --parallel 2` — and prints its wall time, its CPU time per case (user
// and system) and peak RSS, then the same at 100,000 cases (--repeat 10;
// targets: ≤2.5 ms of CPU per case, ≤200 MiB on 2 cores; issues 27 and 43),
// beside the baseline measured in the same run: a tenth of the cases
// without --pack, a folder per run.
func BenchmarkScenarioRunPack(b *testing.B) {
	bin := builtProctor(b)
	n := 10000
	if testing.Short() {
		n = 500
	}
	root, part := b.TempDir(), b.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("case-%05d", i))
		writeBenchCase(b, dir, i)
		if i < n/10 {
			writeBenchCase(b, filepath.Join(part, filepath.Base(dir)), i)
		}
	}
	for range b.N {
		baseWall, _, baseCPU := scenarioRunChild(b, bin, "--parallel", "2", part)
		wall, rss, cpu := scenarioRunChild(b, bin, "--pack", "--parallel", "2", root)
		rate, baseRate := float64(n)/wall.Seconds(), float64(n/10)/baseWall.Seconds()
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(rate, "cases/s")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/case")
		b.ReportMetric(float64(baseCPU.Microseconds())/1000/float64(n/10), "folder-cpu-ms/case")
		b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
		b.ReportMetric(baseRate, "folder-cases/s")
		b.ReportMetric(rate/baseRate, "pack-vs-folders")
		if !testing.Short() {
			// 100,000 cases: the same suite ten times over, for memory that
			// must stay flat (target ≤200 MiB).
			_, rss100k, cpu100k := scenarioRunChild(b, bin, "--pack", "--parallel", "2", "--repeat", "10", root)
			b.ReportMetric(float64(rss100k)/1024, "peak-RSS-MiB-100k")
			b.ReportMetric(float64(cpu100k.Microseconds())/1000/float64(10*n), "cpu-ms/case-100k")
		}
	}
	b.ReportMetric(0, "ns/op")
}

func writeBenchCase(b *testing.B, dir string, i int) {
	b.Helper()
	files := map[string]string{
		"fixture/a.txt": "old\n",
		"scenario.yaml": fmt.Sprintf("id: case-%05d\ntask: Write new into a.txt.\ngit: false\nchecks:\n  - {kind: file_contains, path: a.txt, text: new}\n  - {kind: only_paths_changed, paths: [a.txt]}\n  - {kind: budget_not_exceeded}\n", i),
		"model.yaml":    "steps:\n  - reply: {content: done, tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// scenarioRunChild runs the binary's `scenario run --quiet ARGS…` in a new data
// folder and returns its wall time, peak RSS in KiB and CPU time (user and
// system); every case must pass.
func scenarioRunChild(b *testing.B, bin string, args ...string) (time.Duration, int64, time.Duration) {
	b.Helper()
	cmd := exec.Command(bin, append([]string{"scenario", "run", "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "PROCTOR_DATA="+b.TempDir())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("scenario run %v: %v\n%.2000s", args, err, out)
	}
	ps := cmd.ProcessState
	return took, ps.SysUsage().(*syscall.Rusage).Maxrss, ps.UserTime() + ps.SystemTime()
}
