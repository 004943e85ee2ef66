// Package external owns agents that are not proctor's own loop: Codex CLI
// and any agent command that speaks the OpenAI API. It reads their
// definitions (agents.yaml, a scenario's agent:), runs one in a workspace —
// non-interactive, in its own process group, with an environment that
// points it at the run's model proxy and holds no provider key — and reads
// the conversation back from the calls the proxy recorded.
package external

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/tools"
)

// The kinds of agent.
const (
	KindNative  = "native"  // proctor's own agent loop
	KindCodex   = "codex"   // OpenAI Codex CLI, `codex exec`
	KindCommand = "command" // any command that speaks the OpenAI API
)

// Agent is an agent a run can use.
type Agent struct {
	Name string // how receipts and pages name it
	Kind string
	// Command is the argv of a command agent; "{{task}}" in an argument is
	// replaced by the task. For codex it is the codex binary (default
	// "codex" from PATH) and extra arguments of `codex exec`.
	Command []string
	Env     map[string]string // added to the agent's environment
	// Version is the argv that prints the agent's version; empty: codex
	// asks `codex --version`, a command agent is named by the SHA-256 of
	// its executable.
	Version []string
	Config  string // codex: more config.toml, after the lines proctor writes
	// Resume is the argv of a later turn, which continues the agent's
	// conversation ("{{task}}": the next message): a scenario's next turn,
	// the answer to its question, a session's next run. Codex resumes with
	// `codex exec resume --last`; a command agent without Resume runs once.
	Resume []string
	// Tools are the agent's own tools for intents (agents.yaml tools:),
	// looked for before the ones proctor knows: a model script's intents
	// are made calls of them, and checks find them.
	Tools []intent.Tool
	// ToolsOf is the agent whose tools proctor knows that a command agent
	// has (agents.yaml `tools: cline`): its results are read as that
	// agent words them (intent.Table.Exit).
	ToolsOf string
}

// Intents is the table of tools the agent's calls are read with, and its
// results as the agent words them.
func (a Agent) Intents() intent.Table {
	switch {
	case a.IsNative():
		return intent.For(intent.Native, a.Tools...)
	case a.Kind == KindCommand:
		return intent.For(a.ToolsOf, a.Tools...)
	}
	return intent.For(a.Kind, a.Tools...)
}

// CanResume says whether the agent can continue a conversation.
func (a Agent) CanResume() bool {
	b, ok := builtinKind(a.Kind)
	return (ok && b.resume) || len(a.Resume) > 0
}

// Native is proctor's own agent.
func Native() Agent { return Agent{Name: KindNative, Kind: KindNative} }

// IsNative says whether the agent is proctor's own loop.
func (a Agent) IsNative() bool { return a.Kind == "" || a.Kind == KindNative }

// Options are what a run gives its agent.
type Options struct {
	Dir     string   // the workspace: the agent's working folder
	Env     []string // the environment, already without provider keys
	Task    string
	BaseURL string // the model proxy, ending in /v1
	Key     string // the proxy's placeholder key
	Model   string
	Home    string // a private folder for the agent's own files (CODEX_HOME, PROCTOR_AGENT_HOME), kept across its turns
	Resume  bool   // a later turn: continue the conversation with Task as the next message
	// Confine, when set, makes the agent run confined (a sandbox). Codex
	// then does not sandbox its own commands: they run inside proctor's.
	Confine *sandbox.Confinement
	// Hook is the proctor executable, which an agent's permission hook
	// runs (`proctor agent-hook claude`) to ask the run's approvals; ""
	// leaves the agent's commands to the sandbox alone.
	Hook string

	config string // the agent's Config, for its kind's setup
}

// MaxLog is how much of an agent's output is kept.
const MaxLog = 1 << 20

// Result is how an agent command ended.
type Result struct {
	Argv     []string
	Version  string
	ExitCode int    // -1 when it did not exit by itself
	Log      []byte // stdout and stderr as they came, the first MaxLog bytes
	Cut      int64  // bytes of output past MaxLog, not kept
	Err      error  // it could not start, or it failed: what to tell the user
}

// Run runs the agent to its end or until ctx is done, when its whole
// process group is stopped (SIGTERM, then SIGKILL after five seconds).
func Run(ctx context.Context, a Agent, o Options) Result {
	argv, env, err := prepare(a, o)
	if err != nil {
		return Result{ExitCode: -1, Err: err}
	}
	res := Result{Argv: argv, ExitCode: -1}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		res.Err = fmt.Errorf("agent %s: %w%s", a.Name, err, installHint(a))
		return res
	}
	// Asked with the agent's own environment: its private home, not the
	// user's.
	res.Version = version(ctx, a, path, env, o)
	r, err := sandbox.Command{Argv: append([]string{path}, argv[1:]...), Dir: o.Dir, Env: env, MaxOutput: MaxLog,
		Confine: o.Confine, Stop: syscall.SIGTERM, WaitDelay: 5 * time.Second}.Run(ctx)
	res.Log, res.Cut = r.Output, r.Cut
	switch {
	case ctx.Err() != nil:
		res.Err = fmt.Errorf("agent %s was stopped: %w", a.Name, context.Cause(ctx))
	case err != nil:
		res.Err = fmt.Errorf("agent %s: %w", a.Name, err)
	case r.Code > 0:
		res.ExitCode = r.Code
		res.Err = fmt.Errorf("agent %s exited with status %d (its output is in agent.log)", a.Name, res.ExitCode)
	case r.Code < 0:
		res.Err = fmt.Errorf("agent %s was killed by %s (its output is in agent.log)", a.Name, r.Signal)
	default:
		res.ExitCode = 0
	}
	return res
}

// prepare is the argv and environment of the agent.
func prepare(a Agent, o Options) ([]string, []string, error) {
	env := append([]string{}, o.Env...)
	// The proxy, with its placeholder key, for each API's SDKs: OpenAI's
	// (the base URL ends in /v1), Anthropic's and Google's (they add their
	// own version to the root).
	root := strings.TrimSuffix(o.BaseURL, "/v1")
	env = append(env, "OPENAI_BASE_URL="+o.BaseURL, "OPENAI_API_BASE="+o.BaseURL, "OPENAI_API_KEY="+o.Key,
		"ANTHROPIC_BASE_URL="+root, "ANTHROPIC_API_KEY="+o.Key, "GOOGLE_GEMINI_BASE_URL="+root, "GEMINI_API_KEY="+o.Key,
		"OPENAI_MODEL="+o.Model, "PROCTOR_MODEL="+o.Model, "PROCTOR_AGENT_HOME="+o.Home, "CI=1", "NO_COLOR=1", "TERM=dumb")
	// The agent starts where it works: PWD is its workspace (an agent that
	// trusts $PWD over its working folder would work on the folder proctor
	// was started in), and every XDG folder is inside its own home, which
	// it may write and which is kept across its turns.
	env = append(env, "PWD="+o.Dir, "XDG_CONFIG_HOME="+filepath.Join(o.Home, "config"), "XDG_DATA_HOME="+filepath.Join(o.Home, "data"),
		"XDG_STATE_HOME="+filepath.Join(o.Home, "state"), "XDG_CACHE_HOME="+filepath.Join(o.Home, "cache"), "XDG_RUNTIME_DIR="+filepath.Join(o.Home, "runtime"))
	for _, d := range []string{"", "config", "data", "state", "cache", "runtime"} {
		if err := os.MkdirAll(filepath.Join(o.Home, d), 0o700); err != nil {
			return nil, nil, fmt.Errorf("agent %s: make its home folder: %w", a.Name, err)
		}
	}
	if b, ok := builtinKind(a.Kind); ok {
		o.config = a.Config
		more, err := b.setup(o)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: write its configuration: %w", a.Name, err)
		}
		own, err := ownEnv(a, slices.Concat(env, more))
		if err != nil {
			return nil, nil, err
		}
		bin := b.bin
		var extra []string
		if len(a.Command) > 0 {
			bin, extra = a.Command[0], a.Command[1:]
		}
		return append([]string{bin}, b.argv(o, extra)...), slices.Concat(env, more, own), nil
	}
	own, err := ownEnv(a, env)
	if err != nil {
		return nil, nil, err
	}
	env = append(env, own...)
	switch a.Kind {
	case KindCommand:
		command := a.Command
		if o.Resume {
			if command = a.Resume; len(command) == 0 {
				return nil, nil, fmt.Errorf("agent %s cannot continue a conversation: give it a resume: command in agents.yaml", a.Name)
			}
		}
		if len(command) == 0 || command[0] == "" {
			return nil, nil, fmt.Errorf("agent %s: no command to run", a.Name)
		}
		argv := make([]string, len(command))
		for i, arg := range command {
			argv[i] = strings.ReplaceAll(arg, "{{task}}", o.Task)
		}
		return argv, env, nil
	}
	return nil, nil, fmt.Errorf("agent %s: kind %q is not an external agent", a.Name, a.Kind)
}

// ownEnv is the agent's own env: (agents.yaml), after what proctor gives
// it (given): it may change what proctor sets for its kind. A value may
// name a variable the agent is given — $OPENAI_BASE_URL, ${OPENAI_API_KEY}
// (the proxy's placeholder), $PROCTOR_MODEL, $PROCTOR_AGENT_HOME … — so an
// agent configured by variables of its own needs no wrapper script; $$ is
// a dollar sign. Only what the agent is given is expanded: proctor's own
// environment, which holds the provider's real key, is not a source.
func ownEnv(a Agent, given []string) ([]string, error) {
	vars := map[string]string{}
	for _, kv := range given {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		var missing []string
		v := os.Expand(strings.ReplaceAll(a.Env[k], "$$", "\x00"), func(name string) string {
			val, ok := vars[name]
			if !ok {
				missing = append(missing, "$"+name)
			}
			return val
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("agent %s: env %s names %s, which the agent is not given (it is given the proxy's OPENAI_*, ANTHROPIC_*, GEMINI_* variables, PROCTOR_MODEL, PROCTOR_AGENT_HOME, the XDG folders and the run's environment; write $$ for a dollar sign)",
				a.Name, k, strings.Join(missing, ", "))
		}
		out = append(out, k+"="+strings.ReplaceAll(v, "\x00", "$"))
	}
	return out, nil
}

// codexConfig is the config.toml of a codex run: the proxy as its only
// model provider, over the Responses API, never asking for approval.
func codexConfig(o Options, more string) string {
	mode := "workspace-write"
	if o.Confine != nil {
		mode = "danger-full-access" // within proctor's sandbox, which is the one that holds
	}
	return fmt.Sprintf(`# Written by proctor for one run.
model = %q
model_provider = "proctor"
approval_policy = "never"
sandbox_mode = %q

[model_providers.proctor]
name = "proctor"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, o.Model, mode, o.BaseURL) + codexHook(o) + more
}

// codexHook is the PreToolUse hook that sends Codex's commands to proctor's
// approvals, when there is a proctor to run as the hook. Codex runs a hook
// only once it is trusted; proctor wrote it, so the run passes
// --dangerously-bypass-hook-trust.
func codexHook(o Options) string {
	if o.Hook == "" {
		return ""
	}
	return fmt.Sprintf(`
[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
timeout = 86400
`, tools.ShellQuote(o.Hook)+" agent-hook codex")
}

// version is what the agent says its version is, or the digest of its
// executable.
func version(ctx context.Context, a Agent, path string, env []string, o Options) string {
	argv := a.Version
	if _, ok := builtinKind(a.Kind); ok && len(argv) == 0 {
		argv = []string{path, "--version"}
	}
	if len(argv) == 0 {
		f, err := os.Open(path)
		if err != nil {
			return ""
		}
		defer f.Close()
		h := sha256.New()
		io.Copy(h, f)
		return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
	}
	// Confined as the agent is: a program's --version is its code, run
	// like any other.
	var out bytes.Buffer
	r, err := sandbox.Command{Argv: argv, Dir: o.Dir, Env: env, Stdout: &out, Stderr: io.Discard, Confine: o.Confine, Timeout: 30 * time.Second}.Run(ctx)
	if err != nil || r.Code != 0 {
		return ""
	}
	v := strings.TrimSpace(out.String())
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	return clip.Bytes(v, 200)
}

// Missing says that the agent's program is not on the server's PATH, and
// how to install it; "" when it is there (or the agent is proctor's own).
// A Launch form says so before anyone launches it.
func (a Agent) Missing() string {
	program := ""
	switch b, ok := builtinKind(a.Kind); {
	case len(a.Command) > 0:
		program = a.Command[0]
	case ok:
		program = b.bin
	}
	if program == "" {
		return ""
	}
	if _, err := exec.LookPath(program); err != nil {
		return fmt.Sprintf("%s is not on the server's PATH%s", program, installHint(a))
	}
	return ""
}

func installHint(a Agent) string {
	if b, ok := builtinKind(a.Kind); ok {
		return fmt.Sprintf("; proctor installs no agent: install it (npm install -g %s) or set its path in agents.yaml (command: [/path/to/%s])", b.npm, b.bin)
	}
	return ""
}

// Call is one recorded model call, decoded.
type Call struct {
	Request model.Request
	Reply   *model.Response // nil when the call failed
}

// Conversation is what the agent and its model said, read from its calls:
// the longest conversation the agent sent offering tools (its main loop;
// side requests such as a title offer none, and may be longer; later ones
// win a tie) and the reply to it. An agent that never offered a tool is
// read from its longest conversation.
func Conversation(calls []Call) []model.Message {
	best := -1
	better := func(c Call) bool {
		if best < 0 {
			return true
		}
		b := calls[best]
		if (len(c.Request.Tools) > 0) != (len(b.Request.Tools) > 0) {
			return len(c.Request.Tools) > 0
		}
		return len(c.Request.Messages) >= len(b.Request.Messages)
	}
	for i, c := range calls {
		if c.Reply != nil && better(c) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	msgs := append(append([]model.Message{}, calls[best].Request.Messages...), calls[best].Reply.Message)
	names := map[string]string{}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
		if m.Role == model.RoleTool && m.Name == "" {
			msgs[i].Name = names[m.ToolCallID]
		}
	}
	return msgs
}
