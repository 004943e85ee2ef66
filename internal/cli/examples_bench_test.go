package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/sandbox"
)

// BenchmarkExamplesSuite is the five example scenarios in the default
// sandbox against the same with --sandbox off, alternating, in one data
// folder: the first sandboxed suite warms the toolchain caches (go-rounding-
// fix's go test compiles the standard library once), the later ones start
// warm. The target is ≤1.5× warm; the cold suite is reported beside it.
func BenchmarkExamplesSuite(b *testing.B) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	examples, err := filepath.Abs("../../examples/scenarios")
	if err != nil {
		b.Fatal(err)
	}
	data := b.TempDir()
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	suite := func(mode sandbox.Mode) time.Duration {
		start := time.Now()
		r := invoke(b, env, "scenario", "run", "--sandbox", string(mode), examples)
		if r.code != 0 {
			b.Fatalf("--sandbox %s: %+v", mode, r)
		}
		return time.Since(start)
	}
	cold := suite(sandbox.ModeWorkspace)
	suite(sandbox.ModeOff) // the user's own build cache warm too, as it is on a machine in use
	var off, confined time.Duration
	b.ResetTimer()
	for range b.N {
		off += suite(sandbox.ModeOff)
		confined += suite(sandbox.ModeWorkspace)
	}
	s := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(cold.Seconds(), "s/cold-sandboxed")
	b.ReportMetric(s(confined), "s/sandboxed")
	b.ReportMetric(s(off), "s/off")
	b.ReportMetric(s(confined)/s(off), "sandboxed/off")
	b.ReportMetric(cold.Seconds()/s(off), "cold/off")
}
