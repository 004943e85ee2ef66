package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// ErrOutside is wrapped by every error for a path that is not inside the
// workspace.
var ErrOutside = errors.New("path is outside the workspace")

// clean checks a path the model gave and returns it relative to the
// workspace root. It refuses absolute paths and any ".." component, with a
// message the model can act on; every file operation then goes through the
// workspace's os.Root, which also refuses symlinks that lead out of it.
func clean(p string) (string, error) {
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrOutside)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%w: %q is absolute; give a path relative to the workspace root", ErrOutside, p)
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", fmt.Errorf("%w: %q contains \"..\"; give a path inside the workspace", ErrOutside, p)
		}
	}
	return filepath.Clean(p), nil
}

// explain makes the error of a file operation on rel say so when rel leads
// out of the workspace through a symlink (os.Root refused to follow it).
func (tb *Toolbox) explain(rel string, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return unwrapPath(err)
	}
	for prefix := rel; prefix != "." && prefix != string(filepath.Separator); prefix = filepath.Dir(prefix) {
		info, lerr := tb.fs.Lstat(prefix)
		if lerr != nil || info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, serr := tb.fs.Stat(prefix); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("%w: %q leads out of the workspace through a symlink", ErrOutside, filepath.ToSlash(rel))
		}
	}
	return unwrapPath(err)
}

// usage counts the regular files and their bytes under the workspace,
// leaving out .git, and adds the bytes of the scratch folder (the run's
// private temp: a command's TMPDIR, HOME and caches), whose files are not
// the workspace's.
func (tb *Toolbox) usage() (files int, bytes int64, err error) {
	err = fs.WalkDir(tb.fs.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && path != "." {
			return fs.SkipDir
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files++
			bytes += info.Size()
		}
		return nil
	})
	if err != nil || tb.limits.Scratch == "" {
		return files, bytes, err
	}
	filepath.WalkDir(tb.limits.Scratch, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				bytes += info.Size()
			}
		}
		return nil // what cannot be read is skipped
	})
	return files, bytes, nil
}
