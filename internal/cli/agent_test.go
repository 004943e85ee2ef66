package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const agentScript = `steps:
  - expect: {api: chat, last_contains: "Write new"}
    reply: {content: "", tool_calls: [{id: c1, name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - expect: {api: chat, last_contains: "wrote a.txt"}
    reply: {content: "Wrote a.txt."}
`

// A scenario names its agent (a command beside scenario.yaml), or
// scenario run --agent picks one from agents.yaml for every scenario; the
// runs, their receipts and the verdicts say which agent did the work.
func TestScenariosRunWithAnAgentCommand(t *testing.T) {
	bin := testutil.TestAgent(t, "chatagent")
	data, cfg, in := t.TempDir(), t.TempDir(), t.TempDir()
	scenarioYAML := func(id, agent string) string {
		return "id: " + id + "\ntask: Write new into a.txt.\ngit: false\n" + agent +
			"checks:\n  - {kind: file_contains, path: a.txt, text: new}\n  - {kind: only_paths_changed, paths: [a.txt]}\n"
	}
	writeTree(t, in, map[string]string{
		"own-agent/scenario.yaml": scenarioYAML("own-agent", "agent: {kind: command, name: chat, command: [./agent, \"{{task}}\"], tools: native}\n"),
		"own-agent/model.yaml":    agentScript,
		"own-agent/fixture/a.txt": "old\n",
		"no-agent/scenario.yaml":  scenarioYAML("no-agent", ""),
		"no-agent/model.yaml":     agentScript,
		"no-agent/fixture/a.txt":  "old\n",
		"agents.yaml":             "agents:\n  - {name: chat-cmd, kind: command, command: [" + bin + ", \"{{task}}\"], tools: native}\n",
	})
	agentBin, _ := os.ReadFile(bin)
	if err := os.WriteFile(filepath.Join(in, "own-agent", "agent"), agentBin, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PROCTOR_DATA": data, "XDG_CONFIG_HOME": cfg, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	r := invoke(t, env, "scenario", "run", filepath.Join(in, "own-agent"))
	if r.code != ExitOK || !strings.Contains(r.stdout, "1 passed, 0 failed") {
		t.Fatalf("a scenario with its own agent: %+v", r)
	}
	r = invoke(t, env, "scenario", "run", "--agent", "chat-cmd", "--agents", filepath.Join(in, "agents.yaml"), filepath.Join(in, "no-agent"))
	if r.code != ExitOK || !strings.Contains(r.stdout, "1 passed, 0 failed") {
		t.Fatalf("scenario run --agent: %+v", r)
	}
	agents := map[string]string{}
	receipts, _ := filepath.Glob(filepath.Join(data, "runs", "*", bundle.ReceiptFile))
	for _, p := range receipts {
		var rc bundle.Receipt
		raw, _ := os.ReadFile(p)
		if err := json.Unmarshal(raw, &rc); err != nil || rc.Agent == nil {
			t.Fatalf("%s: %v agent %+v", p, err, rc.Agent)
		}
		agents[rc.Scenario.ID] = rc.Agent.Name
	}
	if agents["own-agent"] != "chat" || agents["no-agent"] != "chat-cmd" {
		t.Fatalf("agents by scenario: %v", agents)
	}
	if r = invoke(t, env, "scenario", "run", "--agent", "nobody", "--agents", filepath.Join(in, "agents.yaml"), filepath.Join(in, "no-agent")); r.code != ExitUsage || !strings.Contains(r.stderr, `no agent "nobody"`) {
		t.Fatalf("an unknown agent: %+v", r)
	}
}

// proctor run --agent command runs the command after --; without one, or
// with stray arguments for another agent, it says what to do.
func TestRunWithAnAgentCommand(t *testing.T) {
	bin := testutil.TestAgent(t, "responsesagent")
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": strings.ReplaceAll(agentScript, "api: chat", "api: responses")})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	script := filepath.Join(dir, "model.yaml")
	r := invoke(t, env, "run", "--dir", src, "--task", "Write new into a.txt", "--script", script, "--agent", "command", "--", bin, "{{task}}")
	if r.code != ExitOK || !strings.Contains(r.stdout, "status: awaiting review") || !strings.Contains(r.stdout, "tool write_file") {
		t.Fatalf("run --agent command: %+v", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "command"}, "give the agent's command after --"},
		{[]string{"--agent", "native", "--", bin}, "unexpected argument"},
		{[]string{"--agent", "nobody"}, `no agent "nobody"`},
	} {
		args := append([]string{"run", "--dir", src, "--task", "x", "--script", script}, tc.args...)
		if r := invoke(t, env, args...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %+v, want %q", tc.args, r, tc.want)
		}
	}
}

// The five example scenarios pass with an agent command as with proctor's
// own agent, side by side in one suite: the test chatagent offers
// proctor's tools, continues its conversation for the next turn and for
// the answer to its question (resume:), and asks proctor before a gated
// command (POST /v1/proctor/approvals), which the scenario's approval rules
// decide.
func TestTheExampleScenariosRunWithAnAgentCommand(t *testing.T) {
	bin := testutil.TestAgent(t, "chatagent")
	agents := filepath.Join(t.TempDir(), "agents.yaml")
	writeTree(t, filepath.Dir(agents), map[string]string{"agents.yaml": "agents:\n  - name: chat\n    kind: command\n    command: [" + bin + ", \"{{task}}\"]\n    resume: [" + bin + ", --resume, \"{{task}}\"]\n    tools: native\n"})
	env := map[string]string{"PROCTOR_DATA": t.TempDir(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	out := filepath.Join(t.TempDir(), "suite.json")
	r := invoke(t, env, "scenario", "run", "--agent", "native,chat", "--agents", agents, "--json", out, "../../examples/scenarios")
	if r.code != ExitOK || !strings.Contains(r.stdout, "10 cases") || !strings.Contains(r.stdout, "10 passed, 0 failed, 0 broken") ||
		!strings.Contains(r.stdout, "needs-approval (chat)") || !strings.Contains(r.stdout, "needs-approval (native)") {
		t.Fatalf("the examples with proctor's agent and an agent command: %+v", r)
	}
	var doc struct {
		Cases []struct{ Scenario, Agent string }
	}
	data, _ := os.ReadFile(out)
	if json.Unmarshal(data, &doc); len(doc.Cases) != 10 || doc.Cases[0].Agent != "native" || doc.Cases[1].Agent != "chat" {
		t.Fatalf("suite JSON cases %+v", doc.Cases)
	}
	for _, bad := range []string{"native,,chat", "chat,chat", "nobody"} {
		if r := invoke(t, env, "scenario", "run", "--agent", bad, "--agents", agents, "../../examples/scenarios"); r.code != ExitUsage {
			t.Errorf("--agent %s: %+v", bad, r)
		}
	}
	m := regexp.MustCompile(`verdict needs-approval \(chat\) #1: passed \(\S+\) (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no needs-approval run:\n%s", r.stdout)
	}
	events, _ := os.ReadFile(filepath.Join(m[1], bundle.EventsFile))
	if strings.Count(string(events), `"type":"approval.decided"`) != 2 || !strings.Contains(string(events), `"approved":false`) || !strings.Contains(string(events), `"approved":true`) {
		t.Fatalf("the scenario's rules did not decide the agent's two commands:\n%s", events)
	}
}

// An external agent starts where it works: PWD is its workspace, not the
// folder proctor was started in, and every XDG folder is inside the run.
func TestAnAgentStartsInItsWorkspaceWithItsFoldersInTheRun(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {content: done}\n"})
	probe := `echo "$PWD" > pwd.txt; for v in XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_RUNTIME_DIR; do printenv $v; done > xdg.txt`
	for _, mode := range []string{"workspace", "off"} {
		r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "PWD": t.TempDir()}, "run", "--dir", src, "--task", "probe",
			"--script", filepath.Join(dir, "model.yaml"), "--sandbox", mode, "--agent", "command", "--", "sh", "-c", probe)
		if r.code != ExitOK {
			t.Fatalf("%s: %+v", mode, r)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
	for _, run := range runs {
		ws := filepath.Join(run, "workspace")
		if pwd, _ := os.ReadFile(filepath.Join(ws, "pwd.txt")); strings.TrimSpace(string(pwd)) != ws {
			t.Errorf("PWD %q, want the workspace %s", pwd, ws)
		}
		xdg, _ := os.ReadFile(filepath.Join(ws, "xdg.txt"))
		lines := strings.Fields(string(xdg))
		if len(lines) != 5 {
			t.Fatalf("XDG folders: %q", xdg)
		}
		for _, d := range lines {
			if !strings.HasPrefix(d, run+string(filepath.Separator)) {
				t.Errorf("an XDG folder outside the run: %s", d)
			}
			if info, err := os.Stat(d); err != nil || !info.IsDir() {
				t.Errorf("XDG folder %s: %v", d, err)
			}
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
}

// A call the proxy refuses (a wrong key here) is in the run's record: in
// exchanges.jsonl and as a model.error event, with the status and why.
func TestARefusedCallIsRecorded(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {content: done}\n"})
	agent := `u=${OPENAI_BASE_URL#http://}; hp=${u%%/*}; exec 3<>/dev/tcp/${hp%:*}/${hp#*:}; ` +
		`printf 'POST /v1/chat/completions HTTP/1.0\r\nAuthorization: Bearer not-the-key\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"messages":[]}' >&3; cat <&3`
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, "run", "--dir", src, "--task", "call", "--sandbox", "off",
		"--script", filepath.Join(dir, "model.yaml"), "--agent", "command", "--", "bash", "-c", agent)
	runs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
	if len(runs) != 1 {
		t.Fatalf("%+v", r)
	}
	xs, _ := os.ReadFile(filepath.Join(runs[0], "exchanges.jsonl"))
	events, _ := os.ReadFile(filepath.Join(runs[0], "events.jsonl"))
	if !strings.Contains(string(xs), "refused POST /v1/chat/completions: HTTP 401") || strings.Contains(string(xs), "not-the-key") {
		t.Fatalf("exchanges.jsonl:\n%s", xs)
	}
	if !strings.Contains(string(events), `"model.error"`) || !strings.Contains(string(events), "HTTP 401") {
		t.Fatalf("events.jsonl:\n%s", events)
	}
	if _, probs, err := bundle.ReadExchanges(runs[0], bundle.DefaultLimits()); err != nil || len(probs) > 0 {
		t.Fatalf("the exchanges do not read back: %v %v", probs, err)
	}
}

// An agent whose command tool proctor does not know — "shell", its
// commands a list, its result ending "status: N" — named in its
// agents.yaml entry: one model script's run: intents become calls of it,
// and the checks find its commands and read how they ended, by the entry's
// exit pattern (`proctor check` again too).
func TestAnAgentsOwnToolsNamedInAgentsYAML(t *testing.T) {
	bin := testutil.TestAgent(t, "chatagent")
	data, in := t.TempDir(), t.TempDir()
	writeTree(t, in, map[string]string{
		"own-tools/scenario.yaml": "id: own-tools\ntask: Write the notes.\n" +
			"checks:\n  - {name: wrote, kind: tool_called, tool: run_command, args: \"cp a.txt b.txt\"}\n" +
			"  - {name: tried, kind: tool_called, tool: run_command, args: \"ls nope\", succeeded: false}\n" +
			"  - {name: copied, kind: file_exists, path: b.txt}\n",
		"own-tools/model.yaml":    "steps:\n  - reply: {tool_calls: [{run: cp a.txt b.txt}]}\n  - expect: {last_role: tool, last_contains: \"status: 0\"}\n    reply: {tool_calls: [{run: ls nope}]}\n  - expect: {last_role: tool, last_contains: \"status: 2\"}\n    reply: {content: done}\n",
		"own-tools/fixture/a.txt": "a\n",
		"agents.yaml": "agents:\n  - name: shell-agent\n    kind: command\n    command: [" + bin + ", \"{{task}}\"]\n    env: {CHATAGENT_SHELL: \"1\", CHATAGENT_NO_ASK: \"1\"}\n" +
			"    tools:\n      run: {name: shell, command: \"cmd[]\", exit: '(?m)^status: (-?\\d+)$'}\n",
	})
	env := map[string]string{"PROCTOR_DATA": data, "PROCTOR_AGENTS": filepath.Join(in, "agents.yaml"), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	r := invoke(t, env, "scenario", "run", "--agent", "shell-agent", "--sandbox", "off", filepath.Join(in, "own-tools"))
	if r.code != ExitOK || !strings.Contains(r.stdout, "PASS post.wrote: run_command with arguments matching /cp a.txt b.txt/ called 1 time(s), 1 succeeded (exit 0)") ||
		!strings.Contains(r.stdout, "PASS post.tried: run_command with arguments matching /ls nope/ called 1 time(s), 1 did not succeed (exit 2)") {
		t.Fatalf("%+v", r)
	}
	id := regexp.MustCompile(`runs/(\S+)`).FindStringSubmatch(r.stdout)[1]
	if r := invoke(t, env, "check", "--check", "wrote", id); r.code != ExitOK || !strings.Contains(r.stdout, "1 succeeded (exit 0)") {
		t.Fatalf("proctor check: %+v", r)
	}
	// A tools: entry is checked as it is read.
	for _, tc := range []struct{ tools, want string }{
		{"run: {name: shell}", "tools.run.command: missing"},
		{"run: {name: shell, command: \"cmd[\"}", `"cmd[": want an argument's name`},
		{"run: {name: shell, command: cmd, exit: 'status'}", "has no group"},
		{"copy: {name: cp}", "copy: unknown field"},
	} {
		_, err := external.Parse("agents.yaml", []byte("agents:\n  - name: x\n    kind: command\n    command: [x]\n    tools:\n      "+tc.tools+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.tools, err, tc.want)
		}
	}
}
