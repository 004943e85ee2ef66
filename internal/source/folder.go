package source

import (
	"fmt"
	"path/filepath"
)

// Folder is the real path of a source folder: absolute, its symlinks
// resolved. A run records its source this way and a rule for a source
// folder names it this way, whether the path came from the command line,
// the dashboard or a rule's --target, so that a rule made for a folder
// applies to every run on it however the folder was named.
func Folder(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("source folder %s: %w", path, err)
	}
	return abs, nil
}
