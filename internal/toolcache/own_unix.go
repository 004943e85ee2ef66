//go:build unix

package toolcache

import (
	"os"
	"syscall"
)

// ownLayer reports whether a layer's folder is proctor's user's and no
// one else may write it.
func ownLayer(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() || info.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
