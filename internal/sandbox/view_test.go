package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// What of /etc a command may read is worked out by proctor, kept for many
// commands, and passed to the init whole.
func TestHostFilesAreWhatEveryUserMayReadOfEtc(t *testing.T) {
	d, f := readable("/etc")
	var h HostFiles
	got := h.Etc()
	if !slices.Equal(got.Dirs, d) || !slices.Equal(got.Files, f) {
		t.Fatalf("HostFiles: %d folders and %d files, want %d and %d", len(got.Dirs), len(got.Files), len(d), len(f))
	}
	if again := h.Etc(); len(again.Dirs) != len(got.Dirs) || (len(got.Dirs) > 0 && &again.Dirs[0] != &got.Dirs[0]) {
		t.Fatal("a second command walked /etc again")
	}
	p := Policy{Write: []string{"/ws"}, Etc: Readable{Dirs: []string{"/etc/ssl/certs"}, Files: []string{"/etc/passwd", "/etc/hosts"}}}
	in, err := parse(append(policyFlags(p), "--", "true"), &strings.Builder{})
	if err != nil || !slices.Equal(in.policy.Etc.Dirs, p.Etc.Dirs) || !slices.Equal(in.policy.Etc.Files, p.Etc.Files) {
		t.Fatalf("the /etc flags do not read back: %+v %v", in.policy.Etc, err)
	}
}
