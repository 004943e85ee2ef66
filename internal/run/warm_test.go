package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// What an agent can leave in go.mod and go.sum before a continued run's
// warm — a toolchain to fetch, a replace by a folder of the host, a
// module with no sum — makes the unconfined download fail or fetch
// nothing of the host's: no toolchain is downloaded, no local folder is
// copied into the layer, no module is fetched straight from a server.
func TestAModulesWarmObeysNoHostileGoMod(t *testing.T) {
	goBin, err := lookPath("go", os.Environ())
	if err != nil {
		t.Skip("no go here")
	}
	host := t.TempDir() // a folder of the host the go.mod names
	os.WriteFile(filepath.Join(host, "go.mod"), []byte("module example.org/dep\n"), 0o644)
	os.WriteFile(filepath.Join(host, "secret.txt"), []byte("host secret\n"), 0o644)
	env := append(os.Environ(), "GOPROXY=file://"+t.TempDir(), "GOSUMDB=off", "GOFLAGS=", "GOMODCACHE="+t.TempDir())
	for _, c := range []struct{ name, mod string }{
		{"a newer toolchain", "module m\n\ngo 1.999\n\ntoolchain go1.999.0\n"},
		{"a replace by a host folder", "module m\n\ngo 1.21\n\nrequire example.org/dep v1.0.0\n\nreplace example.org/dep => " + host + "\n"},
		{"a module from a server", "module m\n\ngo 1.21\n\nrequire github.com/proctor-dev/not-there v1.0.0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			into := t.TempDir()
			err := downloadModules(context.Background(), goBin, env, filepath.Join(t.TempDir(), "d"), []byte(c.mod), []byte("example.org/dep v1.0.0 h1:x=\n"), into)
			var found []string
			filepath.WalkDir(into, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					found = append(found, p)
				}
				return nil
			})
			for _, f := range found {
				if raw, _ := os.ReadFile(f); strings.Contains(string(raw), "host secret") || strings.Contains(f, "toolchain") {
					t.Errorf("the warm kept %s", f)
				}
			}
			if c.name != "a replace by a host folder" && err == nil {
				t.Errorf("the warm of %q succeeded", c.mod)
			}
		})
	}
}
