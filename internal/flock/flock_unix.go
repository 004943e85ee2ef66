//go:build !windows

package flock

import (
	"errors"
	"os"
	"syscall"
)

// openExisting opens a file or folder to lock it: flock(2) locks either.
func openExisting(path string) (*os.File, error) { return os.Open(path) }

// lock takes flock(2)'s lock on f: exclusive or shared, waiting or not
// (ErrLocked when another holder has it).
func lock(f *os.File, exclusive, wait bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	err := syscall.Flock(int(f.Fd()), how)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
