//go:build !windows

package osfile

import (
	"os"
	"syscall"
)

// openDir opens a folder (and nothing else) for syncDir.
const openDir = syscall.O_DIRECTORY

// syncDir makes the names in the open folder d durable.
func syncDir(d *os.File) error { return d.Sync() }

// NoFollow are the open flags that refuse a link (ELOOP) and never wait
// on a fifo: a file that was regular when listed may have been swapped.
const NoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
