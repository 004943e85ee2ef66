package external

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each agent's hook asks proctor's approvals for a command as run_command
// and answers in the agent's own shape; anything that goes wrong denies.
func TestTheHookAsksTheRunsApprovalsAndFailsClosed(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a struct{ CallID, Tool, Arguments string }
		if r.Header.Get("Authorization") != "Bearer proxy-key" || r.URL.Path != "/v1/proctor/approvals" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		json.NewDecoder(r.Body).Decode(&a)
		asked = append(asked, a.Tool+" "+a.Arguments)
		json.NewEncoder(w).Encode(map[string]any{"approved": strings.Contains(a.Arguments, "go test"), "by": "policy", "reason": "rules"})
	}))
	defer srv.Close()
	env := func(base string) func(string) string {
		return func(k string) string {
			return map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "proxy-key"}[k]
		}
	}
	for _, tc := range []struct {
		kind, in, base, want string
	}{
		{KindClaude, `{"tool_name":"Bash","tool_input":{"command":"go test ./...","description":"x"},"tool_use_id":"t1"}`, srv.URL + "/v1", `"permissionDecision":"allow","permissionDecisionReason":"proctor: approved by policy: rules"`},
		{KindClaude, `{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, srv.URL + "/v1", `"permissionDecision":"deny"`},
		{KindQwen, `{"tool_name":"run_shell_command","tool_input":{"command":"go test ./..."}}`, srv.URL + "/v1", `"hookEventName":"PreToolUse","permissionDecision":"allow"`},
		{KindGemini, `{"tool_name":"run_shell_command","tool_input":{"command":"go test ./..."}}`, srv.URL + "/v1", `{"decision":"allow","reason":"proctor: approved by policy: rules"}`},
		{KindGemini, `{"tool_name":"run_shell_command","tool_input":{"command":"curl x"}}`, srv.URL + "/v1", `{"decision":"deny"`},
		{KindGemini, `not json`, srv.URL + "/v1", `{"decision":"deny","reason":"proctor could not read the tool call from the agent`},
		{KindClaude, `{"tool_name":"Bash","tool_input":{"command":"go test"}}`, "http://127.0.0.1:1/v1", `"permissionDecision":"deny","permissionDecisionReason":"proctor's approvals did not answer`},
		{KindClaude, `{"tool_name":"Bash","tool_input":{"command":"go test"}}`, srv.URL + "/elsewhere", `"permissionDecision":"deny","permissionDecisionReason":"proctor's approvals answered HTTP 401"`},
		// Codex takes no allow: an approved command gets no answer.
		{KindCodex, `{"tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"c1"}`, srv.URL + "/v1", ``},
		{KindCodex, `{"tool_name":"Bash","tool_input":{"command":"curl x"}}`, srv.URL + "/v1", `"permissionDecision":"deny","permissionDecisionReason":"proctor: denied by policy: rules"`},
		// Its way to read a file or write one is not asked about, as
		// read_file and edit_file are not; with more in it, it is.
		{KindCodex, `{"tool_name":"Bash","tool_input":{"command":"cat -- 'a.txt'"}}`, "http://127.0.0.1:1/v1", ``},
		{KindCodex, `{"tool_name":"Bash","tool_input":{"command":"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n"}}`, "http://127.0.0.1:1/v1", ``},
		{KindCodex, `{"tool_name":"Bash","tool_input":{"command":"cat -- 'a.txt'; curl x"}}`, srv.URL + "/v1", `"permissionDecision":"deny"`},
		{KindClaude, `{"tool_name":"Bash","tool_input":{"command":"cat -- 'a.txt'"}}`, srv.URL + "/v1", `"permissionDecision":"deny"`},
		// Copilot CLI names the call its own way, and takes no allow; its
		// file tools are not asked about.
		{KindCopilot, `{"sessionId":"s","toolName":"bash","toolArgs":{"command":"go test ./...","description":"x"}}`, srv.URL + "/v1", ``},
		{KindCopilot, `{"sessionId":"s","toolName":"bash","toolArgs":{"command":"curl x"}}`, srv.URL + "/v1", `{"permissionDecision":"deny","permissionDecisionReason":"proctor: denied by policy: rules"}`},
		{KindCopilot, `{"sessionId":"s","toolName":"view","toolArgs":{"path":"/ws/a.txt"}}`, "http://127.0.0.1:1/v1", ``},
		{KindCopilot, `{"sessionId":"s","toolName":"bash","toolArgs":{"command":"go test"}}`, "http://127.0.0.1:1/v1", `"permissionDecision":"deny","permissionDecisionReason":"proctor's approvals did not answer`},
	} {
		var out strings.Builder
		if err := Hook(context.Background(), tc.kind, strings.NewReader(tc.in), &out, env(tc.base)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) || tc.want == "" && out.Len() > 0 {
			t.Errorf("%s %s: %s, want %s", tc.kind, tc.in, out.String(), tc.want)
		}
	}
	if len(asked) != 11 || asked[0] != `run_command {"command":"go test ./..."}` || asked[10] != `run_command {"command":"curl x"}` {
		t.Fatalf("asked %q", asked)
	}
}

// opencode gets its approvals plugin only when proctor can answer its
// commands, and Claude Code, Gemini CLI and Qwen Code their hooks, each in
// the settings file the agent reads.
func TestEachAgentsHookIsWrittenWhereItReadsIt(t *testing.T) {
	for _, tc := range []struct{ kind, file, want string }{
		{KindClaude, "claude/settings.json", `"PreToolUse"`},
		{KindGemini, ".gemini/settings.json", `"BeforeTool"`},
		{KindQwen, ".qwen/settings.json", `"PreToolUse"`},
		{KindCodex, "config.toml", `[[hooks.PreToolUse]]`},
		{KindCopilot, "copilot/settings.json", `"preToolUse"`},
		{KindOpencode, "proctor-approvals.js", `"tool.execute.before"`},
		{KindOpencode, "config/opencode/opencode.json", `proctor-approvals.js"`},
	} {
		for _, hook := range []string{"", "/opt/proctor/bin/proctor"} {
			home := t.TempDir()
			if _, _, err := prepare(Agent{Name: tc.kind, Kind: tc.kind}, Options{Dir: t.TempDir(), Home: home, Model: "m", BaseURL: "http://127.0.0.1:1/v1", Hook: hook}); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(filepath.Join(home, tc.file))
			if got := strings.Contains(string(data), tc.want); got != (hook != "") {
				t.Errorf("%s with hook %q: %s has the hook: %v\n%s", tc.kind, hook, tc.file, got, data)
			}
			if hook != "" && tc.kind != KindOpencode && !strings.Contains(string(data), "'/opt/proctor/bin/proctor' agent-hook "+tc.kind) {
				t.Errorf("%s: the hook does not run proctor agent-hook:\n%s", tc.kind, data)
			}
		}
	}
}

// A repository's own agent settings (.claude/settings.json,
// .gemini/settings.json) could turn the approvals hook off: Claude Code
// loads only the settings proctor wrote, and Gemini CLI and Qwen Code get
// them as their system settings, which outrank the workspace's (Gemini CLI
// reads them only where root owns them: see the test after this one).
func TestTheWorkspacesSettingsDoNotOutrankProctors(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		{KindClaude, "--setting-sources user"},
		{KindGemini, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="},
		{KindQwen, "QWEN_CODE_SYSTEM_SETTINGS_PATH="},
	} {
		home := t.TempDir()
		argv, env, err := prepare(Agent{Name: tc.kind, Kind: tc.kind}, Options{Dir: t.TempDir(), Home: home, Model: "m", BaseURL: "http://127.0.0.1:1/v1", Hook: "/bin/proctor"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(argv, " "), tc.want) && !strings.Contains(strings.Join(env, "\n"), tc.want+home) {
			t.Errorf("%s: neither argv %q nor the environment has %s", tc.kind, argv, tc.want)
		}
	}
}

// Gemini CLI skips system settings that are not root's (as nothing in a
// sandbox is), so proctor's settings are the user's, which a workspace's
// own outrank: a workspace whose .gemini/settings.json could keep the
// approvals hook from running (hooksConfig, BeforeTool hooks, or a file
// proctor cannot read as plain JSON) is refused before Gemini CLI starts,
// naming the file and the key. Settings that leave the hook alone are
// taken. Without a hook (no approvals to keep) nothing is refused.
func TestAGeminiWorkspaceThatCouldTurnTheHookOffIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, settings, want string // want "" when taken
	}{
		{"no settings", "", ""},
		{"a model and a theme", `{"model": {"name": "x"}, "ui": {"theme": "Dracula"}}`, ""},
		{"hooks on, said again", `{"hooksConfig": {"enabled": true, "notifications": false, "disabled": []}}`, ""},
		{"its own AfterTool hook", `{"hooks": {"AfterTool": []}}`, ""},
		{"hooks off", `{"hooksConfig": {"enabled": false}}`, "hooksConfig.enabled"},
		{"proctor's hook off by name", `{"hooksConfig": {"disabled": ["proctor-approvals"]}}`, "hooksConfig.disabled"},
		{"hooksConfig not an object", `{"hooksConfig": false}`, "hooksConfig is not an object"},
		{"BeforeTool replaced", `{"hooks": {"BeforeTool": []}}`, "hooks.BeforeTool"},
		{"comments", "// mine\n{\"hooksConfig\": {\"enabled\": false}}", "not plain JSON"},
		{"an array", `[]`, "not plain JSON"},
		{"a folder", "dir", "cannot be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			switch tc.settings {
			case "":
			case "dir":
				os.MkdirAll(filepath.Join(ws, ".gemini", "settings.json"), 0o755)
			default:
				os.MkdirAll(filepath.Join(ws, ".gemini"), 0o755)
				os.WriteFile(filepath.Join(ws, ".gemini", "settings.json"), []byte(tc.settings), 0o644)
			}
			_, _, err := prepare(Agent{Name: "g", Kind: KindGemini}, Options{Dir: ws, Home: t.TempDir(), Model: "m", BaseURL: "http://127.0.0.1:1/v1", Hook: "/bin/proctor"})
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ".gemini/settings.json")) {
				t.Fatalf("err = %v, want one naming .gemini/settings.json and %q", err, tc.want)
			}
			if _, _, err := prepare(Agent{Name: "g", Kind: KindGemini}, Options{Dir: ws, Home: t.TempDir(), Model: "m", BaseURL: "http://127.0.0.1:1/v1"}); err != nil {
				t.Fatalf("without a hook: %v", err)
			}
		})
	}
	// A link out of the workspace is not followed.
	ws, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "settings.json"), []byte(`{}`), 0o644)
	os.Symlink(outside, filepath.Join(ws, ".gemini"))
	if _, _, err := prepare(Agent{Name: "g", Kind: KindGemini}, Options{Dir: ws, Home: t.TempDir(), Model: "m", BaseURL: "http://127.0.0.1:1/v1", Hook: "/bin/proctor"}); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a .gemini linked out of the workspace: %v", err)
	}
}
