package osfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenAndCreateTempAreOsFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := CreateTemp(dir, ".run.json.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(f.Name()), ".run.json.tmp-") || filepath.Dir(f.Name()) != dir {
		t.Errorf("temp file %s", f.Name())
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if info, err := os.Stat(f.Name()); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("temp file: %v %v", info.Mode(), err)
	}
	g, err := Open(f.Name(), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 10)
	n, _ := g.Read(data)
	g.Close()
	if string(data[:n]) != "hello" {
		t.Errorf("read %q", data[:n])
	}
	if _, err := Open(f.Name(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL over a file: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(f.Name(), link)
	if _, err := Open(link, os.O_RDONLY|syscall.O_NOFOLLOW, 0); err == nil {
		t.Error("O_NOFOLLOW followed a link")
	}
	var pe *fs.PathError
	if _, err := Open(filepath.Join(dir, "none"), os.O_RDONLY, 0); !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "none") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := CreateTemp(dir, "a/b*"); err == nil {
		t.Error("a pattern with a separator")
	}
}
