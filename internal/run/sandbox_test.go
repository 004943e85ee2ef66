package run

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A run's private temp folder lives under the data folder, not /tmp; the
// folders a killed proctor left are removed by the next run, and never
// one that a working run holds, nor one just made.
func TestPrivateTempFoldersOfKilledRunsAreRemoved(t *testing.T) {
	data := t.TempDir()
	root := filepath.Join(data, "tmp")
	old := time.Now().Add(-2 * time.Minute)
	for _, name := range []string{"run-killed", "run-working", "run-new"} {
		os.MkdirAll(filepath.Join(root, name, "home"), 0o700)
	}
	os.Chtimes(filepath.Join(root, "run-killed"), old, old)
	os.Chtimes(filepath.Join(root, "run-working"), old, old)
	held, _ := os.Open(filepath.Join(root, "run-working"))
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(privateRoot(data), "run-20261207-080000-abcdef")
	release, err := privateFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root {
		t.Fatalf("temp folder %s is not under %s", dir, root)
	}
	for name, want := range map[string]bool{"run-killed": false, "run-working": true, "run-new": true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", name, err == nil, want)
		}
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("release left %s: %v", dir, err)
	}
}
