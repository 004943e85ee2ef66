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
// --parallel at the core count. It reports wall time, cases/s and the
// process's peak RSS. Target: ≤ 4 s wall and ≤ 200 MiB peak RSS on 2 cores.
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
	var wall, indexing, cpu time.Duration
	for range b.N {
		data := b.TempDir()
		st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
		if err != nil {
			b.Fatal(err)
		}
		into := index.Into(st)
		r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: func(ctx context.Context, paths ...string) error {
			t := time.Now()
			defer func() { indexing += time.Since(t) }()
			return into(ctx, paths...)
		}}
		start, cpu0 := time.Now(), cpuTime()
		scenarios, probs := scenario.Discover(root)
		opt := suite.Options{Parallel: runtime.NumCPU(), PackIndex: index.New(st)}
		cleanup, err := opt.UsePack(data)
		if err != nil {
			b.Fatal(err)
		}
		rep := suite.Run(context.Background(), r, scenarios, probs, opt)
		cleanup()
		wall += time.Since(start)
		cpu += cpuTime() - cpu0
		if p, f, br := rep.Counts(); p != n || f != 0 || br != 0 {
			b.Fatalf("passed %d failed %d broken %d", p, f, br)
		}
		if page, err := st.ListRuns(context.Background(), store.RunFilter{Suite: rep.ID, Limit: 1}); err != nil || len(page.Runs) != 1 {
			b.Fatalf("runs not indexed: %v", err)
		}
		st.Close()
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	per := wall / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "wall-s")
	b.ReportMetric(float64(n)/per.Seconds(), "cases/s")
	b.ReportMetric((indexing / time.Duration(b.N)).Seconds(), "index-s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "cpu-µs/case")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
