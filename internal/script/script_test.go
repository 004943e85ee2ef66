package script_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/script"
)

func start(t *testing.T, path string) (*script.Endpoint, *model.Client, *[]model.Exchange) {
	t.Helper()
	s, err := script.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	var xs []model.Exchange
	c := model.NewClient(model.Endpoint{BaseURL: ep.URL, Model: s.Model}, model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 5 * time.Second}, func(x model.Exchange) { xs = append(xs, x) })
	return ep, c, &xs
}

var tools = []model.ToolSpec{{Name: "read_file", Description: "read", Parameters: []byte(`{"type":"object"}`)}}

func TestScriptedConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "plain"
		if stream {
			name = "streamed"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ep, c, xs := start(t, "testdata/two-steps.yaml")
			msgs := []model.Message{{Role: model.RoleSystem, Content: "be careful"}, {Role: model.RoleUser, Content: "fix the rounding bug"}}
			r1, err := c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			if r1.Message.Content != "Let me look at the code." || len(r1.Message.ToolCalls) != 1 || r1.FinishReason != "tool_calls" {
				t.Fatalf("reply 1 = %+v", r1)
			}
			call := r1.Message.ToolCalls[0]
			if call.ID != "call_1_1" || call.Name != "read_file" || call.Arguments != `{"path":"money.go"}` {
				t.Fatalf("tool call = %+v", call)
			}
			if r1.Usage.TotalTokens != 110 {
				t.Fatalf("usage = %+v", r1.Usage)
			}
			msgs = append(msgs, r1.Message, model.Message{Role: model.RoleTool, ToolCallID: call.ID, Name: "read_file", Content: "func Cents(e float64) int64"})
			r2, err := c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			if r2.Message.Content != "Cents truncates; it should round." || r2.FinishReason != "stop" {
				t.Fatalf("reply 2 = %+v", r2)
			}
			// Past the last step: a scenario error naming the script.
			_, err = c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream})
			e, ok := model.AsError(err)
			if !ok || e.Domain != model.DomainScenario || e.Code != model.CodeScriptEnded || !strings.Contains(e.Message, "two-steps.yaml") {
				t.Fatalf("past the end: %v", err)
			}
			if ep.Server.Served() != 2 || len(*xs) != 3 || (*xs)[2].Error == "" || len((*xs)[0].Response) == 0 {
				t.Fatalf("served %d, exchanges %d", ep.Server.Served(), len(*xs))
			}
		})
	}
}

func TestMismatchNamesFileStepAndDifference(t *testing.T) {
	_, c, _ := start(t, "testdata/two-steps.yaml")
	_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "add a feature"}}})
	e, ok := model.AsError(err)
	if !ok || e.Domain != model.DomainScenario || e.Code != model.CodeScriptMismatch || e.Retryable {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"testdata/two-steps.yaml:5: step 1", `expected the last message to contain "rounding", got "add a feature"`, "expected tool read_file to be offered"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q does not contain %q", e.Message, want)
		}
	}
}

func TestParseErrorsNameFileLineAndColumn(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"syntax", "steps:\n  - reply: {content: [unclosed\n", "bad.yaml:1:1: did not find expected"},
		{"no steps", "name: x\n", "bad.yaml:1:1: steps: missing"},
		{"empty reply", "steps:\n  - reply: {}\n", "bad.yaml:2:12: steps[0].reply: a reply needs content or tool_calls"},
		{"unknown key", "steps:\n  - reply: {content: hi}\n    expekt: {}\n", "bad.yaml:3:5: steps[0].expekt: unknown field; did you mean expect?"},
		{"bad regex", "steps:\n  - expect: {last_matches: \"(\"}\n    reply: {content: hi}\n", "bad.yaml:2:28: steps[0].expect.last_matches: not a regular expression (RE2): error parsing regexp"},
		{"bad role", "steps:\n  - expect: {last_role: assistant}\n    reply: {content: hi}\n", `steps[0].expect.last_role: "assistant" is not one of`},
		{"tool without name", "steps:\n  - reply:\n      tool_calls:\n        - arguments: {}\n", "bad.yaml:4:11: steps[0].reply.tool_calls[0].name: missing"},
		{"arguments not a mapping", "steps:\n  - reply:\n      tool_calls:\n        - {name: run_command, arguments: 42}\n", `bad.yaml:4:42: steps[0].reply.tool_calls[0].arguments: want a mapping of the tool's arguments (or a string, sent as it is), got "42"`},
		{"arguments a list", "steps:\n  - reply:\n      tool_calls:\n        - {name: run_command, arguments: [a]}\n", "arguments: want a mapping of the tool's arguments (or a string, sent as it is), got a list"},
		{"negative usage", "steps:\n  - reply: {content: hi, usage: {prompt_tokens: -1}}\n", "usage.prompt_tokens: want a whole number"},
		{"empty", "", "bad.yaml: empty script"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := script.Parse("bad.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestArgumentsKeptVerbatimWhenText(t *testing.T) {
	s, err := script.Parse("s.yaml", []byte("steps:\n  - reply:\n      tool_calls:\n        - name: read_file\n          arguments: '{\"path\": broken'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Steps[0].Reply.ToolCalls[0].Arguments; got != `{"path": broken` {
		t.Fatalf("arguments = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/two-steps.yaml")
	f.Add(string(data))
	f.Add("steps:\n  - reply: {tool_calls: [{name: x, arguments: '{bad'}]}\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := script.Parse("s.yaml", []byte(src))
		if err != nil {
			return
		}
		for i, st := range s.Steps {
			if st.Reply.Content == "" && len(st.Reply.ToolCalls) == 0 {
				t.Fatalf("step %d has an empty reply", i)
			}
			for _, c := range st.Reply.ToolCalls {
				if c.Name == "" || c.ID == "" {
					t.Fatalf("step %d has a tool call without name or id", i)
				}
			}
		}
	})
}

// A run recorded in pieces and the same run recorded as older bundles
// hold it, each request whole, export the same script.
func TestExportReadsBothFormsOfARecording(t *testing.T) {
	var scripts []string
	for _, dir := range []string{"../../testdata/bundles/runs/20261201-113020-z8c1rd", "testdata/older"} {
		log, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
		if err != nil || len(probs) > 0 {
			t.Fatalf("%s: %v %v", dir, probs, err)
		}
		out, err := script.Export("replay", log)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		s, err := script.Parse("replay.yaml", out)
		if err != nil || len(s.Steps) != 2 {
			t.Fatalf("%s exports a script that does not load back: %v\n%s", dir, err, out)
		}
		scripts = append(scripts, string(out))
	}
	if scripts[0] != scripts[1] || !strings.Contains(scripts[0], "model: qwen2.5-coder-32b") || !strings.Contains(scripts[0], "last_role: tool") {
		t.Fatalf("the two forms export differently:\n%s\n---\n%s", scripts[0], scripts[1])
	}
}
