package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ID is the host user and group id a confined command runs as when
// proctor runs as root: an id no account has (below 2^21, so that tar's
// headers hold it), so that nothing on the host is the command's own. A
// user who is not root confines commands as themselves: they are not root
// on the host either.
const ID = 1999999

// commandID is the host id the commands of this process run as.
func commandID() (uid, gid int) {
	if os.Geteuid() == 0 {
		return ID, ID
	}
	return os.Getuid(), os.Getgid()
}

// own makes the folders a command may write its own: every file and
// folder in them that is not owned by the command's id is given to it
// (links themselves, never what they point to). A user who is not root
// owns them already. Nothing of a run runs while proctor prepares its
// next command, so nothing changes the folders under the walk.
func own(dirs []string) error {
	uid, gid := commandID()
	if uid == os.Geteuid() {
		return nil
	}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			info, err := d.Info()
			if err != nil {
				return nil // gone since it was listed
			}
			if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid {
				return nil
			}
			if err := os.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("give %s to the sandbox's id %d: %w", dir, uid, err)
		}
	}
	return nil
}
