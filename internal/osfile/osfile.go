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
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
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

// SyncDir makes what was created in, renamed into or removed from the
// folder dir durable.
func SyncDir(dir string) error {
	d, err := Open(dir, os.O_RDONLY|openDir, 0)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := syncDir(d); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// A Folder is where WriteAtomic writes, names inside it: a folder by its
// path (Path), or an *os.Root, which keeps every name inside it (a name
// from a source tree cannot lead out through a link).
type Folder interface {
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
}

// Path is the folder at a path, as a Folder.
type Path string

// OpenFile opens name in the folder (Open).
func (p Path) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return Open(filepath.Join(string(p), name), flag, perm)
}

// Rename renames oldname to newname, both in the folder.
func (p Path) Rename(oldname, newname string) error {
	return os.Rename(filepath.Join(string(p), oldname), filepath.Join(string(p), newname))
}

// Remove removes name from the folder.
func (p Path) Remove(name string) error { return os.Remove(filepath.Join(string(p), name)) }

// WriteAtomic writes what write writes to name in dir so that a reader
// sees either the old file or the whole new one: a new temporary file
// beside it (O_EXCL), given perm, renamed over it. With sync the file is
// synced before the rename and its folder after, so that the write is
// durable when WriteAtomic returns; without, a later sync of the folder's
// file system makes it so. This is proctor's one atomic write.
func WriteAtomic(dir Folder, name string, perm fs.FileMode, sync bool, write func(io.Writer) error) error {
	sub, base := filepath.Split(name)
	var tmp string
	var f *os.File
	for try := 0; ; try++ {
		tmp = sub + "." + base + ".tmp-" + strconv.FormatUint(uint64(rand.Uint32()), 36)
		var err error
		if f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			break
		} else if !errors.Is(err, fs.ErrExist) || try >= 10000 {
			return err
		}
	}
	err := write(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Rename(tmp, name)
	}
	if err != nil {
		dir.Remove(tmp)
		return err
	}
	if !sync {
		return nil
	}
	d, err := dir.OpenFile(filepath.Clean("./"+sub), os.O_RDONLY|openDir, 0)
	if err != nil {
		return fmt.Errorf("sync the folder: %w", err)
	}
	defer d.Close()
	return syncDir(d)
}

// WriteFile is WriteAtomic to a path: what write writes (Bytes, for data
// in memory) replaces the file at path whole, durably with sync.
func WriteFile(path string, perm fs.FileMode, sync bool, write func(io.Writer) error) error {
	if err := WriteAtomic(Path(filepath.Dir(path)), filepath.Base(path), perm, sync, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Bytes writes data, for WriteAtomic and WriteFile.
func Bytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// RemoveAll removes path and everything below it, as os.RemoveAll does,
// opening first the folders that have no mode for their owner (an
// overlay's work folder, a tool's read-only tree), which os.RemoveAll
// cannot empty as a user who is not root. Links are not followed.
func RemoveAll(path string) error {
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700) // before the walk reads it
		}
		return nil
	})
	return os.RemoveAll(path)
}

// Publish makes the folder dest whole or not at all: fill writes it in a
// temp folder beside dest (".NAME.tmp-*"), which is renamed into place once
// fill is done, and dest's parent synced. A dest that is there already is
// not replaced (the error is the rename's); the temp folder never stays.
func Publish(dest string, fill func(tmp string) error) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return err
	}
	defer RemoveAll(tmp) // gone once renamed
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(dest))
}
