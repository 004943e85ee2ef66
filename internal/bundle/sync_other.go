//go:build !linux

package bundle

import (
	"fmt"
	"os"
	"path/filepath"
)

// Sync makes everything written in dir durable: each file, then the folder.
func Sync(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return syncDir(dir)
}
