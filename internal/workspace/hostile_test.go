package workspace_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/workspace"
)

// The agent owns its workspace, .git included: whatever it writes there —
// config that runs programs (fsmonitor, filters, an external diff, hooks),
// attributes that convert or hide files, a diff format of its own, a .git
// that points elsewhere, a nested repository — proctor's own git runs
// nothing of it and records the files as they are, in one diff format.
func TestProctorsGitTrustsNothingTheAgentLeaves(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	for name, content := range map[string]string{"a.txt": "one\n", "sub/b.txt": "two\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755)
		os.WriteFile(filepath.Join(src, name), []byte(content), 0o644)
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	payload := filepath.Join(t.TempDir(), "payload.sh")
	os.WriteFile(payload, []byte("#!/bin/sh\necho ran >> "+marker+"\ncat\n"), 0o755)
	// proctor's own environment may hold git variables too: none of them
	// reaches its bookkeeping.
	t.Setenv("GIT_EXTERNAL_DIFF", payload)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='"+payload+"'")

	for _, tc := range []struct {
		name  string
		agent func(t *testing.T, ws string)
	}{
		{"fsmonitor in the agent's config", func(t *testing.T, ws string) {
			gitIn(t, ws, "config", "core.fsmonitor", payload)
		}},
		{"a clean filter named by .gitattributes", func(t *testing.T, ws string) {
			gitIn(t, ws, "config", "filter.x.clean", payload)
			gitIn(t, ws, "config", "filter.x.smudge", payload)
			gitIn(t, ws, "config", "filter.x.required", "true")
			write(t, ws, ".gitattributes", "* filter=x\n")
		}},
		{"a textconv and an external diff", func(t *testing.T, ws string) {
			gitIn(t, ws, "config", "diff.x.textconv", payload)
			gitIn(t, ws, "config", "diff.external", payload)
			write(t, ws, ".gitattributes", "* diff=x\n")
		}},
		{"hooks and a hooks path", func(t *testing.T, ws string) {
			for _, h := range []string{"pre-commit", "post-commit", "post-index-change", "reference-transaction", "pre-auto-gc"} {
				os.WriteFile(filepath.Join(ws, ".git", "hooks", h), []byte("#!/bin/sh\necho ran >> "+marker+"\n"), 0o755)
			}
			gitIn(t, ws, "config", "core.hooksPath", filepath.Dir(payload))
		}},
		{"a diff format of its own", func(t *testing.T, ws string) {
			gitIn(t, ws, "config", "diff.noprefix", "true")
			gitIn(t, ws, "config", "diff.mnemonicPrefix", "true")
			gitIn(t, ws, "config", "diff.context", "0")
			gitIn(t, ws, "config", "core.autocrlf", "true")
		}},
		{"attributes that convert or hide files", func(t *testing.T, ws string) {
			write(t, ws, ".gitattributes", "*.txt text eol=crlf ident working-tree-encoding=UTF-16 export-ignore -diff\n")
			write(t, ws, "sub/.gitattributes", "* filter=x binary\n")
		}},
		{"a .git that points elsewhere", func(t *testing.T, ws string) {
			elsewhere := t.TempDir()
			exec.Command("git", "init", "-q", elsewhere).Run()
			gitIn(t, elsewhere, "config", "core.fsmonitor", payload)
			os.RemoveAll(filepath.Join(ws, ".git"))
			write(t, ws, ".git", "gitdir: "+filepath.Join(elsewhere, ".git")+"\n")
		}},
		{"a nested repository with its own config", func(t *testing.T, ws string) {
			gitIn(t, filepath.Join(ws, "sub"), "init", "-q")
			gitIn(t, filepath.Join(ws, "sub"), "config", "core.fsmonitor", payload)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			dir := filepath.Join(t.TempDir(), "workspace")
			w, err := workspace.Create(ctx, src, dir, "proctor: base", workspace.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			// The agent's own git works in its workspace.
			if out := gitIn(t, dir, "status", "--porcelain"); out != "" {
				t.Fatalf("the agent's repository is not a clean checkout of the base:\n%s", out)
			}
			if out := gitIn(t, dir, "rev-parse", "HEAD"); strings.TrimSpace(out) != w.Base {
				t.Fatalf("the agent's HEAD is %s, not the base %s", out, w.Base)
			}
			tc.agent(t, dir)
			write(t, dir, "a.txt", "one\nchanged\n")
			write(t, dir, "new.txt", "new\n")
			patch, changed, err := w.Diff(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Checkpoint(ctx, "proctor: after"); err != nil {
				t.Fatal(err)
			}
			// The run page's "more lines" read a file as the base had it:
			// the stored bytes, whatever the agent's attributes say, and
			// nothing for a path the diff names outside the tree.
			if got, err := w.Show(ctx, w.Base, "a.txt"); err != nil || string(got) != "one\n" {
				t.Errorf("Show(base, a.txt) = %q, %v; want the base's bytes", got, err)
			}
			for _, hostile := range []string{"../../etc/passwd", "../" + filepath.Base(dir) + "/a.txt", "/etc/passwd"} {
				if got, err := w.Show(ctx, w.Base, hostile); err == nil {
					t.Errorf("Show(base, %q) read %q", hostile, got)
				}
			}
			if data, err := os.ReadFile(marker); err == nil {
				t.Fatalf("proctor's git ran the agent's program: %s", data)
			}
			for _, want := range []string{"diff --git a/a.txt b/a.txt\n", "--- a/a.txt\n+++ b/a.txt\n", " one\n+changed\n", "+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"} {
				if !strings.Contains(patch, want) {
					t.Errorf("the diff lacks %q:\n%s", want, patch)
				}
			}
			if !contains(changed, "a.txt") || !contains(changed, "new.txt") || contains(changed, "sub/b.txt") {
				t.Errorf("changed = %v", changed)
			}
			// What proctor recorded is the bytes in the workspace.
			clean := t.TempDir()
			if err := w.Extract(ctx, w.Base, clean); err != nil {
				t.Fatal(err)
			}
			if err := workspace.ApplyPatch(ctx, clean, patch); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"a.txt", "new.txt", "sub/b.txt"} {
				got, _ := os.ReadFile(filepath.Join(clean, f))
				want, _ := os.ReadFile(filepath.Join(dir, f))
				if string(got) != string(want) {
					t.Errorf("%s: the base plus the diff is %q, the workspace holds %q", f, got, want)
				}
			}
			if _, err := os.Stat(filepath.Join(workspace.GitDir(dir), "config")); err != nil {
				t.Fatalf("proctor's repository is not beside the workspace: %v", err)
			}
		})
	}
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=agent", "-c", "user.email=a@e"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_EXTERNAL_DIFF=", "GIT_CONFIG_PARAMETERS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
