package bundle

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sync makes everything written under dir durable with one syncfs call,
// which flushes the file system that holds dir: one barrier for all of a
// run's files instead of an fsync per file.
func Sync(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
