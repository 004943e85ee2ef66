package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is wrapped by every error for a path that is not inside the
// workspace.
var ErrOutside = errors.New("path is outside the workspace")

// resolve turns a path the model gave into an absolute path inside the
// workspace. It refuses absolute paths, any ".." component, and paths whose
// existing part leads out of the workspace through a symlink.
func (tb *Toolbox) resolve(p string) (string, error) {
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
	full := filepath.Join(tb.root, filepath.Clean(p))
	// Resolve symlinks in the part of the path that exists.
	existing := full
	var rest []string
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = append([]string{filepath.Base(existing)}, rest...)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", p, err)
	}
	if !within(tb.root, real) {
		return "", fmt.Errorf("%w: %q leads out of the workspace through a symlink", ErrOutside, p)
	}
	return filepath.Join(append([]string{real}, rest...)...), nil
}

// rel is the workspace-relative, slash-separated form of an absolute path.
func (tb *Toolbox) rel(abs string) string {
	r, err := filepath.Rel(tb.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && (rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))))
}

// usage counts the regular files and their bytes under root, leaving out
// .git.
func usage(root string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && path != root {
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
	return files, bytes, err
}
