package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/scenario"
)

func TestLoadCompleteExample(t *testing.T) {
	s, err := scenario.Load("testdata/fix-rounding")
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "fix-rounding" || len(s.Turns) != 1 || s.Budgets.MaxMessages != 12 || s.Budgets.WallClock != 2*time.Minute ||
		s.Budgets.Bounds.MaxTurns != 8 || s.Approvals.MaxDecisions != 3 || len(s.Approvals.Rules) != 1 || s.Repeat != 2 ||
		s.Model.Script != "model.yaml" || s.Env["GOFLAGS"] != "-mod=mod" || !s.Git || !s.HasTag("go") {
		t.Fatalf("%+v", s)
	}
	if len(s.Checks) != 5 || s.Checks[4].Kind != check.KindExecutable || s.Checks[1].Name != "only-paths-changed-2" {
		t.Fatalf("checks %+v", s.Checks)
	}
	if got := s.ExpandContext("/r", "/w"); got != "You work in /w; the run is recorded in /r." {
		t.Fatalf("context %q", got)
	}
}

func TestACostBudgetIsABound(t *testing.T) {
	s, err := scenario.Parse("s.yaml", []byte("id: x\ntask: t\nbudgets: {max_cost_usd: 0.25, max_tokens: 9000}\n"), "")
	if err != nil || s.Budgets.Bounds.MaxCostUSD != 0.25 || s.Budgets.Bounds.MaxTokens != 9000 {
		t.Fatalf("budgets %+v, %v", s.Budgets.Bounds, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"syntax", "id: x\ntask: t\n  bad: indent\n", "s.yaml:3:1: mapping values are not allowed"},
		{"unknown field with suggestion", "id: x\ntask: t\nbudgets:\n  max_turn: 3\n", "s.yaml:4:3: budgets.max_turn: unknown field; did you mean max_turns?"},
		{"unknown top field", "id: x\ntask: t\ncheks: []\n", "s.yaml:3:1: cheks: unknown field; did you mean checks?"},
		{"letters out of order", "id: x\ntaks: t\n", "s.yaml:2:1: taks: unknown field; did you mean task?"},
		{"wrong type", "id: x\ntask: t\nbudgets: {wall_clock_s: ten}\n", `budgets.wall_clock_s: want a positive integer, got "ten"`},
		{"bad cost budget", "id: x\ntask: t\nbudgets: {max_cost_usd: -1}\n", `s.yaml:3:25: budgets.max_cost_usd: "-1" is not a positive number of US dollars (e.g. 0.50)`},
		{"bad token budget", "id: x\ntask: t\nbudgets: {max_tokens: many}\n", `budgets.max_tokens: "many" is not a positive integer`},
		{"boolean repeat", "id: x\ntask: t\nrepeat: true\n", `repeat: want a positive integer, got "true"`},
		{"literal secret", "id: x\ntask: t\nenv:\n  GITHUB_TOKEN: ghp_123\n", "env.GITHUB_TOKEN: a literal secret is not allowed"},
		{"task and turns", "id: x\ntask: t\nturns: [a, b]\n", "task: give task or turns, not both"},
		{"no task", "id: x\n", "task: missing"},
		{"no id", "task: t\n", "id: missing"},
		{"bad check kind", "id: x\ntask: t\nchecks:\n  - kind: file_contain\n    path: a\n    text: b\n", `unknown kind "file_contain"; did you mean file_contains?`},
		{"file_equals without expected", "id: x\ntask: t\nchecks:\n  - kind: file_equals\n    path: a\n", "checks[0].expected: missing; a file_equals check needs it"},
		{"file_equals out of the folder", "id: x\ntask: t\nchecks:\n  - kind: file_equals\n    path: a\n    expected: ../a\n", `checks[0].expected: "../a" must be a file inside the scenario folder`},
		{"made_from not a run id", "id: x\ntask: t\nmade_from: ../etc\n", `made_from: "../etc" is not a run id`},
		{"bad succeeded", "id: x\ntask: t\nchecks:\n  - {kind: tool_called, tool: run_command, succeeded: yes}\n", `checks[0].succeeded: "yes" is not one of true`},
		{"succeeded on another kind", "id: x\ntask: t\nchecks:\n  - {kind: file_exists, path: a, succeeded: true}\n", `checks[0].succeeded: only a tool_called or tool_not_called check`},
		{"check missing field", "id: x\ntask: t\nchecks:\n  - kind: file_contains\n    path: a\n", "checks[0].text: missing; a file_contains check needs it"},
		{"check path escapes", "id: x\ntask: t\nchecks:\n  - kind: file_exists\n    path: ../etc/passwd\n", "must be a path inside the workspace"},
		{"unknown template variable", "id: x\ntask: t\ncontext: in $HOME\n", "context: unknown variable $HOME"},
		{"bad approval", "id: x\ntask: t\napprovals: {default: maybe}\n", `approvals.default: want approve or deny, got "maybe"`},
		{"bad rule regex", "id: x\ntask: t\napprovals:\n  rules:\n    - tool: run_command\n      args: \"(\"\n", "approvals.rules[0].args: not a regular expression"},
		{"duplicate check names", "id: x\ntask: t\nchecks:\n  - {name: a, kind: budget_not_exceeded}\n  - {name: a, kind: budget_not_exceeded}\n", `"a" is used twice`},
		{"empty", "", "empty"},
		{"sandbox mode", "id: x\ntask: t\nsandbox: loose\n", `sandbox: "loose": want workspace, strict or off`},
		{"empty sandbox mode", "id: x\ntask: t\nsandbox: \"\"\n", `sandbox: "": want workspace, strict or off`},
		{"agent kind", "id: x\ntask: t\nagent: {kind: shell}\n", `agent.kind: "shell": want one of native, codex, claude, gemini, qwen, opencode, copilot, command`},
		{"agent without a command", "id: x\ntask: t\nagent: {kind: command}\n", "agent.command: missing"},
		{"source without repo", "id: x\ntask: t\nsource: {ref: main}\n", "source.repo: missing"},
		{"source ref", "id: x\ntask: t\nsource: {repo: o/n, ref: a..b}\n", "(ref_invalid)"},
		{"source commit", "id: x\ntask: t\nsource: {repo: o/n, commit: abc}\n", "(commit_invalid)"},
		{"source repository", "id: x\ntask: t\nsource: {repo: \"git@example.com:o/n\"}\n", "(repository_invalid)"},
		{"source field", "id: x\ntask: t\nsource: {repo: o/n, branch: main}\n", "source.branch: unknown field"},
		{"external agent with turns", "id: x\nturns: [a, b]\nagent: {kind: command, command: [a]}\n", "agent: turns need an agent that can continue a conversation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse("s.yaml", []byte(tc.src), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestDiscoverKeepsGoingPastBadFolders(t *testing.T) {
	root := t.TempDir()
	os.CopyFS(filepath.Join(root, "fix-rounding"), os.DirFS("testdata/fix-rounding"))
	os.Chmod(filepath.Join(root, "fix-rounding", "checks", "rounds-exec"), 0o755)
	os.MkdirAll(filepath.Join(root, "broken"), 0o755)
	os.WriteFile(filepath.Join(root, "broken", "scenario.yaml"), []byte("id: broken\ntask: [\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "no-fixture"), 0o755)
	os.WriteFile(filepath.Join(root, "no-fixture", "scenario.yaml"), []byte("id: no-fixture\ntask: t\n"), 0o644)
	got, probs := scenario.Discover(root, filepath.Join(root, "missing"))
	if len(got) != 1 || got[0].ID != "fix-rounding" {
		t.Fatalf("scenarios %v", got)
	}
	text := ""
	for _, p := range probs {
		text += p.Path + ": " + p.Err.Error() + "\n"
	}
	for _, want := range []string{"broken/scenario.yaml:2", "no-fixture/fixture: missing", "missing: no such file"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/fix-rounding/scenario.yaml")
	f.Add(string(data))
	f.Add("id: x\nturns: [a, b]\nchecks: [{kind: command, command: true}]\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := scenario.Parse("s.yaml", []byte(src), "")
		if err == nil && (s.ID == "" || len(s.Turns) == 0 || s.Repeat < 1) {
			t.Fatalf("accepted an incomplete scenario: %+v", s)
		}
	})
}

// A scenario.yaml that is a symlink out of its folder is refused unread, so
// no parse error can show what the target holds.
func TestSymlinkedScenarioFileOutOfTheFolderIsRefused(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("db_password: hunter2-very-secret\n["), 0o644)
	dir := filepath.Join(root, "sneaky")
	os.MkdirAll(filepath.Join(dir, "fixture"), 0o755)
	os.Symlink(secret, filepath.Join(dir, "scenario.yaml"))
	inside := filepath.Join(root, "inside")
	os.MkdirAll(filepath.Join(inside, "fixture"), 0o755)
	os.WriteFile(filepath.Join(inside, "real.yaml"), []byte("id: inside\ntask: t\n"), 0o644)
	os.Symlink("real.yaml", filepath.Join(inside, "scenario.yaml"))

	got, probs := scenario.Discover(root)
	if len(got) != 1 || got[0].ID != "inside" {
		t.Fatalf("scenarios %v (a symlink inside the folder is fine)", got)
	}
	if len(probs) != 1 || !strings.Contains(probs[0].Err.Error(), "leads out of the scenario folder") {
		t.Fatalf("problems %v", probs)
	}
	if strings.Contains(probs[0].Err.Error(), "hunter2") || strings.Contains(probs[0].Err.Error(), "db_password") {
		t.Fatalf("the error echoes the target's text: %v", probs[0].Err)
	}
}
