package script

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
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
// own gets it as written. An agent without a tool of its own for a file
// does it with a command: Codex applies a patch (intent.PatchCommand),
// others read with cat, write with printf and edit with bash.
func resolve(in intent.Intent, id string, req model.Request, workspace string, tb intent.Table) (model.ToolCall, error) {
	call := func(t intent.Tool, in intent.Intent) model.ToolCall {
		path := in.Path
		if t.Absolute() && workspace != "" {
			path = filepath.Join(workspace, in.Path)
		}
		data, _ := bundle.PlainJSON(t.Args(in, path))
		return model.ToolCall{ID: id, Name: t.Name, Arguments: string(data)}
	}
	if t, ok := offered(tb, in.Kind, req); ok && t.NewOnly && exists(workspace, in.Path) {
		// A tool that only creates files (Copilot CLI's create): an
		// existing file is written by replacing all it holds.
		if old := readWorkspaceFile(workspace, in.Path); old != "" {
			if e, ok := offered(tb, intent.Edit, req); ok {
				return call(e, intent.Intent{Kind: intent.Edit, Path: in.Path, Old: old, New: in.Content}), nil
			}
		}
	} else if ok {
		return call(t, in), nil
	}
	if t, ok := offered(tb, intent.Run, req); ok && in.Kind != intent.Run {
		return call(t, intent.Intent{Kind: intent.Run, Command: fileCommand(in, t, workspace)}), nil
	}
	var names, known []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	for _, t := range tb.Tools(in.Kind) {
		known = append(known, t.Name+" ("+t.Agent+")")
	}
	return model.ToolCall{}, fmt.Errorf("%s: none of the tools offered does it (offered: %s; proctor knows %s)", in.Kind, orNone(strings.Join(names, ", ")), strings.Join(known, ", "))
}

// offered is the tool req offers for an intent of kind: the first of
// intent.Tools that it offers under that name with that tool's arguments.
func offered(tb intent.Table, kind string, req model.Request) (intent.Tool, bool) {
	for _, t := range tb.Tools(kind) {
		i := slices.IndexFunc(req.Tools, func(s model.ToolSpec) bool { return s.Name == t.Name })
		if i >= 0 && t.Fits(req.Tools[i].Parameters) {
			return t, true
		}
	}
	return intent.Tool{}, false
}

// exists reports whether the workspace holds path (a file a tool that
// only creates files cannot write).
func exists(workspace, path string) bool {
	if workspace == "" {
		return false
	}
	_, err := os.Lstat(filepath.Join(workspace, path))
	return err == nil
}

// fileCommand is the command that reads, writes or edits a file for an
// agent that runs commands with run but has no tool for it.
func fileCommand(in intent.Intent, run intent.Tool, workspace string) string {
	q := tools.ShellQuote
	switch {
	case in.Kind == intent.Read:
		return intent.ReadCommand(in.Path)
	case run.Patch:
		return intent.PatchCommand(in, readWorkspaceFile(workspace, in.Path))
	case in.Kind == intent.Write:
		return "mkdir -p -- " + q(filepath.Dir(in.Path)) + " && printf '%s' " + q(in.Content) + " > " + q(in.Path)
	}
	// An edit, as edit_file does it: the first place the text is found.
	return "bash -c " + q(`s=$(cat -- "$1" && printf x) || exit 1; s=${s%x}; case $s in *"$2"*) ;; *) echo "$1 does not contain the text to replace" >&2; exit 1;; esac; printf '%s' "${s/"$2"/"$3"}" > "$1"`) +
		" edit " + q(in.Path) + " " + q(in.Old) + " " + q(in.New)
}

// maxEditedFile is the largest file a patch is made for.
const maxEditedFile = 8 << 20

// readWorkspaceFile is the content of a regular file of the workspace, ""
// when it cannot be read. The agent wrote the workspace: it is read as a
// bundle's files are (bundle.ReadFile: confined to the folder, a regular
// file, no FIFO waited on), up to maxEditedFile.
func readWorkspaceFile(workspace, path string) string {
	if workspace == "" {
		return ""
	}
	data, err := bundle.ReadFile(workspace, path, maxEditedFile)
	if err != nil {
		return ""
	}
	return string(data)
}

// forRequest is the reply with each tool call written as an intent made
// the call of the tool req offers for it.
func (r Reply) forRequest(req model.Request, workspace string, tb intent.Table) (Reply, error) {
	if len(r.intents) == 0 {
		return r, nil
	}
	out := r
	out.ToolCalls = nil
	patched := map[string]bool{}
	run, runs := offered(tb, intent.Run, req)
	for i, in := range r.intents {
		c := r.ToolCalls[i]
		if runs && run.Patch && (in.Kind == intent.Write || in.Kind == intent.Edit) {
			if _, own := offered(tb, in.Kind, req); !own && patched[in.Path] {
				// Codex runs a reply's tool calls at once: two patches of
				// one file would race, and one be lost.
				return Reply{}, fmt.Errorf("tool call %d: %s %s: this agent (Codex) runs the tool calls of a reply at once, and a second change of the same file in one reply would race with the first: change it in one call, or in the next reply", i+1, in.Kind, in.Path)
			}
			patched[in.Path] = true
		}
		if in.Kind == intent.Ask {
			if _, ok := offered(tb, intent.Ask, req); !ok {
				out.Content = askText(out.Content, in.Question)
				continue // asked in the message, which ends the agent's turn
			}
		}
		if in.Kind != "" {
			var err error
			if c, err = resolve(in, c.ID, req, workspace, tb); err != nil {
				return Reply{}, fmt.Errorf("tool call %d: %w", i+1, err)
			}
		}
		out.ToolCalls = append(out.ToolCalls, c)
	}
	if len(out.ToolCalls) > 0 && len(out.ToolCalls) < len(r.ToolCalls) {
		return Reply{}, fmt.Errorf("ask: the agent has no tool to ask with, so it is asked in the message that ends its turn, and that reply can call no other tool")
	}
	return out, nil
}

// askText is a reply's message with the question it asks after it.
func askText(content, question string) string {
	if content == "" {
		return question
	}
	return content + "\n\n" + question
}

// Questions are the questions the script asks in a message (an ask: to an
// agent without a tool to ask with), each as the end of its message.
func (s *Script) Questions() []string {
	var out []string
	for _, st := range append(slices.Clone(s.Steps), s.Anytime...) {
		for _, in := range st.Reply.intents {
			if in.Kind == intent.Ask {
				out = append(out, in.Question)
			}
		}
	}
	return out
}

// waitFor is the call that waits for a command the agent answered is
// still running (Codex stops waiting after 30 s at most; intent.Running),
// when req's last message says so and req offers the tool to wait with.
// The script does not move on: its next step sees the command's end, as
// if the agent had waited for it.
func waitFor(req model.Request) (model.ToolCall, bool) {
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != model.RoleTool {
		return model.ToolCall{}, false
	}
	last := req.Messages[n-1]
	name := last.Name
	for i := n - 2; i >= 0 && name == ""; i-- {
		for _, c := range req.Messages[i].ToolCalls {
			if c.ID == last.ToolCallID {
				name = c.Name
			}
		}
	}
	session, running := intent.Running(name, last.Content)
	if !running {
		return model.ToolCall{}, false
	}
	tool, args := intent.Poll(session)
	if !slices.ContainsFunc(req.Tools, func(t model.ToolSpec) bool { return t.Name == tool }) {
		return model.ToolCall{}, false
	}
	data, _ := bundle.PlainJSON(args)
	return model.ToolCall{ID: fmt.Sprintf("wait-%d-%d", session, n), Name: tool, Arguments: string(data)}, true
}
