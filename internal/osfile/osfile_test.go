package osfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenIsOsOpenFile(t *testing.T) {
	dir := t.TempDir()
	f, err := Open(filepath.Join(dir, "a.txt"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
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
}

// The one atomic write: into a folder by its path or inside an os.Root,
// synced or not, leaving the old file or the whole new one, nothing beside
// it when the write fails, and never out of a root through a link.
func TestWriteAtomic(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	for i, f := range []Folder{Path(dir), root} {
		for _, sync := range []bool{true, false} {
			if err := WriteAtomic(f, "a.txt", 0o640, sync, write(fmt.Sprint("v", i, sync))); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
			info, _ := os.Stat(filepath.Join(dir, "a.txt"))
			if string(got) != fmt.Sprint("v", i, sync) || info.Mode().Perm() != 0o640 {
				t.Fatalf("folder %d sync %v: %q %v", i, sync, got, info.Mode())
			}
		}
		failed := errors.New("disk full")
		if err := WriteAtomic(f, "a.txt", 0o644, true, func(w io.Writer) error { w.Write([]byte("half")); return failed }); !errors.Is(err, failed) {
			t.Fatalf("a failed write: %v", err)
		}
		entries, _ := os.ReadDir(dir)
		if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); len(entries) != 1 || string(got) != fmt.Sprint("v", i, false) {
			t.Fatalf("after a failed write: %d entries, a.txt %q", len(entries), got)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(root, "out/x.txt", 0o644, true, write("escaped")); err == nil {
		t.Fatal("a write through a link left the root")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Fatal("x.txt was written outside the root")
	}
	os.Remove(filepath.Join(dir, "out"))
}

// A tree with folders closed to their owner is removed whole.
func TestRemoveAllOpensClosedFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	deep := filepath.Join(root, "work", "work", "inner")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "f"), []byte("x"), 0o400)
	os.Chmod(filepath.Join(root, "work", "work"), 0)
	os.Chmod(filepath.Join(root, "work"), 0o500)
	if err := RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Fatalf("the tree is still there: %v", err)
	}
}

// Publish makes a folder whole or not at all, never replaces one that is
// there, and leaves no temp folder behind either way.
func TestPublishMakesAFolderWholeOrNotAtAll(t *testing.T) {
	fill := func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "a"), []byte("new"), 0o644) }
	for _, tc := range []struct {
		name    string
		there   bool
		fill    func(string) error
		wantErr bool
		want    string // a's content after; "" none
	}{
		{"made", false, fill, false, "new"},
		{"the fill fails", false, func(tmp string) error { fill(tmp); return errors.New("disk full") }, true, ""},
		{"there already", true, fill, true, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "sub", "dest")
			if tc.there {
				os.MkdirAll(dest, 0o755)
				os.WriteFile(filepath.Join(dest, "a"), []byte("old"), 0o644)
			}
			err := Publish(dest, tc.fill)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want an error %v", err, tc.wantErr)
			}
			got, _ := os.ReadFile(filepath.Join(dest, "a"))
			if string(got) != tc.want {
				t.Fatalf("a is %q, want %q", got, tc.want)
			}
			if left, _ := filepath.Glob(filepath.Join(parent, "sub", ".dest.tmp-*")); len(left) > 0 {
				t.Fatalf("temp folders left: %v", left)
			}
		})
	}
}
