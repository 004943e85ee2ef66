// Package osfile opens the short-lived regular files of a run — the files
// its recorder writes, a fixture copied into its workspace, a bundle's
// files read into a pack — with one system call each. os.OpenFile sets
// every file up for Go's poller (fcntl to make it non-blocking, an
// epoll_ctl that fails for a regular file, fcntl to make it blocking
// again): four calls more for each file, which a suite of small runs makes
// tens of thousands of times.
package osfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Open opens path as os.OpenFile does, for a file that is not polled (a
// regular file or a folder; O_CLOEXEC is added).
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != syscall.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// CreateTemp makes a new file in dir, named by pattern with its last "*"
// replaced by a random string, as os.CreateTemp does (mode 0600).
func CreateTemp(dir, pattern string) (*os.File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	if strings.ContainsRune(pattern, filepath.Separator) {
		return nil, &fs.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains a path separator")}
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 36)+suffix)
		f, err := Open(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// SyncDir makes what was created in, renamed into or removed from the
// folder dir durable.
func SyncDir(dir string) error {
	d, err := Open(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
