package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// RecoverOrphans marks every orphaned run under the data folder's runs/ as
// interrupted and returns their folders.
func (r *Runner) RecoverOrphans(reason string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.DataDir, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(r.DataDir, "runs", e.Name())
		if !e.IsDir() || !bundle.Orphaned(dir) {
			continue
		}
		if err := bundle.MarkInterrupted(dir, reason, time.Now()); err != nil {
			return out, err
		}
		out = append(out, dir)
	}
	return out, nil
}
