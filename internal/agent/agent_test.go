package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/tools"
)

// loop runs the agent against a script served on loopback, in an empty
// workspace; it returns the types of the events (cfg.Emit gets them too).
func loop(t *testing.T, src string, cfg agent.Config) (agent.Outcome, []string) {
	t.Helper()
	s, err := script.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	cfg.Model = model.NewClient(model.Endpoint{BaseURL: ep.URL, Model: s.Model}, model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 10 * time.Second}, nil)
	if cfg.Tools == nil {
		tb, err := tools.New(t.TempDir(), tools.Limits{MaxToolOutputChars: 1000}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = tb
	}
	var events []string
	also := cfg.Emit
	cfg.Emit = func(ev bundle.EventData) {
		events = append(events, ev.EventType())
		if also != nil {
			also(ev)
		}
	}
	out := agent.Run(context.Background(), cfg, []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: "go"}})
	return out, events
}

func toolResults(out agent.Outcome) []string {
	var r []string
	for _, m := range out.Messages {
		if m.Role == model.RoleTool {
			r = append(r, m.Content)
		}
	}
	return r
}

func TestMalformedCallsAreFedBackThenEndTheRun(t *testing.T) {
	out, _ := loop(t, `steps:
  - reply: {tool_calls: [{name: read_file, arguments: '{"path": '}]}
  - reply: {tool_calls: [{name: teleport, arguments: {}}]}
  - reply: {content: "I will stop now."}
`, agent.Config{})
	if out.Stop != agent.StopFinal {
		t.Fatalf("stop = %s (%v)", out.Stop, out.Err)
	}
	res := toolResults(out)
	if !strings.Contains(res[0], "the arguments of read_file are not valid JSON") || !strings.Contains(res[1], `unknown tool "teleport"`) {
		t.Fatalf("results = %q", res)
	}

	out, _ = loop(t, `steps:
  - reply: {tool_calls: [{name: nope, arguments: {}}]}
  - reply: {tool_calls: [{name: nope, arguments: {}}]}
  - reply: {tool_calls: [{name: nope, arguments: {}}]}
`, agent.Config{})
	e, ok := model.AsError(out.Err)
	if out.Stop != agent.StopError || !ok || e.Domain != model.DomainAgent || e.Code != "malformed_tool_calls" {
		t.Fatalf("stop %s err %v", out.Stop, out.Err)
	}
}

func TestAskUserYieldsTheQuestion(t *testing.T) {
	out, events := loop(t, `steps:
  - reply: {content: "One question first.", tool_calls: [{name: ask_user, arguments: {question: "Which currency?"}}]}
`, agent.Config{})
	if out.Stop != agent.StopAskUser || out.Question != "Which currency?" {
		t.Fatalf("stop %s question %q", out.Stop, out.Question)
	}
	if last := out.Messages[len(out.Messages)-1]; last.Role != model.RoleTool || last.ToolCallID != "call_1_1" {
		t.Fatalf("the ask_user call has no result: %+v", last)
	}
	if !strings.Contains(strings.Join(events, ","), "agent.question") {
		t.Fatalf("events %v", events)
	}
}

func TestMaxToolCalls(t *testing.T) {
	out, _ := loop(t, `steps:
  - reply: {tool_calls: [{name: list_files, arguments: {}}, {name: list_files, arguments: {}}, {name: list_files, arguments: {}}]}
`, agent.Config{MaxToolCalls: 2})
	res := toolResults(out)
	if out.Stop != agent.StopMaxToolCalls || out.ToolCalls != 2 || len(res) != 3 || res[2] != "not run: max_tool_calls reached" {
		t.Fatalf("stop %s calls %d results %q", out.Stop, out.ToolCalls, res)
	}
}

func TestGatedCallsAskTheApprover(t *testing.T) {
	src := `steps:
  - reply: {tool_calls: [{name: run_command, arguments: {command: "echo hi"}}, {name: run_command, arguments: {command: "echo hi; rm -rf x"}}]}
  - reply: {content: done}
`
	out, events := loop(t, src, agent.Config{Approver: agent.Policy{Allow: []string{"echo"}}})
	res := toolResults(out)
	if !strings.HasPrefix(res[0], "exit 0\nhi") || !strings.Contains(res[1], "denied by policy: shell operators are never allowed") {
		t.Fatalf("results %q", res)
	}
	if strings.Count(strings.Join(events, ","), "approval.decided") != 2 {
		t.Fatalf("events %v", events)
	}
	// A terminal approver reads y/n; chained behind the policy it is asked
	// only about what the policy does not allow.
	term := &agent.Terminal{In: strings.NewReader("y\n"), Out: &strings.Builder{}, Who: "dev"}
	out, _ = loop(t, src, agent.Config{Approver: agent.Chain{Policy: agent.Policy{Allow: []string{"echo"}}, Next: term}})
	res = toolResults(out)
	if !strings.HasPrefix(res[0], "exit 0") || !strings.HasPrefix(res[1], "exit 0") {
		t.Fatalf("results %q", res)
	}
	// End of input at the terminal denies.
	term = &agent.Terminal{In: strings.NewReader(""), Out: &strings.Builder{}, Who: "dev"}
	out, _ = loop(t, src, agent.Config{Approver: term})
	if res = toolResults(out); !strings.Contains(res[0], "denied by dev: no answer (end of input)") {
		t.Fatalf("results %q", res)
	}
}

func TestPolicy(t *testing.T) {
	p := agent.Policy{Allow: []string{"go test", "make"}}
	for cmd, want := range map[string]bool{
		"go test ./...": true, "go test": true, "make": true, "make lint": true,
		"go testx": false, "go vet": false, "makefile": false, "go test ./... && rm -rf /": false,
		"go test $(rm -rf /)": false, "": false,
	} {
		d, _ := p.Approve(context.Background(), agent.ApprovalRequest{Tool: "run_command", Args: `{"command": "` + cmd + `"}`})
		if d.Approved != want {
			t.Errorf("%q approved = %v, want %v", cmd, d.Approved, want)
		}
	}
}

// A command's output reaches the events while it runs, line by line,
// before its result: a person watching the run sees it work.
func TestACommandsOutputStreamsWhileItRuns(t *testing.T) {
	var seen []bundle.EventData
	out, _ := loop(t, `steps:
  - reply: {tool_calls: [{name: run_command, arguments: {command: "echo first; sleep 2; echo second"}}]}
  - reply: {content: done}
`, agent.Config{Approver: approveAll{}, Emit: func(ev bundle.EventData) { seen = append(seen, ev) }})
	if out.Stop != agent.StopFinal {
		t.Fatalf("stop %s: %v", out.Stop, out.Err)
	}
	var order []string
	for _, ev := range seen {
		switch ev := ev.(type) {
		case bundle.ToolOutputEvent:
			order = append(order, "output "+ev.Text)
		case bundle.ToolResultEvent:
			order = append(order, "result")
		}
	}
	if want := []string{"output first\n", "output second\n", "result"}; strings.Join(order, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q: the first line is sent before the second is written", order, want)
	}
}

type approveAll struct{}

func (approveAll) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	return agent.Decision{Approved: true, By: "test"}, nil
}

// A call's arguments as events and progress lines show them: <, > and &
// as themselves, long texts clipped.
func TestEventArgsKeepTheirCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"command":"a<b && c>d"}`, `{"command":"a<b && c>d"}`},
		{`not json <&>`, `"not json <&>"`},
	} {
		if got := string(agent.EventArgs(tc.in)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Progress hears of the conversation each time it grows: the model's
// message before its calls run (a page then shows the call that is
// running), and each result.
func TestProgressHearsEachMessageAsItComes(t *testing.T) {
	var seen []string
	out, _ := loop(t, `steps:
  - reply: {tool_calls: [{name: list_files, arguments: {}}, {name: list_files, arguments: {}}]}
  - reply: {content: done}
`, agent.Config{Progress: func(msgs []model.Message) {
		last := msgs[len(msgs)-1]
		seen = append(seen, fmt.Sprintf("%d:%s", len(msgs), last.Role))
	}})
	want := "3:assistant 4:tool 5:tool 6:assistant"
	if out.Stop != agent.StopFinal || strings.Join(seen, " ") != want {
		t.Fatalf("progress %v, want %s (stop %s)", seen, want, out.Stop)
	}
}
