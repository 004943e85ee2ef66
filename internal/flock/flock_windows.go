package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

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
