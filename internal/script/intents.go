package script

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/model"
)

// A model script may write a tool call as what it does — run a command,
// read, write or edit a file — rather than as one agent's tool: the server
// answers it with the tool the request offers for it (run_command, Bash,
// run_shell_command, bash, exec_command…), its arguments named as that
// tool names them, so one script drives every agent.
//
//	tool_calls:
//	  - run: go test ./...
//	  - read: greeting.txt
//	  - write: {path: greeting.txt, content: "hello\n"}
//	  - edit: {path: greeting.txt, old: hello, new: "hello, world"}

// The intents a tool call may name.
const (
	IntentRun   = "run"
	IntentRead  = "read"
	IntentWrite = "write"
	IntentEdit  = "edit"
)

// Intent is a tool call written as what it does.
type Intent struct {
	Kind    string // IntentRun, IntentRead, IntentWrite or IntentEdit
	Command string // run
	Path    string // read, write, edit: relative to the workspace
	Content string // write
	Old     string // edit: the text replaced
	New     string // edit: what replaces it
}

// agentTool is a tool some agent offers for an intent, and how its
// arguments are named.
type agentTool struct {
	name  string
	args  func(in Intent, path string) map[string]any
	agent string // whose it is, for messages and docs
}

// toolsFor are the tools that do an intent, in the order they are looked
// for among those a request offers.
func toolsFor(kind string) []agentTool {
	cmd := func(key string) func(Intent, string) map[string]any {
		return func(in Intent, _ string) map[string]any { return map[string]any{key: in.Command} }
	}
	described := func(in Intent, _ string) map[string]any {
		return map[string]any{"command": in.Command, "description": "run " + clip(in.Command, 60)}
	}
	file := func(key string) func(Intent, string) map[string]any {
		return func(_ Intent, path string) map[string]any { return map[string]any{key: path} }
	}
	write := func(key string) func(Intent, string) map[string]any {
		return func(in Intent, path string) map[string]any { return map[string]any{key: path, "content": in.Content} }
	}
	edit := func(p, o, n string) func(Intent, string) map[string]any {
		return func(in Intent, path string) map[string]any { return map[string]any{p: path, o: in.Old, n: in.New} }
	}
	switch kind {
	case IntentRun:
		return []agentTool{
			{"run_command", cmd("command"), "native"}, {"Bash", described, "claude"}, {"run_shell_command", described, "gemini, qwen"},
			{"bash", described, "opencode"}, {"exec_command", cmd("cmd"), "codex"},
			{"shell", func(in Intent, _ string) map[string]any {
				return map[string]any{"command": []string{"bash", "-lc", in.Command}}
			}, "codex"},
		}
	case IntentRead:
		return []agentTool{{"read_file", file("path"), "native"}, {"Read", file("file_path"), "claude"}, {"read_file", file("file_path"), "gemini, qwen"}, {"read", file("filePath"), "opencode"}}
	case IntentWrite:
		return []agentTool{{"write_file", write("path"), "native"}, {"Write", write("file_path"), "claude"}, {"write_file", write("file_path"), "gemini, qwen"}, {"write", write("filePath"), "opencode"}}
	case IntentEdit:
		return []agentTool{
			{"edit_file", edit("path", "search", "replace"), "native"}, {"Edit", edit("file_path", "old_string", "new_string"), "claude"},
			{"edit", edit("file_path", "old_string", "new_string"), "qwen"}, {"edit", edit("filePath", "oldString", "newString"), "opencode"},
			{"replace", func(in Intent, path string) map[string]any {
				return map[string]any{"file_path": path, "old_string": in.Old, "new_string": in.New, "instruction": "replace the text as asked"}
			}, "gemini"},
		}
	}
	return nil
}

// resolve is the tool call that does in with a tool req offers. A tool
// whose path argument is file_path or filePath gets the path inside
// workspace (those agents want it absolute); one whose argument is path
// gets it as written. Without a tool of its own for a file, an agent that
// runs commands reads with cat and writes with printf.
func (in Intent) resolve(id string, req model.Request, workspace string) (model.ToolCall, error) {
	for _, t := range toolsFor(in.Kind) {
		spec, ok := offered(req, t.name)
		if !ok {
			continue
		}
		args := t.args(in, in.Path)
		if k := pathKey(args); k != "" {
			if !hasProperty(spec, k) {
				continue // the same name, another agent's arguments
			}
			if k != "path" && workspace != "" {
				args[k] = filepath.Join(workspace, in.Path)
			}
		}
		data, _ := json.Marshal(args)
		return model.ToolCall{ID: id, Name: t.name, Arguments: string(data)}, nil
	}
	if in.Kind == IntentRead || in.Kind == IntentWrite {
		cmd := "cat -- " + quote(in.Path)
		if in.Kind == IntentWrite {
			cmd = "mkdir -p -- " + quote(filepath.Dir(in.Path)) + " && printf '%s' " + quote(in.Content) + " > " + quote(in.Path)
		}
		if c, err := (Intent{Kind: IntentRun, Command: cmd}).resolve(id, req, workspace); err == nil {
			return c, nil
		}
	}
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	var known []string
	for _, t := range toolsFor(in.Kind) {
		known = append(known, t.name+" ("+t.agent+")")
	}
	return model.ToolCall{}, fmt.Errorf("%s: none of the tools offered does it (offered: %s; proctor knows %s)", in.Kind, orNone(strings.Join(names, ", ")), strings.Join(known, ", "))
}

func offered(req model.Request, name string) (model.ToolSpec, bool) {
	i := slices.IndexFunc(req.Tools, func(t model.ToolSpec) bool { return t.Name == name })
	if i < 0 {
		return model.ToolSpec{}, false
	}
	return req.Tools[i], true
}

// pathKey is the argument that names the file, "" for none.
func pathKey(args map[string]any) string {
	for _, k := range []string{"path", "file_path", "filePath"} {
		if _, ok := args[k]; ok {
			return k
		}
	}
	return ""
}

// hasProperty says whether a tool's JSON schema has the property.
func hasProperty(spec model.ToolSpec, name string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(spec.Parameters, &s)
	_, ok := s.Properties[name]
	return ok
}

// quote is s as one word of a POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// forRequest is the reply with each tool call written as an intent made
// the call of the tool req offers for it.
func (r Reply) forRequest(req model.Request, workspace string) (Reply, error) {
	if len(r.intents) == 0 {
		return r, nil
	}
	out := r
	out.ToolCalls = slices.Clone(r.ToolCalls)
	for i, in := range r.intents {
		if in.Kind == "" {
			continue
		}
		c, err := in.resolve(r.ToolCalls[i].ID, req, workspace)
		if err != nil {
			return Reply{}, fmt.Errorf("tool call %d: %w", i+1, err)
		}
		out.ToolCalls[i] = c
	}
	return out, nil
}
