//go:build unix

package cli

import (
	"fmt"
	"os"
)

// privateFolder makes a folder of the data folder proctor's user's alone
// (0700) when it lets others in.
func privateFolder(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data folder %s: %w", dir, err)
	}
	if info.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(dir, info.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("data folder %s lets other users in (mode %o) and cannot be made private: %w; make it yours with mode 0700", dir, info.Mode().Perm(), err)
	}
	return nil
}
