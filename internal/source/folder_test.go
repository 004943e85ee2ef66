package source

import (
	"os"
	"path/filepath"
	"testing"
)

// A folder named through a link, or relatively, is the same folder.
func TestAFolderIsNamedByItsRealPath(t *testing.T) {
	real := filepath.Join(t.TempDir(), "app")
	os.Mkdir(real, 0o755)
	real, _ = filepath.EvalSymlinks(real)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(real))
	for _, name := range []string{real, link, link + "/", "app", "./app/../app"} {
		if got, err := Folder(name); err != nil || got != real {
			t.Errorf("Folder(%q) = %q, %v; want %q", name, got, err, real)
		}
	}
	if _, err := Folder(filepath.Join(real, "missing")); err == nil {
		t.Error("a folder that is not there has a real path")
	}
}
