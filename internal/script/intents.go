package script

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/tools"
)

// A model script may write a tool call as what it does — run a command,
// read, write or edit a file — rather than as one agent's tool: the server
// answers it with the tool the request offers for it (run_command, Bash,
// run_shell_command, bash, exec_command…; internal/intent), its arguments
// named as that tool names them, so one script drives every agent.
//
//	tool_calls:
//	  - run: go test ./...
//	  - read: greeting.txt
//	  - write: {path: greeting.txt, content: "hello\n"}
//	  - edit: {path: greeting.txt, old: hello, new: "hello, world"}

// resolve is the tool call that does in with a tool req offers. A tool
// that wants a file's path absolute gets it inside workspace; proctor's
// own gets it as written. Without a tool of its own for a file, an agent
// that runs commands reads with cat and writes with printf.
func resolve(in intent.Intent, id string, req model.Request, workspace string) (model.ToolCall, error) {
	for _, t := range intent.Tools(in.Kind) {
		i := slices.IndexFunc(req.Tools, func(s model.ToolSpec) bool { return s.Name == t.Name })
		if i < 0 || !t.Fits(req.Tools[i].Parameters) {
			continue // not offered, or the same name with another agent's arguments
		}
		path := in.Path
		if t.Absolute() && workspace != "" {
			path = filepath.Join(workspace, in.Path)
		}
		data, _ := json.Marshal(t.Args(in, path))
		return model.ToolCall{ID: id, Name: t.Name, Arguments: string(data)}, nil
	}
	if in.Kind == intent.Read || in.Kind == intent.Write {
		cmd := "cat -- " + tools.ShellQuote(in.Path)
		if in.Kind == intent.Write {
			cmd = "mkdir -p -- " + tools.ShellQuote(filepath.Dir(in.Path)) + " && printf '%s' " + tools.ShellQuote(in.Content) + " > " + tools.ShellQuote(in.Path)
		}
		if c, err := resolve(intent.Intent{Kind: intent.Run, Command: cmd}, id, req, workspace); err == nil {
			return c, nil
		}
	}
	var names, known []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	for _, t := range intent.Tools(in.Kind) {
		known = append(known, t.Name+" ("+t.Agent+")")
	}
	return model.ToolCall{}, fmt.Errorf("%s: none of the tools offered does it (offered: %s; proctor knows %s)", in.Kind, orNone(strings.Join(names, ", ")), strings.Join(known, ", "))
}

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
		c, err := resolve(in, r.ToolCalls[i].ID, req, workspace)
		if err != nil {
			return Reply{}, fmt.Errorf("tool call %d: %w", i+1, err)
		}
		out.ToolCalls[i] = c
	}
	return out, nil
}
