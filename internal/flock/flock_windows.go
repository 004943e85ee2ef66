package flock

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// FolderLock is the file in a folder whose lock is the folder's on
// Windows, which refuses LockFileEx on a folder's handle
// (ERROR_INVALID_PARAMETER); it is made when missing. Its name starts with
// a dot, as the files proctor passes over in its folders do.
const FolderLock = ".lock"

// openExisting opens a file to lock it, or a folder's FolderLock.
func openExisting(path string) (*os.File, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return os.OpenFile(filepath.Join(path, FolderLock), os.O_CREATE|os.O_RDWR, 0o600)
	}
	return os.Open(path)
}

// lock takes LockFileEx's lock on the first byte of f: exclusive or
// shared, waiting or not (ErrLocked when another holder has it). Windows
// drops it when the handle closes, however the process ends.
func lock(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &windows.Overlapped{})
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrLocked
	}
	return err
}
