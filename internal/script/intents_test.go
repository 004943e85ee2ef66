package script

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/intent"
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
		"copilot":  {schema("bash", "command", "description", "mode", "initial_wait"), schema("view", "path"), schema("create", "path", "file_text"), schema("edit", "path", "old_str", "new_str")},
	}
	want := map[string]string{
		"native":   `run_command{"command":"go test ./..."} read_file{"path":"a.txt"} write_file{"content":"it's\n","path":"b.txt"} edit_file{"path":"a.txt","replace":"y","search":"x"}`,
		"claude":   `Bash{"command":"go test ./...","description":"run go test ./..."} Read{"file_path":"/ws/a.txt"} Write{"content":"it's\n","file_path":"/ws/b.txt"} Edit{"file_path":"/ws/a.txt","new_string":"y","old_string":"x"}`,
		"gemini":   `run_shell_command{"command":"go test ./...","description":"run go test ./..."} read_file{"file_path":"/ws/a.txt"} write_file{"content":"it's\n","file_path":"/ws/b.txt"} replace{"file_path":"/ws/a.txt","instruction":"replace the text as asked","new_string":"y","old_string":"x"}`,
		"qwen":     `run_shell_command{"command":"go test ./...","description":"run go test ./..."} read_file{"file_path":"/ws/a.txt"} write_file{"content":"it's\n","file_path":"/ws/b.txt"} edit{"file_path":"/ws/a.txt","new_string":"y","old_string":"x"}`,
		"opencode": `bash{"command":"go test ./...","description":"run go test ./..."} read{"filePath":"/ws/a.txt"} write{"content":"it's\n","filePath":"/ws/b.txt"} edit{"filePath":"/ws/a.txt","newString":"y","oldString":"x"}`,
		"copilot":  `bash{"command":"go test ./...","description":"run go test ./...","initial_wait":600,"mode":"sync"} view{"path":"/ws/a.txt"} create{"file_text":"it's\n","path":"/ws/b.txt"} edit{"new_str":"y","old_str":"x","path":"/ws/a.txt"}`,
	}
	for agent, tools := range agents {
		reply, err := s.Steps[0].Reply.forRequest(model.Request{Tools: tools}, "/ws", intent.For(""))
		if agent == "codex" {
			// Codex has no tool of its own for a file: it reads with cat,
			// and writes and edits with a patch it applies itself.
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range reply.ToolCalls {
				var a struct{ Cmd string }
				json.Unmarshal([]byte(c.Arguments), &a)
				got = append(got, a.Cmd)
			}
			want := []string{"go test ./...", "cat -- 'a.txt'",
				"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: b.txt\n+it's\n*** End Patch\nEOF\n",
				"apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\nEOF\n"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("codex:\n got %q\nwant %q", got, want)
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
		{"steps:\n  - reply: {tool_calls: [{arguments: {}}]}\n", "name: missing (or say run:, read:, write:, edit: or ask:"},
		{"steps:\n  - reply: {tool_calls: [{ask: \" \"}]}\n", "tool_calls[0].ask: want the question to ask"},
	} {
		if _, err := Parse("s.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// An agent without a file tool of its own, and without Codex's patches,
// reads, writes and edits with commands; the edit is the first place the
// text is found, whatever the text holds.
func TestAnAgentWithOnlyAShellEditsWithCommands(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one & $two\n'three'\n"), 0o644)
	s, err := Parse("s.yaml", []byte(`steps:
  - reply:
      tool_calls:
        - edit: {path: a.txt, old: "$two\n'three'", new: "& 'four' \\$x"}
        - write: {path: d/b.txt, content: "it's\n"}
        - read: d/b.txt
`))
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.Steps[0].Reply.forRequest(model.Request{Tools: []model.ToolSpec{schema("sh", "command")}}, ws, intent.For(""))
	if err == nil {
		t.Fatalf("a tool proctor does not know was taken: %+v", reply.ToolCalls)
	}
	reply, err = s.Steps[0].Reply.forRequest(model.Request{Tools: []model.ToolSpec{schema("bash", "command", "description")}}, ws, intent.For(""))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range reply.ToolCalls {
		var a struct{ Command string }
		json.Unmarshal([]byte(c.Arguments), &a)
		cmd := exec.Command("bash", "-c", a.Command)
		cmd.Dir = ws
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", a.Command, err, b)
		}
		out = append(out, string(b))
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(data) != "one & & 'four' \\$x\n" {
		t.Errorf("edited: %q", data)
	}
	if out[2] != "it's\n" {
		t.Errorf("read %q", out[2])
	}
	// A text the file does not hold is an error of the command, as
	// edit_file's is.
	s2, _ := Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{edit: {path: a.txt, old: nowhere, new: x}}]}\n"))
	r, _ := s2.Steps[0].Reply.forRequest(model.Request{Tools: []model.ToolSpec{schema("bash", "command", "description")}}, ws, intent.For(""))
	var a struct{ Command string }
	json.Unmarshal([]byte(r.ToolCalls[0].Arguments), &a)
	cmd := exec.Command("bash", "-c", a.Command)
	cmd.Dir = ws
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "a.txt does not contain the text to replace") {
		t.Errorf("%v %s", err, b)
	}
}

// Codex's patch for an edit is made from the file as it is in the
// workspace, with context; a file the agent made a link (to a file outside,
// say) or a FIFO is not read, and the patch says only the text.
func TestCodexEditsWithAPatchOfTheWorkspacesFile(t *testing.T) {
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("a\nSECRET x\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("1\n2\n\n4\nold x old\n6\n7\n8\n9\n"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "link.txt"))
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)
	codex := model.Request{Tools: []model.ToolSpec{schema("exec_command", "cmd")}}
	for _, tc := range []struct{ path, want string }{
		{"f.txt", "@@\n 2\n \n 4\n-old x old\n+old y old\n 6\n 7\n 8\n"},
		{"link.txt", "@@\n-x\n+y\n"},
		{"fifo", "@@\n-x\n+y\n"},
		{"../" + filepath.Base(filepath.Dir(outside)) + "/secret", "@@\n-x\n+y\n"},
	} {
		s, err := Parse("s.yaml", []byte(fmt.Sprintf("steps:\n  - reply: {tool_calls: [{edit: {path: %q, old: x, new: y}}]}\n", tc.path)))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan model.ToolCall)
		go func() {
			r, _ := s.Steps[0].Reply.forRequest(codex, ws, intent.For(""))
			done <- r.ToolCalls[0]
		}()
		select {
		case c := <-done:
			if strings.Contains(c.Arguments, "SECRET") || !strings.Contains(c.Arguments, strings.ReplaceAll(strings.ReplaceAll(tc.want, "\n", `\n`), "\t", "")) {
				t.Errorf("%s: %s, want %q", tc.path, c.Arguments, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the patch waits on the file", tc.path)
		}
	}
}

// ask: is proctor's ask_user where the agent offers it; elsewhere the
// reply's message asks, which ends the agent's turn, and the script knows
// the question.
func TestAnAgentWithoutAnAskToolIsAskedInTheMessage(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`steps:
  - reply: {content: "I need to know.", tool_calls: [{ask: "Which version?"}]}
  - reply: {tool_calls: [{ask: "Which one?"}, {run: ls}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	native := model.Request{Tools: []model.ToolSpec{schema("ask_user", "question"), schema("run_command", "command")}}
	r, err := s.Steps[0].Reply.forRequest(native, "/ws", intent.For(""))
	if err != nil || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name+r.ToolCalls[0].Arguments != `ask_user{"question":"Which version?"}` || r.Content != "I need to know." {
		t.Fatalf("native: %+v %v", r, err)
	}
	claude := model.Request{Tools: []model.ToolSpec{schema("Bash", "command", "description")}}
	r, err = s.Steps[0].Reply.forRequest(claude, "/ws", intent.For(""))
	if err != nil || len(r.ToolCalls) != 0 || r.Content != "I need to know.\n\nWhich version?" {
		t.Fatalf("claude: %+v %v", r, err)
	}
	if _, err := s.Steps[1].Reply.forRequest(claude, "/ws", intent.For("")); err == nil || !strings.Contains(err.Error(), "can call no other tool") {
		t.Fatalf("a question in the message beside a tool call: %v", err)
	}
	if q := s.Questions(); strings.Join(q, "|") != "Which version?|Which one?" {
		t.Fatalf("questions %q", q)
	}
}

// Codex runs a reply's tool calls at once: two patches of one file in one
// reply would race, one lost at random. The script says so, every time.
func TestTwoPatchesOfOneFileInOneReplyAreRefusedForCodex(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`steps:
  - reply: {tool_calls: [{edit: {path: a.go, old: x, new: y}}, {write: {path: b.go, content: z}}, {edit: {path: a.go, old: p, new: q}}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	codex := model.Request{Tools: []model.ToolSpec{schema("exec_command", "cmd")}}
	if _, err := s.Steps[0].Reply.forRequest(codex, t.TempDir(), intent.For("")); err == nil || !strings.Contains(err.Error(), "tool call 3: edit a.go: this agent (Codex) runs the tool calls of a reply at once") {
		t.Fatalf("codex: %v", err)
	}
	claude := model.Request{Tools: []model.ToolSpec{schema("Edit", "file_path", "old_string", "new_string"), schema("Write", "file_path", "content")}}
	if r, err := s.Steps[0].Reply.forRequest(claude, "/ws", intent.For("")); err != nil || len(r.ToolCalls) != 3 {
		t.Fatalf("claude: %+v %v", r, err)
	}
}

// Codex answers a command that runs longer than it waits (30 s at most)
// with a session it is still running in: the script waits on with
// write_stdin, without moving on, and its next step sees the command's
// end, as if Codex had waited.
func TestACommandStillRunningIsWaitedFor(t *testing.T) {
	s, err := Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{run: bash slow.sh}]}\n  - expect: {last_role: tool, last_contains: slow-done}\n    reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(s)
	tools := []model.ToolSpec{schema("exec_command", "cmd"), schema("write_stdin", "session_id", "chars")}
	msgs := []model.Message{{Role: model.RoleUser, Content: "run it"}}
	ask := func() Reply {
		t.Helper()
		rec := httptest.NewRecorder()
		_, reply, ok := srv.answer(rec, model.Request{Messages: msgs, Tools: tools, API: model.APIResponses})
		if !ok {
			t.Fatalf("no answer: %d %s", rec.Code, rec.Body)
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: reply.ToolCalls})
		return reply
	}
	first := ask()
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "exec_command" {
		t.Fatalf("first: %+v", first)
	}
	running := "Chunk ID: 1\nWall time: 30.0 seconds\nProcess running with session ID 42\nOriginal token count: 0\nOutput:\n"
	msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: running})
	for i := range 2 { // still running after the first wait, too
		wait := ask()
		if len(wait.ToolCalls) != 1 || wait.ToolCalls[0].Name != "write_stdin" || !strings.Contains(wait.ToolCalls[0].Arguments, `"session_id":42`) {
			t.Fatalf("wait %d: %+v", i, wait)
		}
		out := running
		if i == 1 {
			out = "Chunk ID: 2\nWall time: 15.0 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nslow-done\n"
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: wait.ToolCalls[0].ID, Content: out})
	}
	if last := ask(); last.Content != "done" || srv.Remaining() != 0 {
		t.Fatalf("after the command ended: %+v, %d steps left", last, srv.Remaining())
	}
}

// Copilot CLI's create writes only a new file: an existing one is written
// by replacing all it holds with its edit.
func TestAToolThatOnlyCreatesFilesRewritesAnExistingOneWithAnEdit(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("old\n"), 0o644)
	s, err := Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{write: {path: a.txt, content: \"new\\n\"}}, {write: {path: b.txt, content: \"bee\\n\"}}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tools := []model.ToolSpec{schema("bash", "command", "description", "initial_wait"), schema("create", "path", "file_text"), schema("edit", "path", "old_str", "new_str")}
	reply, err := s.Steps[0].Reply.forRequest(model.Request{Tools: tools}, ws, intent.For(""))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range reply.ToolCalls {
		got = append(got, c.Name+c.Arguments)
	}
	want := `edit{"new_str":"new\n","old_str":"old\n","path":"` + filepath.Join(ws, "a.txt") + `"} create{"file_text":"bee\n","path":"` + filepath.Join(ws, "b.txt") + `"}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// Arguments are written as a model writes them: <, > and & as themselves,
// not \u003c, \u003e and \u0026 (which the transcript and the progress
// lines then showed).
func TestArgumentsKeepTheirCharacters(t *testing.T) {
	s, err := Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{run: \"a<b && c>d\"}, {name: x, arguments: {q: \"1 & 2\"}}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.Steps[0].Reply.forRequest(model.Request{Tools: []model.ToolSpec{schema("run_command", "command")}}, "", intent.For(""))
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.ToolCalls[0].Arguments + reply.ToolCalls[1].Arguments; got != `{"command":"a<b && c>d"}{"q":"1 & 2"}` {
		t.Fatalf("%s", got)
	}
}
