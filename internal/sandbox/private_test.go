package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A private folder is made and locked under its root's lock; the folders
// of the root that no process holds are removed first — a run's, a
// warm's, a probe's, however new — and never one that a maker holds.
func TestPrivateFoldersOfKilledMakersAreRemoved(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tmp")
	for _, name := range []string{"run-killed", "run-working", "probe-killed"} {
		os.MkdirAll(filepath.Join(root, name, "home"), 0o700)
	}
	held, _ := os.Open(filepath.Join(root, "run-working"))
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	dir, release, err := PrivateFolder(context.Background(), root, "run-20261207-080000-abcdef", "")
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(root, "run-20261207-080000-abcdef") {
		t.Fatalf("made %s", dir)
	}
	for name, want := range map[string]bool{"run-killed": false, "probe-killed": false, "run-working": true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", name, err == nil, want)
		}
	}
	// Another maker's pass removes nothing held.
	if err := RemoveLeft(context.Background(), root, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("a held folder was removed: %v", err)
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("release left %s: %v", dir, err)
	}
	if err := RemoveLeft(context.Background(), filepath.Join(t.TempDir(), "none"), ""); err != nil {
		t.Fatalf("a root that is not there: %v", err)
	}
}
