package suite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// BenchmarkSuite10k runs a generated suite of 10,000 one-turn scripted
// cases, each with a one-file fixture, no git seeding (git: false) and 3
// declarative checks, recorded in a pack (--pack) and indexed, with
// --parallel at the core count. It reports wall time, cases/s, CPU time per
// case and the process's peak RSS. Target: ≤ 4 s wall and ≤ 200 MiB peak
// RSS on 2 cores. As a baseline measured in the same run, the first tenth of
// the cases runs first with a folder per run (no --pack), indexed at the
// end; pack-speedup is the packed suite's cases/s over that.
func BenchmarkSuite10k(b *testing.B) {
	n := 10000
	if testing.Short() {
		n = 500
	}
	root := b.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("case-%05d", i))
		os.MkdirAll(filepath.Join(dir, "fixture"), 0o755)
		os.WriteFile(filepath.Join(dir, "fixture", "a.txt"), []byte("old\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(fmt.Sprintf(`id: case-%05d
task: Write new into a.txt.
git: false
checks:
  - {kind: file_contains, path: a.txt, text: new}
  - {kind: only_paths_changed, paths: [a.txt]}
  - {kind: budget_not_exceeded}
`, i)), 0o644)
		os.WriteFile(filepath.Join(dir, "model.yaml"), []byte(`steps:
  - reply: {content: done, tool_calls: [{name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - reply: {content: done}
`), 0o644)
	}
	var wall, cpu, baseWall time.Duration
	for range b.N {
		// The baseline: a tenth of the cases, a folder per run.
		scenarios, _ := scenario.Discover(root)
		baseWall += benchSuite(b, scenarios[:n/10], false)

		start, cpu0 := time.Now(), cpuTime()
		scenarios, probs := scenario.Discover(root)
		if len(probs) > 0 {
			b.Fatal(probs[0].Err)
		}
		benchSuite(b, scenarios, true)
		wall += time.Since(start)
		cpu += cpuTime() - cpu0
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	per := wall / time.Duration(b.N)
	rate, baseRate := float64(n)/per.Seconds(), float64(n/10)/(baseWall/time.Duration(b.N)).Seconds()
	b.ReportMetric(per.Seconds(), "wall-s")
	b.ReportMetric(rate, "cases/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "cpu-µs/case")
	b.ReportMetric(baseRate, "folder-cases/s")
	b.ReportMetric(rate/baseRate, "pack-speedup")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// benchSuite runs the scenarios as a suite into a new data folder, packed or
// a folder per run, checks that every case passed and was indexed, and
// returns the wall time.
func benchSuite(b *testing.B, scenarios []*scenario.Scenario, pack bool) time.Duration {
	b.Helper()
	data := b.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: index.Into(st)}
	opt := suite.Options{Parallel: runtime.NumCPU()}
	if pack {
		opt.PackIndex = index.New(st)
		cleanup, err := opt.UsePack(data)
		if err != nil {
			b.Fatal(err)
		}
		defer cleanup()
	}
	rep := suite.Run(context.Background(), r, scenarios, nil, opt)
	took := time.Since(start)
	if p, f, br := rep.Counts(); p != len(scenarios) || f != 0 || br != 0 {
		b.Fatalf("passed %d failed %d broken %d", p, f, br)
	}
	if c, err := st.Count(context.Background()); err != nil || c.Runs != len(scenarios) || c.Problems != 0 {
		b.Fatalf("%d of %d runs indexed, %d problems: %v", c.Runs, len(scenarios), c.Problems, err)
	}
	if cells, err := st.SuiteCells(context.Background(), rep.ID); err != nil || len(cells) != len(scenarios) || !cells[0].HasVerdict || !cells[0].Passed {
		b.Fatalf("the suite's verdicts are not indexed: %d cells, %v", len(cells), err)
	}
	return took
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
