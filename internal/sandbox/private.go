package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
)

// PrivateFolder makes a private folder named name in root (the data
// folder's tmp/: a run's temp folder and cache uppers, a probe's folder),
// locked while its maker works; release removes it. Each folder is made
// and locked under a lock of root's, and the folders of root that no
// process holds — left by a proctor killed with -9, in a warm, a probe or
// a run — are removed under that same lock first: none is ever seen
// unlocked between its making and its lock. What a run's id made in them
// is taken back through helper, the proctor binary (RemoveAll).
func PrivateFolder(ctx context.Context, root, name, helper string) (dir string, release func(), err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", nil, fmt.Errorf("make the private folder %s: %w", root, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	guard, err := flock.Wait(ctx, root, false)
	if err != nil {
		return "", nil, fmt.Errorf("make a private folder in %s: %w", root, err)
	}
	defer guard.Unlock()
	removeLeft(ctx, root, helper)
	if name == "" {
		dir, err = os.MkdirTemp(root, "probe-")
	} else {
		dir = filepath.Join(root, name)
		err = os.Mkdir(dir, 0o700)
	}
	if err != nil {
		return "", nil, fmt.Errorf("make a private folder in %s: %w", root, err)
	}
	l, err := flock.TryLock(dir, false)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("make the private folder %s: %w", dir, err)
	}
	return dir, func() { RemoveAll(context.Background(), helper, dir); l.Unlock() }, nil
}

// RemoveLeft removes the private folders of root that no process holds
// (a run's next run does this as it starts, whether or not it makes one),
// taking back what a run's id made there through helper (RemoveAll).
func RemoveLeft(ctx context.Context, root, helper string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	guard, err := flock.Wait(ctx, root, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove what killed runs left in %s: %w", root, err)
	}
	defer guard.Unlock()
	removeLeft(ctx, root, helper)
	return nil
}

// removeLeft removes root's folders that no process holds; the caller
// holds root's lock.
func removeLeft(ctx context.Context, root, helper string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue // not a private folder (Windows keeps root's lock in .lock)
		}
		p := filepath.Join(root, e.Name())
		if l, err := flock.TryLock(p, false); err == nil {
			RemoveAll(ctx, helper, p) // its maker is gone
			l.Unlock()
		}
	}
}
