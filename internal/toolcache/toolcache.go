// Package toolcache keeps the warm toolchain caches — Go's build and
// module caches, npm's and pip's — that confined commands see copy-on-write. The store is
// a folder of layers: each layer is what one piece of work wrote into the
// caches, kept read-only once it is done, under the key of that work. A
// run holds only the layers of the keys it names (shared locks) — the
// toolchain's standard library, which proctor builds from trusted inputs
// alone, and its own scenario's warm, never another scenario's — and
// mounts them, newest on top, under folders of its own; nothing a run
// writes ever becomes a layer. The layers together are bounded in bytes
// and in number: the oldest that no run holds are removed when a new one
// pushes the store past a bound.
package toolcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
)

// Kind is a toolchain cache: its folder in a layer, and the variable that
// points its tool at it.
type Kind struct{ Name, Env string }

// Kinds are the caches proctor keeps warm.
func Kinds() []Kind {
	return []Kind{{"go-build", "GOCACHE"}, {"go-mod", "GOMODCACHE"}, {"npm", "npm_config_cache"}, {"pip", "PIP_CACHE_DIR"}}
}

// The bounds when none is given.
const (
	DefaultMaxBytes  = 4 << 30
	DefaultMaxLayers = 32
)

// Store is the folder of layers (~/.cache/proctor/toolcache by default).
type Store struct {
	Dir       string
	MaxBytes  int64 // the layers together; 0: DefaultMaxBytes
	MaxLayers int   // 0: DefaultMaxLayers
	// Remove removes a warm a run left or dropped, taking back what the
	// run's id made there (sandbox.RemoveAll); nil: osfile.RemoveAll.
	Remove func(path string) error
}

// remove removes path with s.Remove.
func (s Store) remove(path string) error {
	if s.Remove != nil {
		return s.Remove(path)
	}
	return osfile.RemoveAll(path)
}

// In is the store in a folder: an absolute path, made proctor's user's
// alone (0700) when it is not there, narrowed to 0700 when others may
// read it (a layer's files are open to all, and a setup's cache entries
// are not redacted), and refused when it is not theirs alone — whoever
// could write it could plant a layer.
func In(dir string) (Store, error) {
	if !filepath.IsAbs(dir) {
		return Store{}, fmt.Errorf("toolchain cache folder %q: want an absolute path", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Store{}, fmt.Errorf("toolchain cache folder %s: %w", dir, err)
	}
	if !ownLayer(dir) {
		return Store{}, fmt.Errorf("toolchain cache folder %s: it is not this user's alone (another user owns it, or may write it): chmod go-w it, or name another", dir)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return Store{}, fmt.Errorf("toolchain cache folder %s: make it this user's alone: %w", dir, err)
	}
	return Store{Dir: dir}, nil
}

func (s Store) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s Store) maxLayers() int {
	if s.MaxLayers > 0 {
		return s.MaxLayers
	}
	return DefaultMaxLayers
}

// A layer's folder is named for when it was kept and the key of the work
// that filled it: 00001765094400000000000-<key>. A folder whose name
// starts with a dot is not a layer (yet, or any more).
const sizeFile = ".size"

// ParseSize reads a bound on the store: bytes, or a number with KiB,
// MiB or GiB (or K, M, G).
func ParseSize(v string) (int64, error) {
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a size such as 4GiB, 512MiB or 1000000 (bytes), more than 0")
	}
	return n * mult, nil
}

// ValidKey reports whether key can name a layer: lower-case hex, 8 to 64
// characters (a hash of the work).
func ValidKey(key string) bool {
	if len(key) < 8 || len(key) > 64 {
		return false
	}
	for _, c := range key {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// layers are the store's layer folders' names, oldest first.
func (s Store) layers() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the toolchain cache %s: %w", s.Dir, err)
	}
	var out []string
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && !strings.HasPrefix(name, ".") && strings.Contains(name, "-") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Warmed reports whether a layer of key's work is in the store.
func (s Store) Warmed(key string) bool {
	names, _ := s.layers()
	for _, n := range names {
		if strings.HasSuffix(n, "-"+key) {
			return true
		}
	}
	return false
}

// Held is a run's hold on the layers it sees: none of them is removed
// until Release.
type Held struct {
	dirs  []string            // newest first
	kinds map[string][]string // each kind's folders of them, newest first
	locks []*flock.Lock
}

// Hold takes the store's layers of keys for a run, newest first, at most
// MaxLayers of them. A layer being removed as it is taken is left out, and
// so is one that is not proctor's user's alone (another user could have
// changed it: a store restored from elsewhere keeps its owner and modes).
func (s Store) Hold(keys ...string) (*Held, error) {
	names, err := s.layers()
	if err != nil {
		return nil, err
	}
	h := &Held{}
	for i := len(names) - 1; i >= 0 && len(h.dirs) < s.maxLayers(); i-- {
		_, key, _ := strings.Cut(names[i], "-")
		if !slices.Contains(keys, key) {
			continue
		}
		dir := filepath.Join(s.Dir, names[i])
		if !ownLayer(dir) {
			continue
		}
		l, err := flock.TryShared(dir)
		if err != nil {
			continue // being removed, or gone
		}
		// Removed between the listing and the lock: the lock is on a
		// folder that is no longer there.
		if now, err := os.Stat(dir); err != nil || !sameFile(l.File(), now) {
			l.Unlock()
			continue
		}
		h.dirs, h.locks = append(h.dirs, dir), append(h.locks, l)
	}
	// Worked out once: a run's every command asks.
	h.kinds = map[string][]string{}
	for _, k := range Kinds() {
		for _, d := range h.dirs {
			p := filepath.Join(d, k.Name)
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				h.kinds[k.Name] = append(h.kinds[k.Name], p)
			}
		}
	}
	return h, nil
}

func sameFile(f *os.File, info fs.FileInfo) bool {
	held, err := f.Stat()
	return err == nil && os.SameFile(held, info)
}

// For are the folders of the held layers that hold the cache kind, newest
// first: the lower layers of its overlay.
func (h *Held) For(kind string) []string {
	if h == nil {
		return nil
	}
	return h.kinds[kind]
}

// Release lets the layers go.
func (h *Held) Release() {
	if h == nil {
		return
	}
	for _, l := range h.locks {
		l.Unlock()
	}
	h.dirs, h.kinds, h.locks = nil, nil, nil
}

// Warm is a layer being filled by trusted work. Upper(kind) is the upper
// folder of that kind's overlay (the sandbox's Cache.Upper); Keep makes
// what the work wrote a layer, Drop throws it away.
type Warm struct {
	s    Store
	key  string
	dir  string
	work *flock.Lock // on dir: a warm whose process died is removed by the next
	hold *flock.Lock // on the key: one warm of a key at a time
}

// Begin starts a layer for key's work. It waits while another process
// warms the same key, and returns nil when a layer of key is there (then
// there is nothing to do). Warms that a dead process left are removed.
func (s Store) Begin(ctx context.Context, key string) (*Warm, error) {
	if !ValidKey(key) {
		return nil, fmt.Errorf("toolchain cache key %q: want 8 to 64 lower-case hex digits", key)
	}
	keys := filepath.Join(s.Dir, ".keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return nil, fmt.Errorf("make the toolchain cache %s: %w", s.Dir, err)
	}
	hold, err := flock.Wait(ctx, filepath.Join(keys, key), true)
	if err != nil {
		return nil, fmt.Errorf("wait for the toolchain cache's warm of %s: %w", key, err)
	}
	if s.Warmed(key) {
		hold.Unlock()
		return nil, nil
	}
	s.RemoveDead()
	dir, err := os.MkdirTemp(s.Dir, ".warm-")
	if err != nil {
		hold.Unlock()
		return nil, fmt.Errorf("start a toolchain cache layer: %w", err)
	}
	work, err := flock.TryLock(dir, false)
	if err != nil {
		os.RemoveAll(dir)
		hold.Unlock()
		return nil, fmt.Errorf("start a toolchain cache layer: %w", err)
	}
	os.Chmod(dir, 0o755) // the sandbox's id reads the layer through its overlay
	return &Warm{s: s, key: key, dir: dir, work: work, hold: hold}, nil
}

// Upper is the folder the kind's overlay writes into while the work runs.
func (w *Warm) Upper(kind string) string { return filepath.Join(w.dir, "."+kind) }

// Files is the folder, in Upper(kind), whose files Keep makes the layer's:
// where work that writes a cache itself, with no overlay, writes it.
func (w *Warm) Files(kind string) string { return filepath.Join(w.Upper(kind), "upper") }

// Keep makes what the work wrote a layer of the store — each kind's
// upper folder, without the overlay's work folder — and then removes the
// oldest layers no run holds while the store is past a bound.
func (w *Warm) Keep() error {
	defer w.end()
	var size int64
	for _, k := range Kinds() {
		upper := w.Upper(k.Name)
		if _, err := os.Stat(upper); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		n, entries, err := du(w.Files(k.Name))
		if err != nil {
			return fmt.Errorf("keep the toolchain cache layer %s: %w", w.key, err)
		}
		if entries > 0 {
			if err := os.Rename(w.Files(k.Name), filepath.Join(w.dir, k.Name)); err != nil {
				return fmt.Errorf("keep the toolchain cache layer %s: %w", w.key, err)
			}
			size += n
		}
		if err := osfile.RemoveAll(upper); err != nil {
			return fmt.Errorf("keep the toolchain cache layer %s: %w", w.key, err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.dir, sizeFile), []byte(strconv.FormatInt(size, 10)), 0o644); err != nil {
		return fmt.Errorf("keep the toolchain cache layer %s: %w", w.key, err)
	}
	name := fmt.Sprintf("%020d-%s", time.Now().UnixNano(), w.key)
	if err := os.Rename(w.dir, filepath.Join(w.s.Dir, name)); err != nil {
		return fmt.Errorf("keep the toolchain cache layer %s: %w", w.key, err)
	}
	w.dir = ""
	return w.s.Evict()
}

// Drop throws away what the work wrote; after Keep it does nothing.
func (w *Warm) Drop() { w.end() }

func (w *Warm) end() {
	if w.dir != "" {
		w.s.remove(w.dir)
		w.dir = ""
	}
	if w.work != nil {
		w.work.Unlock()
		w.hold.Unlock()
		w.work, w.hold = nil, nil
	}
}

// RemoveDead removes the warms of processes that died (and layers whose
// removal a dead process began): a runner's runs do as they start, at
// most every 30 s (run's Sandbox.sweep), and a warm as it begins.
func (s Store) RemoveDead() {
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".warm-") && !strings.HasPrefix(e.Name(), ".gone-") {
			continue
		}
		p := filepath.Join(s.Dir, e.Name())
		if l, err := flock.TryLock(p, false); err == nil {
			s.remove(p)
			l.Unlock()
		}
	}
}

// Evict removes the oldest layers that no run holds while the layers
// together are over MaxBytes or more than MaxLayers.
func (s Store) Evict() error {
	names, err := s.layers()
	if err != nil {
		return err
	}
	sizes := make([]int64, len(names))
	var total int64
	for i, n := range names {
		sizes[i] = s.layerBytes(n)
		total += sizes[i]
	}
	count := len(names)
	for i, n := range names {
		if total <= s.maxBytes() && count <= s.maxLayers() {
			break
		}
		dir := filepath.Join(s.Dir, n)
		l, err := flock.TryLock(dir, false)
		if err != nil {
			continue // a run holds it
		}
		gone := filepath.Join(s.Dir, ".gone-"+n)
		err = os.Rename(dir, gone)
		l.Unlock()
		if err != nil {
			return fmt.Errorf("remove the toolchain cache layer %s: %w", n, err)
		}
		if err := osfile.RemoveAll(gone); err != nil {
			return fmt.Errorf("remove the toolchain cache layer %s: %w", n, err)
		}
		total -= sizes[i]
		count--
	}
	return nil
}

// Size is the bytes of the layers together, and how many there are.
func (s Store) Size() (bytes int64, layers int, err error) {
	names, err := s.layers()
	for _, n := range names {
		bytes += s.layerBytes(n)
	}
	return bytes, len(names), err
}

// layerBytes is what the layer's size file says it holds (0 when unreadable).
func (s Store) layerBytes(name string) int64 {
	raw, _ := os.ReadFile(filepath.Join(s.Dir, name, sizeFile))
	v, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return v
}

// du is the bytes of the files below dir, and how many files and folders
// are there.
func du(dir string) (bytes int64, entries int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if p == dir {
			return nil
		}
		entries++
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
			}
		}
		return nil
	})
	return bytes, entries, err
}
