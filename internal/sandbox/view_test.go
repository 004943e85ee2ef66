package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What every user may read is readable in the sandbox, in as few rules
// as can be: a folder whole when all of it is, else its parts; a file or
// folder closed to others (as /etc/shadow is) is left out, and so are
// links (what they lead to is judged where it is).
func TestReadableLeavesOutWhatOthersMayNotRead(t *testing.T) {
	root := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"open/a": 0o644, "open/sub/b": 0o644,
		"mixed/passwd": 0o644, "mixed/shadow": 0o640, "mixed/ssl/certs/c": 0o644, "mixed/ssl/private/key": 0o600,
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), mode)
		os.Chmod(p, mode)
	}
	os.Chmod(filepath.Join(root, "mixed/ssl/private"), 0o700)
	os.Symlink(filepath.Join(root, "mixed/shadow"), filepath.Join(root, "mixed/alias"))
	os.Chmod(root, 0o755)

	dirs, files := readable(root)
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
	if got, want := rel(dirs), []string{"mixed/ssl/certs", "open"}; !slices.Equal(got, want) {
		t.Errorf("folders %v, want %v", got, want)
	}
	if got, want := rel(files), []string{"mixed/passwd"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if d, f := readable(filepath.Join(root, "open")); len(d) != 1 || len(f) != 0 {
		t.Errorf("a folder all may read: %v %v, want it whole", d, f)
	}
}
