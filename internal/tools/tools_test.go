package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/tools"
)

func workspace(t *testing.T, lim tools.Limits) (*tools.Toolbox, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"main.go":         "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"docs/readme.md":  "# Demo\nhello world\nhello again\n",
		"data/blob.bin":   "\x00\x01\x02",
		".git/HEAD":       "ref: refs/heads/main\n",
		"nested/deep/x.t": "x\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "leak.txt"))
	os.Symlink(outside, filepath.Join(root, "leakdir"))
	os.Symlink("main.go", filepath.Join(root, "alias.go"))
	if lim.MaxToolOutputChars == 0 {
		lim.MaxToolOutputChars = 10000
	}
	tb, err := tools.New(root, lim, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root})
	if err != nil {
		t.Fatal(err)
	}
	return tb, root
}

func TestTools(t *testing.T) {
	tests := []struct {
		name, tool, args string
		isError          bool
		want             string
	}{
		{"list root", "list_files", `{}`, false, "docs/readme.md"},
		{"list skips .git", "list_files", `{"path": "."}`, false, "nested/deep/x.t"},
		{"read", "read_file", `{"path": "main.go"}`, false, "func main()"},
		{"read range", "read_file", `{"path": "main.go", "start_line": 3, "end_line": 4}`, false, "[lines 3-4 of 5]\nfunc main() {\n\tprintln(\"hi\")\n"},
		{"read bad range", "read_file", `{"path": "main.go", "start_line": 9}`, true, "start_line 9 is past end_line 5"},
		{"read binary", "read_file", `{"path": "data/blob.bin"}`, false, "binary file, 3 bytes"},
		{"read folder", "read_file", `{"path": "docs"}`, true, "it is a folder"},
		{"read missing", "read_file", `{"path": "nope.go"}`, true, "no such file"},
		{"read symlink inside", "read_file", `{"path": "alias.go"}`, false, "package main"},
		{"absolute path", "read_file", `{"path": "/etc/passwd"}`, true, "is absolute"},
		{"dot dot", "read_file", `{"path": "docs/../../etc/passwd"}`, true, `contains ".."`},
		{"symlink out", "read_file", `{"path": "leak.txt"}`, true, "through a symlink"},
		{"symlinked folder out", "write_file", `{"path": "leakdir/new.txt", "content": "x"}`, true, "through a symlink"},
		{"list symlinked folder out", "list_files", `{"path": "leakdir"}`, true, "through a symlink"},
		{"write", "write_file", `{"path": "pkg/new.go", "content": "package pkg\n"}`, false, "wrote pkg/new.go (12 bytes)"},
		{"edit once", "edit_file", `{"path": "main.go", "search": "\"hi\"", "replace": "\"hello\""}`, false, "1 replacement"},
		{"edit no match", "edit_file", `{"path": "main.go", "search": "nothing like this", "replace": "x"}`, true, "0 matches"},
		{"edit many matches", "edit_file", `{"path": "docs/readme.md", "search": "hello", "replace": "bye"}`, true, "found 2 times"},
		{"delete", "delete_file", `{"path": "nested/deep/x.t"}`, false, "deleted nested/deep/x.t"},
		{"delete folder", "delete_file", `{"path": "docs"}`, true, "it is a folder"},
		{"search", "search", `{"pattern": "hel+o"}`, false, "docs/readme.md:2:hello world\ndocs/readme.md:3:hello again"},
		{"search glob", "search", `{"pattern": "main", "glob": "*.md"}`, false, "no matches"},
		{"search bad regex", "search", `{"pattern": "("}`, true, "not a valid regular expression"},
		{"run", "run_command", `{"command": "echo out; echo err >&2; exit 3"}`, false, "exit 3\nout\nerr"},
		{"run timeout", "run_command", `{"command": "sleep 5", "timeout_s": 1}`, false, "killed after the 1s time limit"},
		{"unknown tool", "rm_rf", `{}`, true, `unknown tool "rm_rf"`},
		{"invalid JSON", "read_file", `{"path": `, true, "arguments are not valid"},
		{"unknown argument", "read_file", `{"path": "main.go", "mode": "x"}`, true, `unknown field "mode"`},
		{"missing argument", "write_file", `{"content": "x"}`, true, "path: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, _ := workspace(t, tools.Limits{})
			r := tb.Run(context.Background(), tc.tool, tc.args, nil)
			if r.IsError != tc.isError {
				t.Fatalf("IsError = %v, output:\n%s", r.IsError, r.Output)
			}
			if !strings.Contains(r.Output, tc.want) {
				t.Fatalf("output does not contain %q:\n%s", tc.want, r.Output)
			}
			if strings.Contains(r.Output, "secret") && !strings.Contains(tc.want, "secret") {
				t.Fatalf("output leaks a file from outside:\n%s", r.Output)
			}
		})
	}
}

func TestWritesStayInside(t *testing.T) {
	tb, root := workspace(t, tools.Limits{})
	outside := filepath.Dir(root)
	for _, args := range []string{
		`{"path": "../escape.txt", "content": "x"}`,
		`{"path": "/tmp/escape.txt", "content": "x"}`,
		`{"path": "leakdir/escape.txt", "content": "x"}`,
	} {
		if r := tb.Run(context.Background(), "write_file", args, nil); !r.IsError {
			t.Errorf("%s: write succeeded: %s", args, r.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "escape.txt")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
	// The edit really happened, and left no temp file behind.
	tb.Run(context.Background(), "edit_file", `{"path": "main.go", "search": "hi", "replace": "hey"}`, nil)
	data, _ := os.ReadFile(filepath.Join(root, "main.go"))
	if !strings.Contains(string(data), "hey") {
		t.Fatalf("main.go = %q", data)
	}
	matches, _ := filepath.Glob(filepath.Join(root, ".proctor-write-*"))
	if len(matches) > 0 {
		t.Fatalf("temp files left: %v", matches)
	}
}

func TestOutputIsCutWithAMarker(t *testing.T) {
	tb, root := workspace(t, tools.Limits{MaxToolOutputChars: 50})
	os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("é", 200)), 0o644)
	r := tb.Run(context.Background(), "read_file", `{"path": "big.txt"}`, nil)
	if r.Cut != 150 || !strings.HasSuffix(r.Output, "[… output cut: 150 of 200 characters not shown …]") {
		t.Fatalf("cut %d, output %q", r.Cut, r.Output)
	}
	if !strings.HasPrefix(r.Output, strings.Repeat("é", 50)+"\n") {
		t.Fatal("cut inside a character or at the wrong place")
	}
}

func TestBounds(t *testing.T) {
	t.Run("max_file_bytes", func(t *testing.T) {
		tb, _ := workspace(t, tools.Limits{MaxFileBytes: 10})
		r := tb.Run(context.Background(), "write_file", `{"path": "a.txt", "content": "more than ten bytes"}`, nil)
		if !r.IsError || r.Bound != nil || !strings.Contains(r.Output, "over max_file_bytes (10)") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("max_files", func(t *testing.T) {
		tb, _ := workspace(t, tools.Limits{MaxFiles: 4})
		r := tb.Run(context.Background(), "write_file", `{"path": "a.txt", "content": "x"}`, nil)
		if !r.IsError || r.Bound == nil || !strings.Contains(r.Output, "over max_files (4)") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("max_workspace_bytes after a command", func(t *testing.T) {
		tb, _ := workspace(t, tools.Limits{MaxWorkspaceBytes: 1000})
		r := tb.Run(context.Background(), "run_command", `{"command": "head -c 5000 /dev/zero > big.bin"}`, nil)
		if !r.IsError || r.Bound == nil || !strings.Contains(r.Output, "over max_workspace_bytes (1000)") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("workspace already too big", func(t *testing.T) {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "a"), make([]byte, 100), 0o644)
		if _, err := tools.New(root, tools.Limits{MaxWorkspaceBytes: 10}, nil); err == nil || !strings.Contains(err.Error(), "over max_workspace_bytes") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRunCommandIsKilledOnCancel(t *testing.T) {
	tb, _ := workspace(t, tools.Limits{CommandTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := tb.Run(ctx, "run_command", `{"command": "sleep 30 & sleep 30; wait"}`, nil)
	if time.Since(start) > 10*time.Second || !r.IsError {
		t.Fatalf("took %s: %+v", time.Since(start), r)
	}
}

func TestSpecsAreValid(t *testing.T) {
	names := tools.Names()
	for i, s := range tools.Specs() {
		if s.Name != names[i] || s.Description == "" || !strings.HasPrefix(string(s.Parameters), `{"type":"object"`) {
			t.Errorf("spec %d = %+v", i, s)
		}
	}
	if !tools.Gated("run_command") || tools.Gated("read_file") {
		t.Fatal("gating is wrong")
	}
}
