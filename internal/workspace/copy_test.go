package workspace

import (
	"bytes"
	"crypto/sha256"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// Files around the size read whole are copied and hashed exactly.
func TestCopyAndHashAroundTheSmallFileSize(t *testing.T) {
	for _, size := range []int{0, 1, 4096, smallFile - 1, smallFile, smallFile + 1, 3*smallFile + 7} {
		dir := t.TempDir()
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		os.WriteFile(src, data, 0o644)
		var sum [sha256.Size]byte
		if err := copyFile(src, dst, 0o644, &sum); err != nil {
			t.Fatalf("size %d: copy: %v", size, err)
		}
		if sum != sha256.Sum256(data) {
			t.Fatalf("size %d: the copy's hash differs", size)
		}
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
			t.Fatalf("size %d: copy holds %d bytes", size, len(got))
		}
		h := sha256.New()
		var buf []byte
		if err := hashFile(h, src, &buf); err != nil {
			t.Fatalf("size %d: hash: %v", size, err)
		}
		if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
			t.Fatalf("size %d: hash differs", size)
		}
	}
}

// The manifest made while copying is the one hashing the copy gives.
func TestCopyManifestEqualsHashTree(t *testing.T) {
	src := t.TempDir()
	for name, data := range map[string]string{
		"a.txt":            "a\n",
		"empty":            "",
		"dir/b.go":         "package b\n",
		"dir/deep/c.bin":   string(bytes.Repeat([]byte{0, 1, 2}, smallFile)),
		".git/HEAD":        "ref: refs/heads/main\n",
		"dir/.git/config":  "[core]\n",
		"dir/.hidden/note": "kept",
	} {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("a.txt", filepath.Join(src, "link"))
	dst := filepath.Join(t.TempDir(), "ws")
	manifest := map[string]string{}
	if err := copyInto(src, dst, Limits{}, manifest); err != nil {
		t.Fatal(err)
	}
	want, err := hashTree(dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 5 || !maps.Equal(manifest, want) {
		t.Fatalf("manifest %v\nhashTree %v", manifest, want)
	}
}
