package external

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/tools"
)

// The coding agents proctor knows how to drive, beside its own: for each,
// the command it is found as, the npm package it comes in, the model API it
// speaks, how it is run non-interactively against the proxy, and the
// configuration proctor writes into the run's private home so that it
// talks only to the proxy, asks no permission of its own (proctor's sandbox
// and approvals decide), and sends no side traffic a model script would
// have to know about.
const (
	KindClaude   = "claude"   // Anthropic's Claude Code, `claude -p`
	KindCopilot  = "copilot"  // GitHub Copilot CLI, `copilot -p`
	KindGemini   = "gemini"   // Google's Gemini CLI, `gemini -p`
	KindOpencode = "opencode" // opencode, `opencode run`
	KindQwen     = "qwen"     // Qwen Code, `qwen -p`
)

// builtin is one agent kind proctor drives.
type builtin struct {
	kind, bin, npm, api string
	title               string // the agent's own name
	resume              bool   // it can continue its last conversation
	// setup writes the agent's configuration into o.Home and returns the
	// environment it needs besides proctor's.
	setup func(o Options) ([]string, error)
	// argv is its command line after the program: extra are the agent's
	// own extra arguments (agents.yaml command[1:]).
	argv func(o Options, extra []string) []string
	// side are the requests it sends besides its conversation, which a
	// scripted model answers without a step.
	side []SideRequest
}

// SideRequest is a request an agent sends beside its conversation (a title
// for the session, say), known by its system prompt and by offering no
// tools, and the reply a scripted model gives it.
type SideRequest struct {
	SystemHas string
	Reply     string
}

// builtins are the agent kinds proctor drives, Codex first.
func builtins() []builtin {
	return []builtin{
		{kind: KindCodex, title: "Codex CLI", bin: "codex", npm: "@openai/codex", api: model.APIResponses, resume: true,
			setup: func(o Options) ([]string, error) {
				return []string{"CODEX_HOME=" + o.Home}, writeFile(filepath.Join(o.Home, "config.toml"), codexConfig(o, o.config))
			},
			argv: func(o Options, extra []string) []string {
				argv := []string{"exec", "--color", "never"}
				if o.Resume {
					argv = append(argv, "resume", "--last")
				}
				if o.Hook != "" {
					argv = append(argv, "--dangerously-bypass-hook-trust") // proctor's own hook (codexHook)
				}
				return append(append(append(argv, "--skip-git-repo-check", "--model", o.Model), extra...), "--", o.Task)
			}},
		{kind: KindClaude, title: "Claude Code", bin: "claude", npm: "@anthropic-ai/claude-code", api: model.APIMessages, resume: true,
			setup: claudeSetup,
			argv: func(o Options, extra []string) []string {
				// Only the settings proctor wrote: a repository's
				// .claude/settings.json could turn the approvals hook off.
				argv := []string{"-p", "--model", o.Model, "--permission-mode", "bypassPermissions", "--output-format", "text", "--setting-sources", "user"}
				if o.Resume {
					argv = append(argv, "--continue")
				}
				return append(append(argv, extra...), "--", o.Task)
			}},
		{kind: KindGemini, title: "Gemini CLI", bin: "gemini", npm: "@google/gemini-cli", api: model.APIGemini, resume: true,
			setup: func(o Options) ([]string, error) {
				return geminiStyle(o, KindGemini, ".gemini", "gemini-api-key")
			},
			argv: func(o Options, extra []string) []string {
				argv := []string{"--model", o.Model, "--approval-mode", "yolo"}
				if o.Resume {
					argv = append(argv, "--resume", "latest")
				}
				return append(append(argv, extra...), "-p", o.Task)
			}},
		{kind: KindQwen, title: "Qwen Code", bin: "qwen", npm: "@qwen-code/qwen-code", api: model.APIChat, resume: true,
			setup: func(o Options) ([]string, error) {
				env, err := geminiStyle(o, KindQwen, ".qwen", "openai")
				return append(env, "QWEN_CODE_SUPPRESS_YOLO_WARNING=1"), err
			},
			argv: func(o Options, extra []string) []string {
				argv := []string{"--model", o.Model, "--approval-mode", "yolo"}
				if o.Resume {
					argv = append(argv, "--continue")
				}
				return append(append(argv, extra...), "-p", o.Task)
			}},
		{kind: KindOpencode, title: "opencode", bin: "opencode", npm: "opencode-ai", api: model.APIChat, resume: true,
			setup: opencodeSetup,
			argv: func(o Options, extra []string) []string {
				argv := []string{"run", "--model", "proctor/" + o.Model}
				if o.Resume {
					argv = append(argv, "--continue")
				}
				return append(append(argv, extra...), "--", o.Task)
			},
			// opencode asks its small model for a title, with the task as
			// the last message: answered here, it takes no step.
			side: []SideRequest{{SystemHas: "You are a title generator", Reply: "proctor run"}}},
		{kind: KindCopilot, title: "GitHub Copilot CLI", bin: "copilot", npm: "@github/copilot", api: model.APIChat, resume: true,
			setup: copilotSetup,
			argv: func(o Options, extra []string) []string {
				// Everything a prompt-mode run could reach besides the
				// proxy is off; its commands are asked of proctor by its
				// hook, so its own permission prompts are not.
				argv := []string{"--model", o.Model, "--allow-all-tools", "--no-ask-user", "--no-auto-update", "--disable-client-telemetry",
					"--disable-builtin-mcps", "--no-remote", "--no-color", "--silent", "--log-dir", filepath.Join(o.Home, "logs")}
				if o.Resume {
					argv = append(argv, "--continue")
				}
				return append(append(argv, extra...), "-p", o.Task)
			}},
	}
}

// builtinKind is the built-in agent kind called kind.
func builtinKind(kind string) (builtin, bool) {
	for _, b := range builtins() {
		if b.kind == kind {
			return b, true
		}
	}
	return builtin{}, false
}

// BuiltinKinds are the names of the external agent kinds proctor drives.
func BuiltinKinds() []string {
	var names []string
	for _, b := range builtins() {
		names = append(names, b.kind)
	}
	return names
}

// Title is a built-in agent kind's own name and the program it is found
// as ("Claude Code", "claude"); ok is false for another kind.
func Title(kind string) (title, bin string, ok bool) {
	b, ok := builtinKind(kind)
	return b.title, b.bin, ok
}

// API is the model API the agent speaks, "" when proctor does not know it
// (a command agent may speak any).
func (a Agent) API() string {
	if b, ok := builtinKind(a.Kind); ok {
		return b.api
	}
	if a.IsNative() {
		return model.APIChat
	}
	return ""
}

// Side are the side requests of the agent, which a scripted model answers
// without a step.
func (a Agent) Side() []SideRequest {
	b, _ := builtinKind(a.Kind)
	return b.side
}

// quiet is the environment that turns off what agents send besides their
// model calls: telemetry, error reports, update checks.
func quiet() []string {
	return []string{"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "DO_NOT_TRACK=1"}
}

// claudeSetup configures Claude Code: its config folder in the private
// home, every model it would pick (its small model for side calls, its
// sub-agents) the run's, no non-essential traffic, and its permission
// requests for commands routed to proctor's approvals by a PreToolUse hook
// when proctor can be run as one.
func claudeSetup(o Options) ([]string, error) {
	dir := filepath.Join(o.Home, "claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	settings := map[string]any{"permissions": map[string]any{"defaultMode": "bypassPermissions"}, "includeCoAuthoredBy": false}
	if o.Hook != "" {
		settings["hooks"] = map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
			"hooks": []any{map[string]any{"type": "command", "command": tools.ShellQuote(o.Hook) + " agent-hook claude", "timeout": 86400}}}}} // seconds
	}
	data, _ := json.MarshalIndent(settings, "", "  ")
	if err := writeFile(filepath.Join(dir, "settings.json"), string(data)+"\n"); err != nil {
		return nil, err
	}
	env := append([]string{"CLAUDE_CONFIG_DIR=" + dir, "IS_SANDBOX=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"ANTHROPIC_MODEL=" + o.Model, "ANTHROPIC_SMALL_FAST_MODEL=" + o.Model, "ANTHROPIC_DEFAULT_HAIKU_MODEL=" + o.Model,
		"ANTHROPIC_DEFAULT_SONNET_MODEL=" + o.Model, "ANTHROPIC_DEFAULT_OPUS_MODEL=" + o.Model, "CLAUDE_CODE_SUBAGENT_MODEL=" + o.Model}, quiet()...)
	return env, nil
}

// geminiStyle configures Gemini CLI or Qwen Code (its fork): HOME is the
// private home, whose settings file (in folder) picks the auth the proxy
// serves, turns off telemetry, usage statistics, update checks and the
// next-speaker check (a side call), and sends the agent's commands to
// proctor's approvals by its hook; the workspace is trusted.
func geminiStyle(o Options, kind, folder, auth string) ([]string, error) {
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": auth}, "folderTrust": map[string]any{"enabled": false}},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"model":     map[string]any{"name": o.Model, "skipNextSpeakerCheck": true},
	}
	if kind == KindQwen {
		// Qwen Code's background memory extraction (after a turn) and
		// its skill and dream agents are requests of their own, which a
		// model script for the conversation does not expect.
		settings["memory"] = map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false}
	}
	if o.Hook != "" && kind == KindGemini {
		if err := geminiWorkspaceKeepsTheHook(o.Dir); err != nil {
			return nil, err
		}
	}
	if o.Hook != "" {
		// Commands wait for proctor's approvals: Gemini CLI's BeforeTool
		// hook (its timeout in milliseconds), Qwen Code's PreToolUse.
		hook := map[string]any{"type": "command", "name": "proctor-approvals", "command": tools.ShellQuote(o.Hook) + " agent-hook " + kind}
		event := "PreToolUse"
		if kind == KindGemini {
			event = "BeforeTool"
			hook["timeout"] = 86400 * 1000
		} else {
			hook["timeout"] = 86400
		}
		// Said outright, as these settings outrank a workspace's only for
		// the keys they set: its own could turn hooks off.
		settings["hooksConfig"] = map[string]any{"enabled": true}
		settings["disableAllHooks"] = false
		settings["hooks"] = map[string]any{event: []any{map[string]any{"matcher": "run_shell_command", "hooks": []any{hook}}}}
	}
	data, _ := json.MarshalIndent(settings, "", "  ")
	dir := filepath.Join(o.Home, folder)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "settings.json"), string(data)+"\n"); err != nil {
		return nil, err
	}
	// The same settings as the system's, which outrank the workspace's
	// own (.gemini/settings.json in a repository could turn the approvals
	// hook off, or name another model).
	return append([]string{"HOME=" + o.Home, "GEMINI_CLI_TRUST_WORKSPACE=true", "QWEN_CODE_TRUST_WORKSPACE=true",
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + filepath.Join(dir, "settings.json"), "QWEN_CODE_SYSTEM_SETTINGS_PATH=" + filepath.Join(dir, "settings.json")}, quiet()...), nil
}

// geminiWorkspaceKeepsTheHook refuses a workspace whose own Gemini CLI
// settings (.gemini/settings.json, a repository's or one the agent wrote
// in an earlier turn) could keep proctor's approvals hook from running.
// Gemini CLI (0.61) reads a system settings file only where it and every
// folder above it belong to root and no one else may write them, which
// nothing in a sandbox does: proctor's settings are read as the user's,
// which a workspace's outrank. A workspace that is not trusted keeps no
// hook at all, so the workspace's file is read here first, as hostile: it
// may not set hooksConfig (the hooks' on switch and the hooks turned off
// by name) nor BeforeTool hooks, and must be plain JSON.
func geminiWorkspaceKeepsTheHook(workspace string) error {
	if workspace == "" {
		return nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return fmt.Errorf("read the workspace's Gemini CLI settings: %w", err)
	}
	defer root.Close()
	const name = ".gemini/settings.json"
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the workspace's %s cannot be read (%v): proctor cannot tell whether it turns the approvals hook off, so Gemini CLI is not started; remove the file from the repository", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("the workspace's %s cannot be read (not a regular file): proctor cannot tell whether it turns the approvals hook off, so Gemini CLI is not started; remove it from the repository", name)
	}
	var settings struct {
		HooksConfig json.RawMessage            `json:"hooksConfig"`
		Hooks       map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 4<<20)).Decode(&settings); err != nil {
		return fmt.Errorf("the workspace's %s is not plain JSON (%v): proctor cannot tell whether it turns the approvals hook off, so Gemini CLI is not started; remove its comments, or the file", name, err)
	}
	if len(settings.HooksConfig) > 0 && string(settings.HooksConfig) != "null" {
		var hc map[string]json.RawMessage
		if json.Unmarshal(settings.HooksConfig, &hc) != nil {
			return fmt.Errorf("the workspace's %s: hooksConfig is not an object, so Gemini CLI is not started (proctor's approvals hook must run): remove it", name)
		}
		for k, v := range hc {
			switch {
			case k == "enabled" && string(v) == "true", k == "notifications", k == "disabled" && (string(v) == "[]" || string(v) == "null"):
			default:
				return fmt.Errorf("the workspace's %s sets hooksConfig.%s, which could keep proctor's approvals hook from running, so Gemini CLI is not started: remove it from the repository's settings", name, k)
			}
		}
	}
	if _, ok := settings.Hooks["BeforeTool"]; ok {
		return fmt.Errorf("the workspace's %s sets hooks.BeforeTool, which would replace proctor's approvals hook, so Gemini CLI is not started: remove it from the repository's settings", name)
	}
	return nil
}

// copilotSetup configures GitHub Copilot CLI: its configuration in the
// private home (COPILOT_HOME), the proxy as its only model provider (its
// "bring your own key" provider, over Chat Completions), offline (no
// GitHub sign-in, telemetry, web tools, GitHub MCP server or update
// check), and its commands sent to proctor's approvals by a preToolUse
// hook in its user settings, which a repository's own settings cannot
// turn off (disableAllHooks is set false there, and only proctor's
// settings are read: the workspace is never trusted as a folder).
func copilotSetup(o Options) ([]string, error) {
	dir := filepath.Join(o.Home, "copilot")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	settings := map[string]any{"autoUpdate": false, "banner": "never", "memory": false, "disableAllHooks": false}
	if o.Hook != "" {
		// Copilot CLI runs a hook without its own environment: the hook
		// is told where the proxy is.
		settings["hooks"] = map[string]any{"preToolUse": []any{map[string]any{"type": "command",
			"bash": tools.ShellQuote(o.Hook) + " agent-hook copilot", "timeoutSec": 86400,
			"env": map[string]string{"OPENAI_BASE_URL": o.BaseURL, "OPENAI_API_KEY": o.Key}}}}
	}
	data, _ := json.MarshalIndent(settings, "", "  ")
	if err := writeFile(filepath.Join(dir, "settings.json"), string(data)+"\n"); err != nil {
		return nil, err
	}
	env := append([]string{"COPILOT_HOME=" + dir, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL=" + o.BaseURL, "COPILOT_PROVIDER_TYPE=openai", "COPILOT_PROVIDER_WIRE_API=completions",
		"COPILOT_PROVIDER_API_KEY=" + o.Key, "COPILOT_MODEL=" + o.Model, "NO_COLOR=1"}, quiet()...)
	return env, nil
}

// opencodeSetup configures opencode: the proxy as its only provider (its
// main and small model the run's), no sharing, no update, and its own
// permission prompts off.
func opencodeSetup(o Options) ([]string, error) {
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"model": "proctor/" + o.Model, "small_model": "proctor/" + o.Model,
		"provider": map[string]any{"proctor": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "proctor",
			"options": map[string]any{"baseURL": "{env:OPENAI_BASE_URL}", "apiKey": "{env:OPENAI_API_KEY}"},
			"models":  map[string]any{o.Model: map[string]any{"name": o.Model}}}},
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "deny"},
	}
	// The plugin lives outside opencode's config folder, named by its path.
	plugin := filepath.Join(o.Home, "proctor-approvals.js")
	if o.Hook != "" {
		cfg["plugin"] = []string{"file://" + plugin}
		if err := writeFile(plugin, opencodePlugin); err != nil {
			return nil, err
		}
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	dir := filepath.Join(o.Home, "config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "opencode.json"), string(data)+"\n"); err != nil {
		return nil, err
	}
	// No fetch of the models catalogue or default plugins (there is no
	// network in the sandbox: each would wait for its timeout), and no
	// project config, which could name another provider.
	return append([]string{"HOME=" + o.Home, "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_PROJECT_CONFIG=1", "OPENCODE_DISABLE_CLAUDE_CODE=1",
		// opencode installs its plugin package (types only: proctor's
		// plugin imports nothing) from npm at every start, and waits for
		// it when a plugin is configured: offline, that fails at once
		// rather than after a minute of retries.
		"npm_config_offline=true", "npm_config_fetch_retries=0"}, quiet()...), nil
}

func writeFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// opencodePlugin is the plugin proctor gives opencode: before its bash tool
// runs a command it asks the run's approvals through the proxy (as
// run_command, waiting for the rules or a person on the run page), and a
// denial — or anything that goes wrong — stops the call (fail closed) with
// the reason, which opencode gives the model as the tool's error. After
// the command, it tells proctor its exit status (opencode's result does
// not tell the model), so a check can ask whether it succeeded.
const opencodePlugin = `// Written by proctor for one run: opencode's commands wait for proctor's approvals.
export const ProctorApprovals = async () => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "bash") return
    let d
    try {
      const r = await fetch(process.env.OPENAI_BASE_URL + "/proctor/approvals", {
        method: "POST",
        headers: { "Authorization": "Bearer " + process.env.OPENAI_API_KEY, "Content-Type": "application/json" },
        body: JSON.stringify({ call_id: input.callID || "", tool: "run_command", arguments: JSON.stringify({ command: String(output.args?.command ?? "") }) }),
      })
      if (!r.ok) throw new Error("HTTP " + r.status)
      d = await r.json()
    } catch (e) {
      throw new Error("proctor's approvals did not answer: " + e.message)
    }
    if (!d.approved) throw new Error("proctor: denied by " + d.by + (d.reason ? ": " + d.reason : ""))
  },
  // opencode tells its model a command's output, not how it ended: tell proctor.
  "tool.execute.after": async (input, output) => {
    const exit = output?.metadata?.exit
    if (input.tool !== "bash" || typeof exit !== "number") return
    await fetch(process.env.OPENAI_BASE_URL + "/proctor/results", {
      method: "POST",
      headers: { "Authorization": "Bearer " + process.env.OPENAI_API_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ call_id: input.callID || "", exit }),
    }).catch(() => {})
  },
})
`
