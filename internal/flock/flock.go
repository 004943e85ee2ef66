// Package flock holds advisory locks on files and folders (flock(2)): the
// kernel drops a lock when its process dies, however it dies, so no lock
// goes stale. One way to take one — at once, or waiting until a context
// ends — for every lock proctor takes (a run's review, a session, a pack,
// the git cache, the rules file, the database, a suite, a run's scratch).
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ErrLocked is returned by TryLock when another holder has the lock.
var ErrLocked = errors.New("held by another process")

// Lock is a lock held on a file or folder.
type Lock struct{ f *os.File }

// Unlock releases the lock.
func (l *Lock) Unlock() error { return l.f.Close() }

// open opens path to lock it: a folder or file as it is (on Windows a
// folder's lock file, folderLock), or with create a file made if missing
// (mode 0600).
func open(path string, create bool) (*os.File, error) {
	if create {
		return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	}
	return openExisting(path)
}

// TryLock takes the exclusive lock on path without waiting: ErrLocked when
// another holder has it.
func TryLock(path string, create bool) (*Lock, error) {
	f, err := open(path, create)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := TryFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f}, nil
}

// TryShared takes a shared lock on path without waiting — many holders
// may share it, and TryLock fails while one does: ErrLocked when another
// holder has the exclusive lock.
func TryShared(path string) (*Lock, error) {
	f, err := open(path, false)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lock(f, false, false); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f}, nil
}

// File is the file or folder the lock is held on, open.
func (l *Lock) File() *os.File { return l.f }

// TryFile takes the exclusive lock on an open file without waiting:
// ErrLocked when another holder has it. Closing f lets it go.
func TryFile(f *os.File) error {
	if err := lock(f, true, false); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

// Wait takes the exclusive lock on path, waiting for its holder to let go
// until ctx ends (then the error is ctx's cause). It does not poll: the
// wait is the kernel's, in a goroutine that lets the lock go at once if it
// comes after ctx has ended.
func Wait(ctx context.Context, path string, create bool) (*Lock, error) {
	if l, err := TryLock(path, create); !errors.Is(err, ErrLocked) {
		return l, err
	}
	f, err := open(path, create)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	got := make(chan error, 1)
	go func() { got <- lock(f, true, true) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return &Lock{f}, nil
	case <-ctx.Done():
		go func() {
			<-got // the kernel's wait ends when the holder lets go; then let go too
			f.Close()
		}()
		return nil, fmt.Errorf("lock %s: %w", path, context.Cause(ctx))
	}
}

// Held says whether another holder has the lock on path now (a reader's
// question: is the run that writes this folder still alive?).
func Held(path string) bool {
	f, err := open(path, false)
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(lock(f, false, false), ErrLocked)
}
