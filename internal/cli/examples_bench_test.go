package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/sandbox"
)

// BenchmarkExamplesSuite is the five example scenarios through the built
// binary (`proctor scenario run`), as a user runs them: in the default
// sandbox on a new data folder (cold: the first suite warms the toolchain
// caches), with --sandbox off, and sandboxed again on the now warm data
// folder, alternating in each round. The target is ≤1.5× warm; the cold
// suite's ratio is reported beside it.
func BenchmarkExamplesSuite(b *testing.B) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	examples, err := filepath.Abs("../../examples/scenarios")
	if err != nil {
		b.Fatal(err)
	}
	bin := builtProctor(b)
	suite := func(data string, mode sandbox.Mode) time.Duration {
		cmd := exec.Command(bin, "scenario", "run", "--quiet", "--sandbox", string(mode), examples)
		cmd.Env = append(os.Environ(), "PROCTOR_DATA="+data)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("--sandbox %s: %v\n%s", mode, err, out)
		}
		return time.Since(start)
	}
	suite(b.TempDir(), sandbox.ModeOff) // the user's own build cache warm, as it is on a machine in use
	var cold, off, warm time.Duration
	b.ResetTimer()
	for range b.N {
		data := b.TempDir()
		cold += suite(data, sandbox.ModeWorkspace)
		off += suite(b.TempDir(), sandbox.ModeOff)
		warm += suite(data, sandbox.ModeWorkspace)
	}
	s := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(s(cold), "s/cold-sandboxed")
	b.ReportMetric(s(warm), "s/sandboxed")
	b.ReportMetric(s(off), "s/off")
	b.ReportMetric(s(warm)/s(off), "sandboxed/off")
	b.ReportMetric(s(cold)/s(off), "cold/off")
}
