package external

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
)

func TestParseAgents(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string // want: "" ok, else a problem the error must name
	}{
		{"command", "agents:\n  - name: mine\n    kind: command\n    command: [./mine, \"{{task}}\"]\n    env: {QUIET: \"1\"}\n", ""},
		{"codex with a path", "agents:\n  - name: codex-dev\n    kind: codex\n    command: [/opt/codex/bin/codex]\n", ""},
		{"empty file", "", ""},
		{"unknown kind", "agents:\n  - {name: x, kind: shell, command: [a]}\n", "a.yaml:2:21: agents[0].kind: \"shell\": want one of native, codex, claude, gemini, qwen, opencode, copilot, command"},
		{"no command", "agents:\n  - {name: x, kind: command}\n", "agents[0].command: missing"},
		{"no kind", "agents:\n  - {name: x, command: [a]}\n", "agents[0].kind: missing"},
		{"no name", "agents:\n  - {kind: command, command: [a]}\n", "agents[0].name: missing"},
		{"bad name", "agents:\n  - {name: ../x, kind: command, command: [a]}\n", "agents[0].name: \"../x\""},
		{"twice", "agents:\n  - {name: x, kind: command, command: [a]}\n  - {name: x, kind: command, command: [b]}\n", "defined twice"},
		{"a built-in name", "agents:\n  - {name: native, kind: command, command: [a]}\n", "defined twice"},
		{"env proctor sets", "agents:\n  - {name: x, kind: command, command: [a], env: {OPENAI_API_KEY: k}}\n", "env.OPENAI_API_KEY: not a variable"},
		{"typo", "agents:\n  - {name: x, kind: command, comand: [a]}\n", "did you mean command?"},
		{"syntax", "agents: [\n", "a.yaml:"},
		{"the tools of an agent proctor knows", "agents:\n  - {name: c, kind: command, command: [cline], tools: cline}\n", ""},
		{"the tools of an agent proctor does not know", "agents:\n  - {name: c, kind: command, command: [x], tools: kline}\n", `agents[0].tools: "kline": want the agent whose tools these are, one of native, claude, continue, cline`},
		{"the tools of another agent for a built-in one", "agents:\n  - {name: c, kind: claude, tools: cline}\n", "agents[0].tools: only a command agent is told whose tools it has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("a.yaml", []byte(tc.src))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			case tc.want == "" && f == nil:
				t.Fatal("no file")
			}
		})
	}
}

// A result is read as the agent that made it words it: the agent's kind,
// or for a command agent the agent whose tools it has (tools: continue),
// else nobody's wording.
func TestAnAgentsResultsAreReadAsItWordsThem(t *testing.T) {
	f, err := Parse("agents.yaml", []byte("agents:\n  - {name: cn, kind: command, command: [cn], tools: continue}\n  - {name: kilo, kind: command, command: [kilo]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	failed := "Error executing tool Bash: Error (exit code 3): err-line"
	for _, tc := range []struct {
		agent string
		want  int // -2: not known
	}{{"cn", 3}, {"kilo", -2}, {"claude", 0}, {"native", -2}} {
		a, err := f.Find(tc.agent)
		if err != nil {
			t.Fatal(err)
		}
		got := -2
		if code := a.Intents().Exit("Bash", failed, false); code != nil {
			got = *code
		}
		if got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.agent, got, tc.want)
		}
	}
}

func TestFindAgents(t *testing.T) {
	f, err := Parse("agents.yaml", []byte("agents:\n  - {name: mine, kind: command, command: [./mine]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]string{"": KindNative, "native": KindNative, "codex": KindCodex, "mine": KindCommand} {
		if a, err := f.Find(name); err != nil || a.Kind != kind {
			t.Errorf("Find(%q) = %+v, %v; want kind %s", name, a, err, kind)
		}
	}
	if _, err := f.Find("theirs"); err == nil || !strings.Contains(err.Error(), "native, codex, claude, gemini, qwen, opencode, copilot, mine") {
		t.Errorf("an unknown agent: %v", err)
	}
}

func TestPrepare(t *testing.T) {
	home := t.TempDir()
	o := Options{Dir: t.TempDir(), Env: []string{"PATH=/bin"}, Task: "fix it; rm -rf /", BaseURL: "http://127.0.0.1:1/v1", Key: "proctor-proxy-k", Model: "m", Home: home}
	argv, env, err := prepare(Agent{Name: "mine", Kind: KindCommand, Command: []string{"./mine", "--task={{task}}"}, Env: map[string]string{"Q": "1"}}, o)
	if err != nil || strings.Join(argv, "|") != "./mine|--task=fix it; rm -rf /" {
		t.Fatalf("argv %q %v: the task must be one argument, never a shell word", argv, err)
	}
	joined := strings.Join(env, "\n")
	for _, want := range []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1", "OPENAI_API_KEY=proctor-proxy-k", "OPENAI_MODEL=m", "Q=1", "PATH=/bin"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	argv, env, err = prepare(Agent{Name: "codex", Kind: KindCodex}, o)
	if err != nil || argv[0] != "codex" || argv[1] != "exec" || argv[len(argv)-1] != o.Task || argv[len(argv)-2] != "--" {
		t.Fatalf("codex argv %q %v", argv, err)
	}
	if !strings.Contains(strings.Join(env, "\n"), "CODEX_HOME="+home) {
		t.Error("codex gets no CODEX_HOME")
	}
	cfg, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil || !strings.Contains(string(cfg), `base_url = "http://127.0.0.1:1/v1"`) || !strings.Contains(string(cfg), `wire_api = "responses"`) {
		t.Fatalf("codex config %s %v", cfg, err)
	}
}

func TestConversationIsTheLongestOneTheAgentSent(t *testing.T) {
	user := func(s string) model.Message { return model.Message{Role: model.RoleUser, Content: s} }
	reply := func(s string) *model.Response {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: s}}
	}
	calls := []Call{
		{Request: model.Request{Messages: []model.Message{user("task")}}, Reply: &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file"}}}}},
		{Request: model.Request{Messages: []model.Message{user("title this")}}, Reply: reply("A title")},
		{Request: model.Request{Messages: []model.Message{user("task"), {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "read_file"}}}, {Role: model.RoleTool, ToolCallID: "c1", Content: "x"}}}, Reply: reply("done")},
		{Request: model.Request{Messages: []model.Message{user("summarise")}}}, // failed
	}
	msgs := Conversation(calls)
	if len(msgs) != 4 || msgs[3].Content != "done" || msgs[2].Name != "read_file" {
		t.Fatalf("conversation %+v", msgs)
	}
	// A side request offers no tools, and may be longer (opencode's title
	// request is): the conversation is the one that offered tools.
	tools := []model.ToolSpec{{Name: "bash"}}
	side := []Call{
		{Request: model.Request{Messages: []model.Message{user("task")}, Tools: tools}, Reply: reply("Which version?")},
		{Request: model.Request{Messages: []model.Message{user("title this"), user("task")}}, Reply: reply("A title")},
	}
	if msgs := Conversation(side); len(msgs) != 2 || msgs[1].Content != "Which version?" {
		t.Fatalf("conversation %+v", msgs)
	}
	if Conversation(calls[3:]) != nil {
		t.Fatal("a conversation from failed calls only")
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"agents:\n  - {name: x, kind: command, command: [a, \"{{task}}\"], env: {A: b}}\n", "agents: []\n", "agents:\n  - kind: codex\n", "x: 1"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("agents.yaml", data)
		if err == nil {
			for _, a := range file.Agents {
				if a.Name == "" || !agentName.MatchString(a.Name) {
					t.Fatalf("accepted an agent with name %q", a.Name)
				}
			}
		}
	})
}

// A receipt may name every kind of agent there is.
func TestReceiptsKnowEveryAgentKind(t *testing.T) {
	if got, want := strings.Join(bundle.AgentKinds(), ","), strings.Join(Kinds(), ","); got != want {
		t.Fatalf("bundle.AgentKinds() = %s, Kinds() = %s", got, want)
	}
}

// An agent configured by variables of its own is given the proxy's
// address by naming it in agents.yaml env: — only what the agent is given
// is expanded, never proctor's own environment (which holds the provider's
// real key).
func TestAnAgentsEnvNamesWhatTheAgentIsGiven(t *testing.T) {
	t.Setenv("REAL_PROVIDER_KEY", "sk-real")
	o := Options{Dir: t.TempDir(), Env: []string{"PATH=/bin"}, Task: "t", BaseURL: "http://127.0.0.1:1/v1", Key: "proctor-proxy-k", Model: "m", Home: t.TempDir()}
	a := Agent{Name: "mine", Kind: KindCommand, Command: []string{"./mine"}, Env: map[string]string{
		"MY_BASE": "$OPENAI_BASE_URL", "MY_KEY": "${OPENAI_API_KEY}", "MY_MODEL": "proctor/${PROCTOR_MODEL}", "PRICE": "$$5", "PLAIN": "x"}}
	_, env, err := prepare(a, o)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(env, "\n")
	for _, want := range []string{"MY_BASE=http://127.0.0.1:1/v1", "MY_KEY=proctor-proxy-k", "MY_MODEL=proctor/m", "PRICE=$5", "PLAIN=x"} {
		if !strings.Contains(joined, want+"\n") && !strings.HasSuffix(joined, want) {
			t.Errorf("env lacks %s:\n%s", want, joined)
		}
	}
	// A builtin kind's own variables may be named too.
	if _, env, err := prepare(Agent{Name: "cp", Kind: KindCopilot, Env: map[string]string{"X": "$COPILOT_HOME"}}, o); err != nil || !strings.Contains(strings.Join(env, "\n"), "X="+filepath.Join(o.Home, "copilot")) {
		t.Errorf("copilot: %v", err)
	}
	for _, bad := range []string{"$REAL_PROVIDER_KEY", "${HOME_OF_NOBODY}"} {
		a.Env = map[string]string{"LEAK": bad}
		if _, _, err := prepare(a, o); err == nil || !strings.Contains(err.Error(), "env LEAK names $"+strings.Trim(bad, "${}")+", which the agent is not given") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
