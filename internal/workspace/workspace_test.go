package workspace_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/workspace"
)

func source(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	for name, content := range map[string]string{
		"main.go":       "package main\n",
		"old.txt":       "to be deleted\n",
		"docs/a.md":     "# a\n",
		".git/config":   "[core]\n",
		"logo.bin":      "\x89PNG\x00\x01",
		"keep/.gitkeep": "",
	} {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	return src
}

func TestCreateAndDiff(t *testing.T) {
	ctx := context.Background()
	src := source(t)
	dir := filepath.Join(t.TempDir(), "run", "workspace")
	w, err := workspace.Create(ctx, src, dir, "proctor: base", workspace.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Base) != 40 {
		t.Fatalf("base = %q", w.Base)
	}
	// Same tree, same base commit.
	w2, err := workspace.Create(ctx, src, filepath.Join(t.TempDir(), "ws2"), "proctor: base", workspace.Limits{})
	if err != nil || w2.Base != w.Base {
		t.Fatalf("second base %s vs %s (%v)", w2.Base, w.Base, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Contains(string(data), "[core]\n") && len(data) < 10 {
		t.Fatal("the source's .git was copied")
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.Remove(filepath.Join(dir, "old.txt"))
	os.WriteFile(filepath.Join(dir, "new.bin"), []byte{0, 1, 2, 3}, 0o644)
	os.WriteFile(filepath.Join(dir, "docs", "b.md"), []byte("# b\n"), 0o644)
	patch, changed, err := w.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "docs/b.md,main.go,new.bin,old.txt" {
		t.Fatalf("changed = %v", changed)
	}
	for _, want := range []string{"new file mode 100644", "deleted file mode 100644", "GIT binary patch", "+func main() {}"} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	// The diff applies to a pristine copy of the source with git apply.
	clean := t.TempDir()
	os.CopyFS(clean, os.DirFS(src))
	os.RemoveAll(filepath.Join(clean, ".git"))
	cmd := exec.Command("git", "apply", "--check", "-")
	cmd.Dir = clean
	cmd.Stdin = strings.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply --check: %v: %s", err, out)
	}
	// The source was never touched.
	if data, _ := os.ReadFile(filepath.Join(src, "main.go")); string(data) != "package main\n" {
		t.Fatal("the source changed")
	}
	blobs, err := w.BaseEntries(ctx, []string{"main.go", "docs/b.md"})
	if _, ok := blobs["docs/b.md"]; err != nil || len(blobs["main.go"].Blob) != 40 || blobs["main.go"].Mode != "100644" || ok {
		t.Fatalf("blobs = %v, %v", blobs, err)
	}
}

func TestCreateRefusesTooBigSource(t *testing.T) {
	src := source(t)
	_, err := workspace.Create(context.Background(), src, filepath.Join(t.TempDir(), "ws"), "base", workspace.Limits{MaxBytes: 5})
	if !errors.Is(err, workspace.ErrTooBig) || !strings.Contains(err.Error(), "max_workspace_bytes") {
		t.Fatalf("err = %v", err)
	}
	_, err = workspace.Create(context.Background(), filepath.Join(src, "nope"), filepath.Join(t.TempDir(), "ws"), "base", workspace.Limits{})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("missing source: %v", err)
	}
}
