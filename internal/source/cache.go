package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
)

// Cache is a folder of bare mirrors, one per repository URL, that runs of
// the same repository share: each mirror is locked (flock) while a run
// fetches into it or from it, so concurrent runs (and processes) are safe.
type Cache struct {
	Dir string // e.g. <data>/cache/git
}

// DataCache is the cache of a data folder: <data>/cache/git.
func DataCache(dataDir string) *Cache { return &Cache{Dir: filepath.Join(dataDir, "cache", "git")} }

// Mirror is one repository's mirror.
type Mirror struct {
	URL      string    `json:"url"`
	Path     string    `json:"-"`
	LastUsed time.Time `json:"last_used"`
	Bytes    int64     `json:"-"`
}

// mirrorName is the folder of a URL's mirror: a digest, so that no URL
// becomes a path.
func mirrorName(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:12]) + ".git"
}

// lock opens (making it when new) url's mirror, locked until unlock.
func (c *Cache) lock(url string) (string, func(), error) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("git cache %s: %w", c.Dir, err)
	}
	path := filepath.Join(c.Dir, mirrorName(url))
	unlock, err := lockMirror(path)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(path, "HEAD")); err != nil {
		os.RemoveAll(path) // a mirror cut short by a crash starts again
		err := os.MkdirAll(path, 0o700)
		if err == nil {
			_, gerr := Fetcher{}.git(context.Background(), path, "init", "-q", "--bare")
			if gerr != nil {
				err = gerr
			}
		}
		if err != nil {
			unlock()
			return "", nil, fmt.Errorf("git cache: make the mirror of %s: %w", url, err)
		}
	}
	m := Mirror{URL: url, LastUsed: time.Now().UTC()}
	data, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(path, "proctor.json"), data, 0o600)
	return path, unlock, nil
}

// lockMirror takes the lock of the mirror at path. The lock file stays when
// the mirror is pruned: removing it would let a run that waits on the old
// file and a run that makes a new one hold "the" lock together.
func lockMirror(path string) (unlock func(), err error) {
	l, err := flock.Wait(context.Background(), path+".lock", true)
	if err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	return func() { l.Unlock() }, nil
}

// List is every mirror of the cache, the most recently used first.
func (c *Cache) List() ([]Mirror, error) {
	entries, err := os.ReadDir(c.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("git cache %s: %w", c.Dir, err)
	}
	var out []Mirror
	for _, e := range entries {
		if !e.IsDir() || filepath.Ext(e.Name()) != ".git" {
			continue
		}
		path := filepath.Join(c.Dir, e.Name())
		m := Mirror{Path: path, URL: "(unknown)"}
		if data, err := os.ReadFile(filepath.Join(path, "proctor.json")); err == nil {
			json.Unmarshal(data, &m)
		}
		filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					m.Bytes += info.Size()
				}
			}
			return nil
		})
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.After(out[j].LastUsed) })
	return out, nil
}

// Prune removes the mirrors not used since before, each under its lock (a
// mirror in use by a run waits for it), and returns them.
func (c *Cache) Prune(before time.Time) ([]Mirror, error) {
	ms, err := c.List()
	if err != nil {
		return nil, err
	}
	var removed []Mirror
	for _, m := range ms {
		if !m.LastUsed.Before(before) {
			continue
		}
		unlock, err := lockMirror(m.Path)
		if err != nil {
			return removed, err
		}
		// A run may have used it while this waited for the lock.
		var now Mirror
		if data, err := os.ReadFile(filepath.Join(m.Path, "proctor.json")); err == nil && json.Unmarshal(data, &now) == nil && !now.LastUsed.Before(before) {
			unlock()
			continue
		}
		err = os.RemoveAll(m.Path)
		unlock()
		if err != nil {
			return removed, fmt.Errorf("git cache: remove %s: %w", m.Path, err)
		}
		removed = append(removed, m)
	}
	return removed, nil
}
