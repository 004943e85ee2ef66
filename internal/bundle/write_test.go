package bundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/osfile"
)

func TestWriteFileAtomicLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := osfile.WriteFile(path, 0o644, true, osfile.Bytes([]byte(content))); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != content {
			t.Fatalf("content = %q, want %q", got, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want only run.json", len(entries))
	}
}

func TestWriteFileAtomicFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	os.WriteFile(path, []byte("old"), 0o644)
	// A folder in the way of the rename: the write fails, the old file stays.
	if err := osfile.WriteFile(filepath.Join(dir, "missing", "x.json"), 0o644, true, osfile.Bytes([]byte("new"))); err == nil {
		t.Fatal("write into a missing folder succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("old file changed: %q", got)
	}
}

func TestWriteReceiptRoundTrips(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20261201-100000-abc")
	os.MkdirAll(dir, 0o755)
	r := validReceipt("20261201-100000-abc")
	r.Changed = []string{"a.go"}
	if err := bundle.WriteReceipt(dir, &r); err != nil {
		t.Fatal(err)
	}
	run, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if run.Receipt.RunID != r.RunID || run.Receipt.Changed[0] != "a.go" || !run.Receipt.StartedAt.Equal(r.StartedAt) {
		t.Fatalf("round trip = %+v", run.Receipt)
	}
	bad := r
	bad.Status = "done"
	if err := bundle.WriteReceipt(dir, &bad); err == nil || !strings.Contains(err.Error(), `status: "done"`) {
		t.Fatalf("invalid receipt written: %v", err)
	}
}
