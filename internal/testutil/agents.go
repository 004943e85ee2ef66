package testutil

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestAgent builds one of the small agent programs of
// internal/external/testdata (chatagent: Chat Completions; responsesagent:
// the Responses API) into a temporary folder and returns its path.
func TestAgent(t testing.TB, name string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "..", "external", "testdata", name)
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build test agent %s: %v\n%s", name, err, out)
	}
	return bin
}
