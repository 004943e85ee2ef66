package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/proctor-dev/proctor/internal/toolcache"
)

func TestModuleProxy(t *testing.T) {
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	own := "file://" + filepath.Join(cache, "cache", "download")
	for _, c := range []struct {
		name, goproxy, modcache, want string
	}{
		{"the default", "https://proxy.golang.org,direct", cache, own + ",https://proxy.golang.org"},
		{"no direct, no off, either separator", "https://a.example|direct,https://b.example,off", cache, own + ",https://a.example,https://b.example"},
		{"direct alone: the user's cache alone", "direct", cache, own},
		{"off", "off", cache, own},
		{"a cache with no downloads", "https://proxy.golang.org", t.TempDir(), "https://proxy.golang.org"},
		{"a relative cache is not read", "https://proxy.golang.org", "rel", "https://proxy.golang.org"},
		{"nothing at all", "direct", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := moduleProxy(c.goproxy, c.modcache); got != c.want {
				t.Fatalf("moduleProxy(%q, %q) = %q, want %q", c.goproxy, c.modcache, got, c.want)
			}
		})
	}
}

func TestGoModFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		link  bool // go.sum a link to a file outside
		want  bool
	}{
		{"a module with dependencies", map[string]string{"go.mod": "module m\n", "go.sum": "x v1 h1:a=\n"}, false, true},
		{"no go.sum", map[string]string{"go.mod": "module m\n"}, false, false},
		{"an empty go.sum", map[string]string{"go.mod": "module m\n", "go.sum": "\n"}, false, false},
		{"no go.mod", map[string]string{"go.sum": "x v1 h1:a=\n"}, false, false},
		{"vendored", map[string]string{"go.mod": "module m\n", "go.sum": "x v1 h1:a=\n", "vendor/modules.txt": "# x v1\n"}, false, false},
		{"go.sum a link out", map[string]string{"go.mod": "module m\n"}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
			}
			if c.link {
				outside := filepath.Join(t.TempDir(), "secret")
				os.WriteFile(outside, []byte("x v1 h1:a=\n"), 0o644)
				os.Symlink(outside, filepath.Join(dir, "go.sum"))
			}
			if _, _, ok := goModFiles(dir); ok != c.want {
				t.Fatalf("goModFiles: %v, want %v", ok, c.want)
			}
		})
	}
	if modKey("/usr/bin/go", []byte("module m\n"), []byte("a\n")) == modKey("/usr/bin/go", []byte("module m\n"), []byte("b\n")) {
		t.Fatal("two go.sums have one key")
	}
}

// A runner's runs look for what killed proctors left as they start, at
// most every sweepEvery: a suite's thousands of runs do not each list the
// folders again, and what is left is found within that time.
func TestARunnerSweepsAtMostEveryThirtySeconds(t *testing.T) {
	store := toolcache.Store{Dir: t.TempDir()}
	sb := &Sandbox{Caches: &store}
	data := t.TempDir()
	left := func() bool {
		_, err := os.Stat(filepath.Join(store.Dir, ".warm-dead"))
		return err == nil
	}
	plant := func() { os.Mkdir(filepath.Join(store.Dir, ".warm-dead"), 0o700) }
	noProgress := func(string, ...any) {}
	plant()
	sb.sweep(context.Background(), data, noProgress)
	if left() {
		t.Fatal("the first run's sweep left a dead warm")
	}
	plant()
	sb.sweep(context.Background(), data, noProgress)
	if !left() {
		t.Fatal("a run within 30 s of the last sweep swept again")
	}
	sb.swept = sb.swept.Add(-sweepEvery)
	sb.sweep(context.Background(), data, noProgress)
	if left() {
		t.Fatal("a run 30 s after the last sweep left a dead warm")
	}
}
