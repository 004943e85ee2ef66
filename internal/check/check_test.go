package check_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/intent"
)

func input(t *testing.T) check.Input {
	t.Helper()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "money.go"), []byte("package money\n\nimport \"math\"\n\nfunc Cents(e float64) int64 { return int64(math.Round(e * 100)) }\n"), 0o644)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("math.Round"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "escape.txt"))
	os.Symlink("money.go", filepath.Join(ws, "alias.go"))
	return check.Input{Workspace: ws, RunDir: t.TempDir(), Changed: []string{"money.go", "money_test.go"}, Final: "Fixed the rounding.",
		Calls: []check.Call{{Tool: "run_command", Args: `{"command":"go test ./..."}`, OK: true, Exit: code(0)}, {Tool: "read_file", Args: `{"path":"money.go"}`, OK: true},
			{Tool: "Bash", Args: `{"command":"make lint","description":"lint"}`, OK: true, Exit: code(0)}, {Tool: "exec_command", Args: `{"cmd":"git status"}`, OK: true, Exit: code(0)},
			{Tool: "edit", Args: `{"filePath":"/ws/money.go","oldString":"old","newString":"new"}`, OK: true},
			{Tool: "run_command", Args: `{"command":"go vet ./..."}`, OK: true, Exit: code(127)},
			{Tool: "exec_command", Args: `{"cmd":"pytest -q"}`, OK: true},
			{Tool: "Bash", Args: `{"command":"npm test"}`, OK: false},
			{Tool: "write_file", Args: `{"path":"a.txt","content":"x"}`, OK: false}},
		Questions: []string{"Which currency?"},
		Env:       []string{"PATH=" + os.Getenv("PATH")}}
}

func code(n int) *int { return &n }

func exe(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "check")
	os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), mode)
	return p
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name   string
		spec   check.Spec
		passed bool
		broken bool
		detail string
	}{
		{"file exists", check.Spec{Kind: check.KindFileExists, Path: "money.go"}, true, false, "money.go exists"},
		{"file exists fails", check.Spec{Kind: check.KindFileExists, Path: "nope.go"}, false, false, "does not exist"},
		{"file absent", check.Spec{Kind: check.KindFileAbsent, Path: "nope.go"}, true, false, "is absent"},
		{"contains", check.Spec{Kind: check.KindFileContains, Path: "money.go", Text: "math.Round"}, true, false, "at line 5"},
		{"contains fails", check.Spec{Kind: check.KindFileContains, Path: "money.go", Text: "math.Floor"}, false, false, "does not contain"},
		{"symlink inside", check.Spec{Kind: check.KindFileContains, Path: "alias.go", Text: "math.Round"}, true, false, "at line 5"},
		{"symlink out of the workspace", check.Spec{Kind: check.KindFileContains, Path: "escape.txt", Text: "math.Round"}, false, true, "escape.txt"},
		{"exists through a symlink out", check.Spec{Kind: check.KindFileExists, Path: "escape.txt"}, false, true, "escape.txt"},
		{"matches", check.Spec{Kind: check.KindFileMatches, Path: "money.go", Pattern: regexp.MustCompile(`import "ma+th"`)}, true, false, "at line 3"},
		{"only paths", check.Spec{Kind: check.KindOnlyPathsChanged, Paths: []string{"*.go"}}, true, false, "2 changed path(s)"},
		{"only paths fails", check.Spec{Kind: check.KindOnlyPathsChanged, Paths: []string{"money.go"}}, false, false, "changed outside [money.go]: money_test.go"},
		{"final message", check.Spec{Kind: check.KindFinalMessage, Text: "rounding"}, true, false, ""},
		{"asked", check.Spec{Kind: check.KindAsked}, true, false, "a question asked 1 time(s)"},
		{"asked about", check.Spec{Kind: check.KindAsked, Text: "currency"}, true, false, `a question containing "currency" asked 1 time(s)`},
		{"asked about fails", check.Spec{Kind: check.KindAsked, Text: "version"}, false, false, `a question containing "version" asked 0 time(s)`},
		{"tool called", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go test`)}, true, false, "called 1 time(s), 1 succeeded (exit 0)"},
		// A call counts only when it succeeded: a command by its exit status.
		{"a command that failed", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go vet`)}, false, false, "called 1 time(s), 0 succeeded (exit 127)"},
		{"a command whose end is unknown", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`pytest`)}, false, false, "0 succeeded (exit status unknown)"},
		{"a command refused", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`npm test`)}, false, false, "0 succeeded (refused or failed, no exit status)"},
		{"a write that failed", check.Spec{Kind: check.KindToolCalled, Tool: "write_file"}, false, false, "0 succeeded (error)"},
		{"a failed command asked for", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go vet`), Succeeded: check.Failed}, true, false, "1 did not succeed (exit 127)"},
		{"a failed command asked for, none failed", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go test`), Succeeded: check.Failed}, false, false, "0 did not succeed (exit 0)"},
		{"any call", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go vet`), Succeeded: check.Any}, true, false, "called 1 time(s)"},
		{"not called counts every call", check.Spec{Kind: check.KindToolNotCalled, Tool: "run_command", Args: regexp.MustCompile(`go vet`)}, false, false, "called 1 time(s)"},
		{"not called, of those that succeeded", check.Spec{Kind: check.KindToolNotCalled, Tool: "run_command", Args: regexp.MustCompile(`go vet`), Succeeded: check.Succeeded}, true, false, "0 succeeded (exit 127)"},
		{"tool not called", check.Spec{Kind: check.KindToolNotCalled, Tool: "delete_file"}, true, false, ""},
		// Another agent's tools for an intent count as proctor's own.
		{"a command by Claude Code", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`"command":"make lint"`)}, true, false, "called 1 time(s)"},
		{"a command by Codex", check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`git status`)}, true, false, "called 1 time(s)"},
		{"an edit by opencode", check.Spec{Kind: check.KindToolCalled, Tool: "edit_file", Args: regexp.MustCompile(`"search":"old"`)}, true, false, "called 1 time(s)"},
		{"not any Bash", check.Spec{Kind: check.KindToolNotCalled, Tool: "run_command", Args: regexp.MustCompile(`rm -rf`)}, true, false, "called 0 time(s)"},
		{"tool not called fails", check.Spec{Kind: check.KindToolNotCalled, Tool: "read_file"}, false, false, "called 1 time(s)"},
		{"command", check.Spec{Kind: check.KindCommand, Command: "grep -q Round money.go"}, true, false, "exit 0"},
		{"command fails", check.Spec{Kind: check.KindCommand, Command: "echo nope; exit 3"}, false, false, "exit 3\nnope"},
		{"command hangs", check.Spec{Kind: check.KindCommand, Command: "sleep 10", Timeout: 200 * time.Millisecond}, false, true, "no answer within 200ms"},
		{"budget", check.Spec{Kind: check.KindBudgetNotExceeded}, true, false, "no budget exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := check.One(context.Background(), tc.spec, input(t))
			if r.Passed != tc.passed || r.Broken != tc.broken || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

func TestExecutableChecks(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		mode   os.FileMode
		passed bool
		broken bool
		detail string
	}{
		{"held", "echo all good", 0o755, true, false, "all good"},
		{"failed", "echo 'money.go still truncates'; exit 1", 0o755, false, false, "money.go still truncates"},
		{"sees the environment", `test -f "$PROCTOR_CALLS" && test -d "$PROCTOR_WORKSPACE" && grep -q run_command "$PROCTOR_CALLS"`, 0o755, true, false, ""},
		{"no run bit", "exit 0", 0o644, false, true, "not executable (no run bit); run chmod +x"},
		{"other exit code", "exit 2", 0o755, false, true, "exit 2; a check exits 0 (held) or 1 (failed)"},
		{"crash", "kill -SEGV $$", 0o755, false, true, "killed by segmentation fault"},
		{"never exits", "sleep 10", 0o755, false, true, "no answer within 300ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := check.Spec{Name: "c", Kind: check.KindExecutable, Exec: exe(t, tc.body, tc.mode), Timeout: 300 * time.Millisecond}
			rs := check.Run(context.Background(), []check.Spec{spec}, input(t))
			r := rs[0]
			if r.Passed != tc.passed || r.Broken != tc.broken || !strings.Contains(r.Detail, tc.detail) || r.Phase != "post" {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a.go", true}, {"*.go", "pkg/a.go", false}, {"**/*.go", "pkg/a.go", true}, {"**/*.go", "a.go", true},
		{"config/**", "config/a/b.yaml", true}, {"config/**", "configx/a", false}, {"a?.md", "ab.md", true}, {"docs/*.md", "docs/x/y.md", false},
	} {
		if got := check.Glob(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v", tc.pattern, tc.path, got)
		}
	}
}

// Calls are built from a run's events: each result matched to its call by
// id (not the last call: an agent runs a reply's calls at once), and a
// call that waited on a command still running gives that command's exit
// to the call that started it.
func TestCallsFromEvents(t *testing.T) {
	var cs check.Calls
	for _, ev := range []bundle.EventData{
		bundle.ToolCallEvent{ID: "a", Name: "exec_command", Args: []byte(`{"cmd":"go test ./..."}`)},
		bundle.ToolCallEvent{ID: "b", Name: "read_file", Args: []byte(`{"path":"x"}`)},
		bundle.ToolResultEvent{ID: "b", Name: "read_file", OK: false},
		bundle.ToolResultEvent{ID: "a", Name: "exec_command", OK: true},
		bundle.ToolCallEvent{ID: "w", Name: "write_stdin", Args: []byte(`{"session_id":7,"chars":""}`)},
		bundle.ToolResultEvent{ID: "w", Name: "write_stdin", OK: true, Exit: code(0), Ends: "a"},
	} {
		cs.Add(ev)
	}
	got := cs.List()
	tb := intent.For("")
	if len(got) != 3 || !got[0].Succeeded(tb) || got[1].OK || got[1].Succeeded(tb) || !got[2].OK {
		t.Fatalf("%+v", got)
	}
	r := check.One(context.Background(), check.Spec{Kind: check.KindToolCalled, Tool: "run_command", Args: regexp.MustCompile(`go test`)}, check.Input{Calls: got})
	if !r.Passed {
		t.Fatalf("%+v", r)
	}
}

// file_equals holds when the workspace's file is the expected file byte for
// byte, and says where they part; the expected file is read inside the
// scenario folder only.
func TestFileEquals(t *testing.T) {
	in := input(t)
	dir := t.TempDir()
	money, _ := os.ReadFile(filepath.Join(in.Workspace, "money.go"))
	os.MkdirAll(filepath.Join(dir, "expected"), 0o755)
	os.WriteFile(filepath.Join(dir, "expected", "money.go"), money, 0o644)
	os.WriteFile(filepath.Join(dir, "expected", "other.go"), []byte("package money\n\nimport \"fmt\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "expected", "head.go"), money[:len(money)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "expected", "longer.go"), append(append([]byte{}, money...), "// more\n"...), 0o644)
	os.WriteFile(filepath.Join(t.TempDir(), "outside.go"), money, 0o644)
	os.Symlink(filepath.Join(in.Workspace, "money.go"), filepath.Join(dir, "expected", "escape.go"))
	for _, tc := range []struct {
		name, path, expected string
		passed, broken       bool
		detail               string
	}{
		{"equal", "money.go", "expected/money.go", true, false, "byte for byte"},
		{"differs", "money.go", "expected/other.go", false, false, `differs from expected/other.go at line 3: "import \"math\"", want "import \"fmt\""`},
		// Neither a prefix nor more than the expected file is equal.
		{"the workspace's file holds more", "money.go", "expected/head.go", false, false, "differs from expected/head.go"},
		{"the workspace's file holds less", "money.go", "expected/longer.go", false, false, `want "// more"`},
		{"missing in the workspace", "nope.go", "expected/money.go", false, false, "nope.go does not exist"},
		{"missing expected file", "money.go", "expected/nope.go", false, true, "expected/nope.go"},
		{"expected through a link out of the scenario", "money.go", "expected/escape.go", false, true, "expected/escape.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := check.One(context.Background(), check.Spec{Name: "eq", Kind: check.KindFileEquals, Path: tc.path, Expected: tc.expected, Dir: dir}, in)
			if r.Passed != tc.passed || r.Broken != tc.broken || !strings.Contains(r.Detail, tc.detail) {
				t.Fatalf("%+v, want passed %v broken %v detail %q", r, tc.passed, tc.broken, tc.detail)
			}
		})
	}
}
