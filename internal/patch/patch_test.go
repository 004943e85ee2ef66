package patch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
)

func TestParseGitDiff(t *testing.T) {
	data, err := os.ReadFile("../../testdata/bundles/runs/20261201-093012-k3f9qa/diff.patch")
	if err != nil {
		t.Fatal(err)
	}
	files, err := patch.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("got %d files", len(files))
	}
	money, test := files[0], files[1]
	if money.Path() != "internal/money/money.go" || money.Added != 3 || money.Deleted != 1 || money.Mode != "" {
		t.Errorf("money.go = %+v", money)
	}
	if test.Path() != "internal/money/money_test.go" || test.OldPath != "" || test.Mode != "new" || test.Added != 14 {
		t.Errorf("money_test.go = %+v", test)
	}
	// Line numbers follow the hunk header.
	h := money.Hunks[0]
	first := h.Lines[0]
	if first.Kind != patch.Context || first.OldNo != 1 || first.NewNo != 1 || first.Text != "package money" {
		t.Errorf("first line = %+v", first)
	}
	var del patch.Line
	for _, l := range h.Lines {
		if l.Kind == patch.Deleted {
			del = l
		}
	}
	if del.OldNo != 5 || del.NewNo != 0 {
		t.Errorf("deleted line = %+v", del)
	}
	if a, d := patch.Stats(files); a != 17 || d != 1 {
		t.Errorf("stats = +%d -%d", a, d)
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name    string
		diff    string
		files   int
		path    string
		mode    string
		binary  bool
		wantErr bool
	}{
		{"deleted file", "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n", 1, "old.txt", "deleted", false, false},
		{"rename", "diff --git a/a.go b/b.go\nsimilarity index 100%\nrename from a.go\nrename to b.go\n", 1, "b.go", "renamed", false, false},
		{"binary", "diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n", 1, "logo.png", "new", true, false},
		{"plain unified diff", "--- a.txt\t2026-01-01\n+++ a.txt\t2026-01-02\n@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n", 1, "a.txt", "", false, false},
		{"bad hunk header", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -x +1 @@\n", 1, "a", "", false, true},
		{"garbage", "hello\nworld\n", 0, "", "", false, false},
		{"empty", "", 0, "", "", false, false},
		{"crlf", "diff --git a/w.txt b/w.txt\r\n--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n", 1, "w.txt", "", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := patch.Parse(tc.diff)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(files) != tc.files {
				t.Fatalf("files = %+v", files)
			}
			if tc.files == 0 {
				return
			}
			f := files[0]
			if f.Path() != tc.path || f.Mode != tc.mode || f.Binary != tc.binary {
				t.Fatalf("file = %+v", f)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	matches, _ := filepath.Glob("../../testdata/bundles/runs/*/diff.patch")
	for _, m := range matches {
		data, _ := os.ReadFile(m)
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, text string) {
		files, _ := patch.Parse(text)
		for _, file := range files {
			added, deleted := 0, 0
			for _, h := range file.Hunks {
				for _, l := range h.Lines {
					switch l.Kind {
					case patch.Added:
						added++
					case patch.Deleted:
						deleted++
					}
				}
			}
			if added != file.Added || deleted != file.Deleted {
				t.Fatalf("counts +%d -%d do not match lines +%d -%d", file.Added, file.Deleted, added, deleted)
			}
		}
	})
}
