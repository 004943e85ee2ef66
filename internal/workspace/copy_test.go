package workspace

import (
	"bytes"
	"crypto/sha256"
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
		if err := copyFile(src, dst, 0o644); err != nil {
			t.Fatalf("size %d: copy: %v", size, err)
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
