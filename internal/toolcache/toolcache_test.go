package toolcache_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/toolcache"
)

// warm fills a layer of key as a confined command would through its
// overlay: files in the kinds' upper folders, beside the overlay's work
// folder with no mode.
func warm(t *testing.T, s toolcache.Store, key string, files map[string]string) {
	t.Helper()
	w, err := s.Begin(context.Background(), key)
	if err != nil || w == nil {
		t.Fatalf("Begin(%s) = %v, %v", key, w, err)
	}
	for _, k := range toolcache.Kinds() {
		for _, d := range []string{"upper", "work/work"} {
			os.MkdirAll(filepath.Join(w.Upper(k.Name), d), 0o700)
		}
		os.Chmod(filepath.Join(w.Upper(k.Name), "work", "work"), 0)
	}
	for name, content := range files {
		kind, rest, _ := strings.Cut(name, "/")
		p := filepath.Join(w.Upper(kind), "upper", rest)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Keep(); err != nil {
		t.Fatal(err)
	}
}

func TestLayersAreKeptNewestOnTopAndHeld(t *testing.T) {
	s := toolcache.Store{Dir: filepath.Join(t.TempDir(), "toolcache")}
	h, err := s.Hold()
	if err != nil || len(h.For("go-build")) != 0 {
		t.Fatalf("an empty store holds %v (%v)", h.For("go-build"), err)
	}
	h.Release()
	warm(t, s, "aaaaaaaa", map[string]string{"go-build/00/a-d": "stdlib"})
	time.Sleep(time.Millisecond)
	warm(t, s, "bbbbbbbb", map[string]string{"go-build/01/b-d": "fixture", "npm/_cacache/x": "left-pad"})
	if !s.Warmed("aaaaaaaa") || !s.Warmed("bbbbbbbb") || s.Warmed("cccccccc") {
		t.Fatal("Warmed does not say which keys have a layer")
	}
	h, err = s.Hold("aaaaaaaa", "bbbbbbbb")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	gob := h.For("go-build")
	if len(gob) != 2 || !strings.Contains(gob[0], "bbbbbbbb") || !strings.Contains(gob[1], "aaaaaaaa") {
		t.Fatalf("go-build layers %v, want b's then a's", gob)
	}
	if npm := h.For("npm"); len(npm) != 1 || !strings.Contains(npm[0], "bbbbbbbb") {
		t.Fatalf("npm layers %v, want only b's (a wrote none)", npm)
	}
	if got, err := os.ReadFile(filepath.Join(gob[1], "00", "a-d")); err != nil || string(got) != "stdlib" {
		t.Fatalf("the layer's file: %q %v", got, err)
	}
	if pip := h.For("pip"); len(pip) != 0 {
		t.Fatalf("pip layers %v: no work wrote one", pip)
	}
	// The overlay's work folders are not part of a layer.
	if _, err := os.Stat(filepath.Join(filepath.Dir(gob[0]), ".go-build")); err == nil {
		t.Fatal("a kept layer still has its overlay's folders")
	}
	bytes, layers, err := s.Size()
	if err != nil || layers != 2 || bytes != int64(len("stdlib")+len("fixture")+len("left-pad")) {
		t.Fatalf("Size = %d bytes in %d layers (%v)", bytes, layers, err)
	}
}

// A run holds only the layers of the keys it names — its own scenario's
// and the trusted standard library's, never another scenario's — and no
// layer another user may write (a store restored from elsewhere).
func TestARunHoldsOnlyTheLayersOfItsKeys(t *testing.T) {
	s := toolcache.Store{Dir: filepath.Join(t.TempDir(), "toolcache")}
	warm(t, s, "57d0057d", map[string]string{"go-build/std": "stdlib"})
	warm(t, s, "aaaaaaaa", map[string]string{"go-build/mine": "mine"})
	warm(t, s, "bbbbbbbb", map[string]string{"go-build/poison": "another scenario's"})
	h, err := s.Hold("57d0057d", "aaaaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	gob := h.For("go-build")
	h.Release()
	if len(gob) != 2 || strings.Contains(strings.Join(gob, " "), "bbbbbbbb") {
		t.Fatalf("held %v, want the std layer and a's only", gob)
	}
	layers, _ := filepath.Glob(filepath.Join(s.Dir, "*-aaaaaaaa"))
	os.Chmod(layers[0], 0o777)
	h, _ = s.Hold("57d0057d", "aaaaaaaa")
	gob = h.For("go-build")
	h.Release()
	if len(gob) != 1 || !strings.Contains(gob[0], "57d0057d") {
		t.Fatalf("held %v: a layer anyone may write was held", gob)
	}
}

// The store stays within its bounds: the oldest layers go first, but never
// one a run holds.
func TestTheOldestLayersNoRunHoldsAreRemoved(t *testing.T) {
	s := toolcache.Store{Dir: filepath.Join(t.TempDir(), "toolcache"), MaxBytes: 2500, MaxLayers: 3}
	big := strings.Repeat("x", 1000)
	warm(t, s, "00000001", map[string]string{"go-build/a": big})
	held, err := s.Hold("00000001")
	if err != nil {
		t.Fatal(err)
	}
	warm(t, s, "00000002", map[string]string{"go-build/b": big})
	warm(t, s, "00000003", map[string]string{"go-build/c": big})
	// Past 2500 bytes: the oldest, 1, is held, so 2 goes.
	if !s.Warmed("00000001") || s.Warmed("00000002") || !s.Warmed("00000003") {
		t.Fatalf("after the third layer: 1 %v 2 %v 3 %v, want 1 (held) and 3", s.Warmed("00000001"), s.Warmed("00000002"), s.Warmed("00000003"))
	}
	held.Release()
	warm(t, s, "00000004", map[string]string{"go-build/d": "small"})
	warm(t, s, "00000005", map[string]string{"go-build/e": "small"})
	// Past 3 layers (and 2500 bytes): 1 goes now that nothing holds it.
	if s.Warmed("00000001") || !s.Warmed("00000003") || !s.Warmed("00000004") || !s.Warmed("00000005") {
		t.Fatal("the oldest layer was not the one removed")
	}
	if bytes, layers, _ := s.Size(); bytes > s.MaxBytes || layers > s.MaxLayers {
		t.Fatalf("the store is past its bounds: %d bytes in %d layers", bytes, layers)
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".gone-") || strings.HasPrefix(e.Name(), ".warm-") {
			t.Errorf("%s was left in the store", e.Name())
		}
	}
}

// One warm of a key at a time: a second waits for the first, and then has
// nothing to do; a warm dropped leaves nothing, and one of a dead process
// is removed by the next.
func TestAKeyIsWarmedOnce(t *testing.T) {
	s := toolcache.Store{Dir: filepath.Join(t.TempDir(), "toolcache")}
	first, err := s.Begin(context.Background(), "abcdef01")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Begin(ctx, "abcdef01"); err == nil {
		t.Fatal("a second warm of a key did not wait for the first")
	}
	done := make(chan *toolcache.Warm, 1)
	go func() {
		w, err := s.Begin(context.Background(), "abcdef01")
		if err != nil {
			t.Error(err)
		}
		done <- w
	}()
	os.MkdirAll(filepath.Join(first.Upper("go-build"), "upper"), 0o700)
	os.WriteFile(filepath.Join(first.Upper("go-build"), "upper", "f"), []byte("x"), 0o644)
	if err := first.Keep(); err != nil {
		t.Fatal(err)
	}
	if w := <-done; w != nil {
		t.Fatal("the second warm of a key that is warm now has work to do")
	}
	w, err := s.Begin(context.Background(), "abcdef02")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(w.Upper("npm"), "upper"), 0o700)
	w.Drop()
	if s.Warmed("abcdef02") {
		t.Fatal("a dropped warm became a layer")
	}
	// A warm whose process died (no lock on it) goes with the next Begin.
	dead := filepath.Join(s.Dir, ".warm-dead")
	os.MkdirAll(filepath.Join(dead, "x"), 0o700)
	w, err = s.Begin(context.Background(), "abcdef03")
	if err != nil {
		t.Fatal(err)
	}
	w.Drop()
	if _, err := os.Stat(dead); err == nil {
		t.Fatal("a dead warm was left")
	}
	for _, key := range []string{"", "short", "ABCDEF01", "../../etc", strings.Repeat("a", 65)} {
		if _, err := s.Begin(context.Background(), key); err == nil {
			t.Errorf("Begin(%q) was taken", key)
		}
	}
}

// A store's folder is made this user's alone (or narrowed to it), and
// one another user could write is refused.
func TestAStoreInAFolderOfItsOwn(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name, dir string
		mode      os.FileMode
		want      string
	}{
		{"made", filepath.Join(root, "ci-cache", "toolcache"), 0, ""},
		{"this user's", filepath.Join(root, "mine"), 0o700, ""},
		{"others may read it", filepath.Join(root, "readable"), 0o755, ""},
		{"others may write it", filepath.Join(root, "open"), 0o777, "not this user's alone"},
		{"relative", "toolcache", 0, "want an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode != 0 {
				os.Mkdir(tc.dir, tc.mode)
				os.Chmod(tc.dir, tc.mode)
			}
			s, err := toolcache.In(tc.dir)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("In(%s): %v, want %q", tc.dir, err, tc.want)
				}
				return
			}
			info, serr := os.Stat(tc.dir)
			if err != nil || s.Dir != tc.dir || serr != nil || info.Mode().Perm()&0o077 != 0 {
				t.Fatalf("In(%s): %+v %v %v", tc.dir, s, err, info.Mode())
			}
		})
	}
}
