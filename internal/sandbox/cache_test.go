package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A cache is warm and copy-on-write: the command reads what its layers
// hold and writes only into its own upper folder, which its next command
// sees; no write, change or removal of it reaches a layer on the host, and
// a command with another upper folder sees the layers as they were. The
// host's layers and upper folder are not in the view at all.
func TestACacheIsCopyOnWrite(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	root := t.TempDir()
	os.Chmod(root, 0o755)
	ws, tmp, store := filepath.Join(root, "ws"), filepath.Join(root, "tmp"), t.TempDir()
	older, newer := filepath.Join(store, "older"), filepath.Join(store, "newer")
	uid, gid := commandID()
	for name, content := range map[string]string{"older/a": "old\n", "older/gone": "x\n", "older/both": "under\n", "newer/b": "new\n", "newer/both": "over\n"} {
		p := filepath.Join(store, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{ws, tmp} {
		os.MkdirAll(d, 0o755)
	}
	if os.Geteuid() == 0 {
		// Layers are what the sandbox's id wrote under trusted work.
		filepath.Walk(store, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	}
	run := func(upper, script string) (string, int) {
		t.Helper()
		if err := UpperFolders(upper, 0); err != nil {
			t.Fatal(err)
		}
		p := Policy{Write: []string{ws, tmp}, Caches: []Cache{{At: filepath.Join(tmp, "cache", "go-build"), Layers: []string{newer, older}, Upper: upper}}}
		res, err := Command{Argv: []string{"bash", "-c", script}, Dir: ws, Env: []string{"PATH=/usr/bin:/bin", "C=" + p.Caches[0].At, "STORE=" + store, "UPPER=" + upper},
			Confine: &Confinement{Policy: p, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Output), res.Code
	}
	runUpper := filepath.Join(t.TempDir(), "run")
	out, code := run(runUpper, `set -e
[ "$(cat $C/a)" = old ] && [ "$(cat $C/b)" = new ] && [ "$(cat $C/both)" = over ] && [ -e $C/gone ]
echo poison > $C/a; echo poison > $C/both; echo mine > $C/c; rm $C/gone; mkdir $C/d; echo deep > $C/d/e
test ! -e "$STORE" && test ! -e "$UPPER"
echo wrote`)
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("the first command (%d): %s", code, out)
	}
	out, code = run(runUpper, `set -e
[ "$(cat $C/a)" = poison ] && [ "$(cat $C/c)" = mine ] && [ "$(cat $C/d/e)" = deep ] && [ ! -e $C/gone ]
echo kept`)
	if code != 0 || !strings.Contains(out, "kept") {
		t.Fatalf("the run's next command does not see what it wrote (%d): %s", code, out)
	}
	for name, want := range map[string]string{"older/a": "old\n", "older/gone": "x\n", "older/both": "under\n", "newer/both": "over\n"} {
		if got, err := os.ReadFile(filepath.Join(store, name)); err != nil || string(got) != want {
			t.Errorf("the layer's %s is %q (%v), want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"older/c", "newer/c", "older/d", "newer/d"} {
		if _, err := os.Lstat(filepath.Join(store, name)); err == nil {
			t.Errorf("the command wrote %s into a layer", name)
		}
	}
	out, code = run(filepath.Join(t.TempDir(), "next"), `set -e
[ "$(cat $C/a)" = old ] && [ "$(cat $C/both)" = over ] && [ -e $C/gone ] && [ ! -e $C/c ] && [ ! -e $C/d ]
echo clean`)
	if code != 0 || !strings.Contains(out, "clean") {
		t.Fatalf("another upper folder sees a write of the first (%d): %s", code, out)
	}
	// No layer: the cache starts empty, and still takes writes.
	p := Policy{Write: []string{ws, tmp}, Caches: []Cache{{At: filepath.Join(tmp, "npm"), Upper: filepath.Join(t.TempDir(), "u")}}}
	UpperFolders(p.Caches[0].Upper, 0)
	res, err := Command{Argv: []string{"bash", "-c", `set -e; [ -z "$(ls -A ` + p.Caches[0].At + `)" ]; echo x > ` + p.Caches[0].At + `/f; echo empty`}, Dir: ws, Env: []string{"PATH=/usr/bin:/bin"},
		Confine: &Confinement{Policy: p, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
	if err != nil || res.Code != 0 || !strings.Contains(string(res.Output), "empty") {
		t.Fatalf("a cache without layers: %v %d %s", err, res.Code, res.Output)
	}
}

// A cache folder the overlay's options cannot hold is refused by name
// before anything runs.
func TestACacheFolderMustBePlain(t *testing.T) {
	for _, c := range []Cache{
		{At: "/tmp/run/cache", Upper: "/data/run,1/caches"},
		{At: "/tmp/run/cache", Upper: "/data/u", Layers: []string{"/data/layers/a:b"}},
		{At: "cache", Upper: "/data/u"},
	} {
		if err := c.check(); err == nil {
			t.Errorf("%+v was taken", c)
		}
		if _, err := Main([]string{"--init", "--cache", c.flag(), "--", "true"}, &strings.Builder{}); err == nil && !strings.Contains(c.Upper, ",") {
			t.Errorf("the helper took %+v", c)
		}
	}
	c, err := parseCache(Cache{At: "/a", Upper: "/u", Layers: []string{"/l1", "/l2"}}.flag())
	if err != nil || c.At != "/a" || c.Upper != "/u" || strings.Join(c.Layers, " ") != "/l1 /l2" {
		t.Fatalf("a cache flag does not read back: %+v %v", c, err)
	}
}

// The init mounts the caches with two capabilities more, which the
// overlay keeps for its own work in the upper folder: the command has no
// capability at all, and through the overlay it still cannot read a file
// of a layer whose mode closes it, nor write into one.
func TestTheCachesLendTheCommandNoCapability(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	root := t.TempDir()
	os.Chmod(root, 0o755)
	ws, tmp, layer := filepath.Join(root, "ws"), filepath.Join(root, "tmp"), filepath.Join(t.TempDir(), "layer")
	for _, d := range []string{ws, tmp, layer} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(layer, "closed"), []byte("secret\n"), 0)
	os.Chmod(filepath.Join(layer, "closed"), 0)
	if os.Geteuid() == 0 {
		uid, gid := commandID()
		filepath.Walk(layer, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	}
	upper := filepath.Join(t.TempDir(), "upper")
	at := filepath.Join(tmp, "cache", "go-build")
	p := Policy{Write: []string{ws, tmp}, Caches: []Cache{{At: at, Layers: []string{layer}, Upper: upper}}}
	script := `for f in CapInh CapPrm CapEff CapBnd CapAmb; do grep "^$f:" /proc/self/status; done
cat ` + at + `/closed && echo READ
echo x > ` + at + `/closed && echo WROTE
true`
	res, err := Command{Argv: []string{"bash", "-c", script}, Dir: ws, Env: []string{"PATH=/usr/bin:/bin"},
		Confine: &Confinement{Policy: p, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
	if err != nil || res.Code != 0 {
		t.Fatalf("%v %d: %s", err, res.Code, res.Output)
	}
	out := string(res.Output)
	caps := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Cap") {
			caps++
			if !strings.HasSuffix(line, "0000000000000000") {
				t.Errorf("the command holds a capability: %s", line)
			}
		}
	}
	if caps != 5 || strings.Contains(out, "READ") || strings.Contains(out, "WROTE") || strings.Contains(out, "secret") {
		t.Fatalf("through the overlay the command read or wrote a closed file, or its capabilities were not shown:\n%s", out)
	}
}
