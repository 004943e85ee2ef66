package patch_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		{"bad hunk header", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -x +1 @@\n", 0, "", "", false, true},
		{"hunk counts", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n", 1, "a", "", false, false},
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

// A plain two-file unified diff was read as one file (the hunk counts were
// ignored), and git's quoted paths were left quoted.
func TestParseFollowsHunkCountsAndQuotedPaths(t *testing.T) {
	two := "--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- a/two.txt\n+++ b/two.txt\n@@ -1 +1,2 @@\n-d\n+e\n+f\n"
	files, err := patch.Parse(two)
	if err != nil || len(files) != 2 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	if files[0].Path() != "one.txt" || files[0].Added != 1 || files[0].Deleted != 1 || files[1].Path() != "two.txt" || files[1].Added != 2 || files[1].Deleted != 1 {
		t.Fatalf("files %+v", files)
	}
	quoted := "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\n--- \"a/caf\\303\\251.txt\"\n+++ \"b/caf\\303\\251.txt\"\n@@ -1 +1 @@\n-x\n+y\n"
	files, err = patch.Parse(quoted)
	if err != nil || len(files) != 1 || files[0].Path() != "café.txt" {
		t.Fatalf("quoted path: %+v, %v", files, err)
	}
}

// FuzzParse holds the counts to git's own: for every diff git apply
// accepts, each file's added and deleted lines are those of
// `git apply --numstat` (files that change no line — renames, mode changes,
// empty headers — left out on both sides).
func FuzzParse(f *testing.F) {
	git, err := exec.LookPath("git")
	if err != nil {
		f.Skip("git is not installed")
	}
	matches, _ := filepath.Glob("../../testdata/bundles/runs/*/diff.patch")
	for _, m := range matches {
		data, _ := os.ReadFile(m)
		f.Add(string(data))
	}
	f.Add("--- a/one.txt\n+++ b/one.txt\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- a/two.txt\n+++ b/two.txt\n@@ -1 +1,2 @@\n-d\n+e\n+f\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		files, err := patch.Parse(text)
		cmd := exec.Command(git, "apply", "--numstat", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(text)
		out, gitErr := cmd.Output()
		if gitErr != nil || err != nil {
			return // git refuses it, or we do: nothing to compare
		}
		var want []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if fields := strings.Fields(line); len(fields) >= 2 && fields[0] != "-" && fields[0]+fields[1] != "00" {
				want = append(want, fields[0]+" "+fields[1])
			}
		}
		var got []string
		for _, file := range files {
			if !file.Binary && file.Added+file.Deleted > 0 {
				got = append(got, fmt.Sprintf("%d %d", file.Added, file.Deleted))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("counts %v; git apply --numstat says %v", got, want)
		}
	})
}
