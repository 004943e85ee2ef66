package script

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/model"
)

// schema is a tool offered with these properties.
func schema(name string, props ...string) model.ToolSpec {
	p := map[string]any{}
	for _, k := range props {
		p[k] = map[string]string{"type": "string"}
	}
	data, _ := json.Marshal(map[string]any{"type": "object", "properties": p})
	return model.ToolSpec{Name: name, Parameters: data}
}

// One script's intents become each agent's own tool calls, named and
// argued as that agent's tools are (offered as they offer them).
func TestAnIntentIsTheToolEachAgentOffers(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`steps:
  - reply:
      tool_calls:
        - run: go test ./...
        - read: a.txt
        - write: {path: b.txt, content: "it's\n"}
        - edit: {path: a.txt, old: x, new: y}
`))
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string][]model.ToolSpec{
		"native":   {schema("run_command", "command"), schema("read_file", "path"), schema("write_file", "path", "content"), schema("edit_file", "path", "search", "replace")},
		"claude":   {schema("Bash", "command", "description"), schema("Read", "file_path"), schema("Write", "file_path", "content"), schema("Edit", "file_path", "old_string", "new_string")},
		"gemini":   {schema("run_shell_command", "command"), schema("read_file", "file_path"), schema("write_file", "file_path", "content"), schema("replace", "file_path", "old_string", "new_string", "instruction")},
		"qwen":     {schema("run_shell_command", "command"), schema("read_file", "file_path"), schema("write_file", "file_path", "content"), schema("edit", "file_path", "old_string", "new_string")},
		"opencode": {schema("bash", "command", "description"), schema("read", "filePath"), schema("write", "filePath", "content"), schema("edit", "filePath", "oldString", "newString")},
		"codex":    {schema("exec_command", "cmd")},
	}
	want := map[string]string{
		"native":   `run_command{"command":"go test ./..."} read_file{"path":"a.txt"} write_file{"content":"it's\n","path":"b.txt"} edit_file{"path":"a.txt","replace":"y","search":"x"}`,
		"claude":   `Bash{"command":"go test ./...","description":"run go test ./..."} Read{"file_path":"/ws/a.txt"} Write{"content":"it's\n","file_path":"/ws/b.txt"} Edit{"file_path":"/ws/a.txt","new_string":"y","old_string":"x"}`,
		"gemini":   `run_shell_command{"command":"go test ./...","description":"run go test ./..."} read_file{"file_path":"/ws/a.txt"} write_file{"content":"it's\n","file_path":"/ws/b.txt"} replace{"file_path":"/ws/a.txt","instruction":"replace the text as asked","new_string":"y","old_string":"x"}`,
		"qwen":     `run_shell_command{"command":"go test ./...","description":"run go test ./..."} read_file{"file_path":"/ws/a.txt"} write_file{"content":"it's\n","file_path":"/ws/b.txt"} edit{"file_path":"/ws/a.txt","new_string":"y","old_string":"x"}`,
		"opencode": `bash{"command":"go test ./...","description":"run go test ./..."} read{"filePath":"/ws/a.txt"} write{"content":"it's\n","filePath":"/ws/b.txt"} edit{"filePath":"/ws/a.txt","newString":"y","oldString":"x"}`,
	}
	for agent, tools := range agents {
		reply, err := s.Steps[0].Reply.forRequest(model.Request{Tools: tools}, "/ws")
		if agent == "codex" {
			// Codex has no tool of its own to edit a file: said so, with
			// what it offers and what proctor knows.
			if err == nil || !strings.Contains(err.Error(), "tool call 4: edit: none of the tools offered does it (offered: exec_command; proctor knows edit_file (native)") {
				t.Fatalf("codex: %v", err)
			}
			s2, _ := Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{write: {path: d/b.txt, content: \"it's\"}}]}\n"))
			r, err := s2.Steps[0].Reply.forRequest(model.Request{Tools: tools}, "/ws")
			if err != nil || r.ToolCalls[0].Arguments != `{"cmd":"mkdir -p -- 'd' \u0026\u0026 printf '%s' 'it'\\''s' \u003e 'd/b.txt'"}` {
				t.Fatalf("codex writes through its command tool: %+v %v", r.ToolCalls, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		var got []string
		for _, c := range reply.ToolCalls {
			got = append(got, c.Name+c.Arguments)
		}
		if strings.Join(got, " ") != want[agent] {
			t.Errorf("%s:\n got %s\nwant %s", agent, strings.Join(got, " "), want[agent])
		}
	}
}

func TestIntentsAreCheckedWhenParsed(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"steps:\n  - reply: {tool_calls: [{run: ls, name: Bash}]}\n", "either name and arguments (one agent's tool) or run"},
		{"steps:\n  - reply: {tool_calls: [{run: ls, read: a}]}\n", "a tool call does one thing: it already says run"},
		{"steps:\n  - reply: {tool_calls: [{write: {content: x}}]}\n", "tool_calls[0].write.path: missing"},
		{"steps:\n  - reply: {tool_calls: [{edit: {path: a, new: x}}]}\n", "tool_calls[0].edit.old: missing"},
		{"steps:\n  - reply: {tool_calls: [{arguments: {}}]}\n", "name: missing (or say run:, read:, write: or edit:"},
	} {
		if _, err := Parse("s.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
}
