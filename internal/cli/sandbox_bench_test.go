package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/toolcache"
)

// BenchmarkConfinedCommand is what the sandbox adds to a command an agent
// runs, with the init proctor really uses: this test binary links every
// package the proctor binary does (its package init included), and is the
// sandbox's helper as proctor is. A confined `true` — with the three
// toolchain caches a run's command has — against an unconfined one,
// alternating, in the same run; the target is ≤15 ms more.
func BenchmarkConfinedCommand(b *testing.B) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		b.Skipf("no sandbox here: %v", err)
	}
	dir := b.TempDir()
	os.Chmod(dir, 0o755)
	run := func(c *sandbox.Confinement) time.Duration {
		start := time.Now()
		res, err := sandbox.Command{Argv: []string{"true"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Confine: c}.Run(context.Background())
		if err != nil || res.Code != 0 {
			b.Fatalf("%v %d: %s", err, res.Code, res.Output)
		}
		return time.Since(start)
	}
	// A run's command: its three toolchain caches, Go's over a warm layer.
	layer, uppers := filepath.Join(b.TempDir(), "layer"), b.TempDir()
	os.MkdirAll(filepath.Join(layer, "00"), 0o755)
	os.Chmod(filepath.Dir(layer), 0o755)
	var caches []sandbox.Cache
	for _, k := range toolcache.Kinds() {
		c := sandbox.Cache{At: filepath.Join(dir, "cache", k.Name), Upper: filepath.Join(uppers, k.Name)}
		if k.Name == "go-build" {
			c.Layers = []string{layer}
		}
		if err := sandbox.UpperFolders(c.Upper, 0); err != nil {
			b.Fatal(err)
		}
		caches = append(caches, c)
	}
	confine := &sandbox.Confinement{Policy: sandbox.Policy{Write: []string{dir}, MaxProcs: 1024, MaxFile: 512 << 20, Caches: caches}, Helper: os.Args[0], Host: &sandbox.HostFiles{}}
	run(confine) // the binary's pages in the cache, as they are after a run's first command
	var plain, confined time.Duration
	b.ResetTimer()
	for range b.N {
		plain += run(nil)
		confined += run(confine)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(confined), "ms/confined")
	b.ReportMetric(ms(plain), "ms/unconfined")
	b.ReportMetric(ms(confined)-ms(plain), "ms-overhead")
}
