package launch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/testutil"
)

func launcher(t *testing.T) (*launch.Launcher, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	data, root := t.TempDir(), t.TempDir()
	demo.WriteFixture(filepath.Join(root, "invoice"))
	os.Symlink(t.TempDir(), filepath.Join(root, "escape"))
	script, _ := os.ReadFile("../demo/demo.yaml")
	os.WriteFile(filepath.Join(root, "demo.yaml"), script, 0o644)
	r := &run.Runner{DataDir: data, Environ: os.Environ()}
	q := jobs.New(r, 1)
	context.AfterFunc(ctx, q.Close)
	t.Cleanup(func() { cancel(); q.Wait(context.Background()) })
	return &launch.Launcher{Runner: r, Queue: q, SourceRoots: []string{root}, ScenarioRoots: []string{"../../examples/scenarios"}}, data
}

// Every field of a task launch is checked, each problem beside its field.
func TestLaunchChecksEachField(t *testing.T) {
	l, _ := launcher(t)
	ok := launch.Task{Root: "0", Path: "invoice", Task: "Fix the rounding bug", Script: "demo.yaml", Allow: "go test"}
	tests := []struct {
		name  string
		edit  func(*launch.Task)
		field string
		want  string
	}{
		{"no such root", func(v *launch.Task) { v.Root = "7" }, "root", "choose one of the source roots"},
		{"sandbox mode", func(v *launch.Task) { v.Sandbox = "loose" }, "sandbox", "want workspace, strict or off"},
		{"absolute", func(v *launch.Task) { v.Path = "/etc" }, "path", "not an absolute path"},
		{"dot dot", func(v *launch.Task) { v.Path = "../x" }, "path", `".." is not allowed`},
		{"symlink out", func(v *launch.Task) { v.Path = "escape" }, "path", "leads outside the root"},
		{"missing folder", func(v *launch.Task) { v.Path = "nope" }, "path", "no such folder"},
		{"a file, not a folder", func(v *launch.Task) { v.Path = "demo.yaml" }, "path", "not a folder"},
		{"no task", func(v *launch.Task) { v.Task = " " }, "task", "say what the agent should do"},
		{"bad bound", func(v *launch.Task) { v.MaxTurns = "many" }, "max_turns", "not a positive integer"},
		{"no models file", func(v *launch.Task) { v.Script, v.Model = "", "gpt" }, "model", "no models.yaml"},
		{"no such built-in model", func(v *launch.Task) { v.Script, v.Model = "", "builtin:nope" }, "model", `no built-in script "nope"; there are notes, demo`},
		{"no model at all: said at the script", func(v *launch.Task) { v.Script, v.Model = "", "" }, "script", "choose a model profile, or give a model script"},
		{"script missing", func(v *launch.Task) { v.Script = "nope.yaml" }, "script", `no file "nope.yaml" under`},
		{"script out", func(v *launch.Task) { v.Script = "escape/x.yaml" }, "script", "cannot read it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := ok
			tc.edit(&v)
			id, err := l.Launch(v)
			var errs launch.FieldErrors // the error is the problems by field
			if id != "" || !errors.As(err, &errs) || !strings.Contains(errs[tc.field], tc.want) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("errors %v, want %s: %q", err, tc.field, tc.want)
			}
		})
	}
	id, err := l.Launch(ok)
	if err != nil || id == "" { // nil itself, not an empty FieldErrors
		t.Fatalf("a good launch: %#v", err)
	}
	if _, known := l.Queue.Get(id); !known {
		t.Fatal("the run is not in the queue")
	}
}

// A suite's runs are queued jobs carrying the suite; a suite with nothing
// to run or a bad repeat is refused by field.
func TestSuiteQueuesItsRuns(t *testing.T) {
	l, data := launcher(t)
	if _, errs := fields(l.Suite(launch.SuiteRequest{Scenarios: []string{"nope"}})); errs["repeat"] == "" || errs["scenarios"] == "" {
		t.Fatalf("errors %v", errs)
	}
	id, errs := fields(l.Suite(launch.SuiteRequest{Tags: []string{"refactor"}, Repeat: 2}))
	if len(errs) > 0 || !l.Launched(id) {
		t.Fatalf("launch: %q %v", id, errs)
	}
	testutil.Eventually(t, 30*time.Second, "both runs of the suite ending", func() bool {
		n := 0
		entries, _ := os.ReadDir(filepath.Join(data, "runs"))
		for _, e := range entries {
			if rb, err := bundle.ReadRun(filepath.Join(data, "runs", e.Name()), bundle.DefaultLimits()); err == nil && rb.Receipt.EndedAt != nil &&
				rb.Receipt.Scenario != nil && rb.Receipt.Scenario.Suite == id {
				n++
			}
		}
		return n == 2 && len(l.SuiteQueued(id)) == 0
	})
}

// A task launch picks its agent by name from agents.yaml (the browser never
// gives a command); the run is done by that agent, and an unknown name is
// refused beside its field.
func TestLaunchWithAnAgentOfAgentsYAML(t *testing.T) {
	l, data := launcher(t)
	bin := testutil.TestAgent(t, "chatagent")
	agents := filepath.Join(t.TempDir(), "agents.yaml")
	os.WriteFile(agents, []byte("agents:\n  - {name: chat, kind: command, command: ["+bin+", \"{{task}}\"], tools: native}\n"), 0o644)
	l.Agents = func() (*external.File, error) { return external.Load(agents) }
	root := l.SourceRoots[0]
	os.WriteFile(filepath.Join(root, "invoice", "a.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(root, "chat.yaml"), []byte("steps:\n  - expect: {api: chat}\n    reply: {content: \"\", tool_calls: [{id: c1, name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n"), 0o644)
	v := launch.Task{Root: "0", Path: "invoice", Task: "Write new into a.txt", Script: "chat.yaml", Agent: "nobody"}
	if _, errs := fields(l.Launch(v)); !strings.Contains(errs["agent"], `no agent "nobody"`) {
		t.Fatalf("errors %v", errs)
	}
	if names, err := l.AgentNames(); err != nil || strings.Join(names, ",") != "native,codex,claude,gemini,qwen,opencode,copilot,chat" {
		t.Fatalf("agent names %v %v", names, err)
	}
	v.Agent = "chat"
	id, errs := fields(l.Launch(v))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var rb *bundle.Run
	testutil.Eventually(t, 30*time.Second, "the run ending", func() bool {
		b, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
		rb = b
		return err == nil && b.Receipt.EndedAt != nil
	})
	if rb.Receipt.Agent == nil || rb.Receipt.Agent.Name != "chat" || rb.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("status %s agent %+v failure %+v", rb.Receipt.Status, rb.Receipt.Agent, rb.Receipt.Failure)
	}
	// A broken agents.yaml refuses its own agents, with the file's
	// problem, and leaves proctor's own agent alone.
	os.WriteFile(agents, []byte("agents:\n  - {name: chat, kind: nonsense}\n"), 0o644)
	v.Agent = "chat"
	if _, errs := fields(l.Launch(v)); !strings.Contains(errs["agent"], "agents.yaml") {
		t.Fatalf("errors %v", errs)
	}
	v.Agent, v.Script = "native", ""
	if _, errs := fields(l.Launch(v)); errs["agent"] != "" {
		t.Fatalf("a broken agents.yaml refused the native agent: %v", errs)
	}
}

// A launch on a git repository is checked field by field (repository, ref,
// commit), refuses the server's own folders, and runs on the clone.
func TestLaunchOnAGitRepository(t *testing.T) {
	l, data := launcher(t)
	base, caEnv, commits := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	ok := launch.Task{Root: "0", Task: "Look around", Script: "demo.yaml", Repo: base + "/public.git"}
	for _, tc := range []struct {
		edit        func(*launch.Task)
		field, want string
	}{
		{func(v *launch.Task) { v.Repo = "git@example.com:o/n" }, "repo", "only https URLs"},
		{func(v *launch.Task) { v.Repo = "/etc" }, "repo", "from the dashboard a repository is an https URL or owner/name"},
		{func(v *launch.Task) { v.Repo = "file:///etc" }, "repo", "from the dashboard"},
		{func(v *launch.Task) { v.Ref = "a..b" }, "ref", "no .."},
		{func(v *launch.Task) { v.Commit = "abc" }, "commit", "40-character"},
	} {
		v := ok
		tc.edit(&v)
		if _, errs := fields(l.Launch(v)); !strings.Contains(errs[tc.field], tc.want) {
			t.Errorf("%+v: errors %v, want %s: %q", v, errs, tc.field, tc.want)
		}
	}
	id, errs := fields(l.Launch(ok))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var rb *bundle.Run
	testutil.Eventually(t, 30*time.Second, "the run ending", func() bool {
		b, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
		rb = b
		return err == nil && b.Receipt.EndedAt != nil
	})
	if src := rb.Receipt.Source; src.Kind != "git" || src.CommitSHA != commits["public"] || src.Repository != base+"/public.git" {
		t.Fatalf("source %+v failure %+v", src, rb.Receipt.Failure)
	}
}

// Build is how every run is made (the CLI, the form, the API, a session's
// next message, the demo): a source folder is named through its links as a
// rule names it, and the approver asks the allowed commands, then the
// rules of where the run works, then Ask.
func TestBuildNamesTheSourceAndItsRulesDecide(t *testing.T) {
	data, real := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := &run.Runner{DataDir: data}
	if _, err := rules.At(data).Add(rules.Rule{Tool: "run_command", Match: "prefix", Command: "make", Scope: rules.ScopeSource, Target: real, CreatedBy: "local:rita"}); err != nil {
		t.Fatal(err)
	}
	call := func(command string) agent.ApprovalRequest {
		return agent.ApprovalRequest{Tool: "run_command", Args: `{"command":"` + command + `"}`}
	}
	tests := []struct {
		name    string
		req     launch.Request
		command string
		by      string // who decides; "" is nobody: refused
	}{
		{"a rule of the folder, named through a link", launch.Request{Dir: link}, "make test", "rule"},
		{"the allowed commands first", launch.Request{Dir: link, Allow: []string{"make"}}, "make test", "policy"},
		{"a command no rule allows goes to Ask", launch.Request{Dir: link, Ask: alwaysAsk{}}, "go test", "asked"},
		{"nobody to ask: refused", launch.Request{Dir: link}, "go test", ""},
		{"another folder's rule does not apply", launch.Request{Dir: t.TempDir()}, "make test", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, errs := fields(launch.Build(context.Background(), r, tc.req))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if tc.req.Dir == link && spec.SourceDir != real {
				t.Errorf("source folder %s, want %s", spec.SourceDir, real)
			}
			if !bundle.ValidID(spec.RunID) || spec.Bounds.MaxTurns == 0 {
				t.Errorf("a new id and the default bounds: %q %+v", spec.RunID, spec.Bounds)
			}
			d, err := spec.Approver.Approve(context.Background(), call(tc.command))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.by == "" && d.Approved:
				t.Errorf("approved by %s, want refused", d.By)
			case tc.by != "" && (!d.Approved || !strings.Contains(d.By, tc.by)):
				t.Errorf("decided %+v, want approved by %s", d, tc.by)
			}
		})
	}
	if _, errs := fields(launch.Build(context.Background(), r, launch.Request{Dir: filepath.Join(real, "missing")})); errs["dir"] == "" {
		t.Errorf("a missing folder: %v, want a problem of field dir", errs)
	}
	if _, errs := fields(launch.Build(context.Background(), r, launch.Request{Resume: "20260101-000000-nosuch"})); errs["resume"] == "" {
		t.Errorf("resuming no run: %v, want a problem of field resume", errs)
	}
}

type alwaysAsk struct{}

func (alwaysAsk) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	return agent.Decision{Approved: true, By: "asked"}, nil
}

// A built-in scripted model needs no models.yaml and no script file.
func TestLaunchWithABuiltInModel(t *testing.T) {
	l, _ := launcher(t)
	spec, errs := fields(l.TaskSpec("20261206-071500-bltin1", launch.Task{Root: "0", Path: "invoice", Task: "Write notes", Model: launch.BuiltinModel + "notes"}))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if spec.Model.Script == nil || spec.Model.Profile != nil {
		t.Fatalf("model: %+v, want the built-in notes script", spec.Model)
	}
}

// A conversation's next message (a request for changes, a session's next
// run) goes only to a model that can answer it: the demo's built-in
// script answers only its own task and is refused, naming the ones that
// answer any; the first launch takes every built-in script.
func TestANextMessageTakesOnlyBuiltInScriptsThatAnswerAny(t *testing.T) {
	l, _ := launcher(t)
	cr := bundle.ChangeRequest{By: "dana", Summary: "again"}
	_, errs := fields(l.RequestChanges("20261207-010000-abcdef", cr, launch.Task{Model: "builtin:demo"}))
	if !strings.Contains(errs["model"], `"demo" answers only its own task`) || !strings.Contains(errs["model"], "builtin:notes") {
		t.Fatalf("request changes with the demo script: %v", errs)
	}
	if _, errs := fields(l.Continue("sess-20261207-010000-abcdef", launch.Task{Task: "go on", Model: "builtin:demo"})); !strings.Contains(errs["model"], "answers only its own task") {
		t.Fatalf("continue with the demo script: %v", errs)
	}
	if _, errs := fields(l.Launch(launch.Task{Root: "0", Path: "invoice", Task: "Fix the rounding bug", Model: "builtin:demo"})); len(errs) > 0 {
		t.Fatalf("a first launch with the demo script: %v", errs)
	}
	if _, errs := fields(l.RequestChanges("20261207-010000-abcdef", cr, launch.Task{Model: "builtin:notes"})); errs["model"] != "" {
		t.Fatalf("request changes with the notes script: %v", errs)
	}
}

// An agent whose program is not on the server's PATH is said to be missing,
// with how to install it, before anyone launches it: the form lists it, and
// a launch (or a session's next run) with it is refused beside the agent
// field instead of failing as a run.
func TestAnAgentThatIsNotInstalledIsRefusedBeforeItRuns(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	l, _ := launcher(t)
	missing := l.MissingAgents()
	if !strings.Contains(missing["codex"], "npm install -g @openai/codex") || missing["native"] != "" {
		t.Fatalf("missing agents: %v", missing)
	}
	_, errs := fields(l.Launch(launch.Task{Root: "0", Path: "invoice", Task: "Fix the rounding bug", Script: "demo.yaml", Agent: "codex"}))
	if !strings.Contains(errs["agent"], "codex is not on the server's PATH") {
		t.Fatalf("launch with codex missing: %v", errs)
	}
	if _, errs := fields(l.Continue("sess-20261207-010000-abcdef", launch.Task{Task: "go on", Model: "builtin:notes", Agent: "claude"})); !strings.Contains(errs["agent"], "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("continue with claude missing: %v", errs)
	}
}

// fields is a launch's result with its problems by field.
func fields[T any](v T, err error) (T, launch.FieldErrors) { return v, launch.Fields(err) }
