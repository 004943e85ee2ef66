// Package intent knows what the tool calls of the coding agents proctor
// drives do: which of each agent's tools runs a command, reads, writes or
// edits a file, and how it names its arguments. A model script writes a
// tool call as an intent once, for every agent (internal/script), and a
// check that asks whether a command ran finds it whichever agent ran it
// (internal/check).
package intent

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/clip"
)

// The intents.
const (
	Run   = "run"   // run a command
	Read  = "read"  // read a file
	Write = "write" // write a whole file
	Edit  = "edit"  // replace a text in a file
	Ask   = "ask"   // ask the user a question, and wait for the answer
)

// Intent is a tool call written as what it does.
type Intent struct {
	Kind    string // Run, Read, Write, Edit or Ask
	Command string // Run
	Path    string // Read, Write, Edit: the file, relative to the workspace (or as the agent gave it)
	Content string // Write
	Old     string // Edit: the text replaced
	New     string // Edit: what replaces it
	// Ask: the question. An agent without a tool to ask with (all but
	// proctor's own) is asked by ending its turn with the question as its
	// message (internal/script), and the run takes that as the question.
	Question string
}

// Tool is one agent's tool for an intent, and how it names the intent's
// arguments ("" for an argument it does not take). An argument's name may
// be a path into the tool's arguments: "commands[]" is a list whose first
// item is the value (Cline's run_commands), "files[].path" a list of
// objects whose first item's path is (Cline's read_files).
type Tool struct {
	Name   string
	Agent  string // whose it is, for messages
	Kind   string
	Key    string // Run: the command; Ask: the question; the others: the file's path
	Second string // Write: the content; Edit: the old text
	Third  string // Edit: the new text
	// Describe: the tool also takes a description of the command (Claude
	// Code's, opencode's and Gemini CLI's shell tools).
	Describe bool
	// Argv: the command is an argv, run by bash -lc (Codex's shell).
	Argv bool
	// Patch: the agent applies a patch given as an apply_patch command
	// itself (Codex's; PatchCommand), its way to write and edit files.
	Patch bool
	// Extra arguments the tool is given, with their values.
	Extra map[string]any
	// Marks are arguments that tell this agent's tool from another's of
	// the same name: offered without them, it is the other's.
	Marks []string
	// NewOnly: the tool writes only a file that does not exist yet
	// (Copilot CLI's create, Cline's editor without old_text); an existing
	// file is written with the agent's edit tool.
	NewOnly bool
	// ExitCode, for a command tool an agents.yaml entry names: how its
	// results say the exit code (its first group), where proctor does not
	// know the agent's wording.
	ExitCode *regexp.Regexp
	// said reads the exit status from a result of a command tool proctor
	// knows (Table.Exit); ok is false when the result does not say.
	said func(result string, isError bool) (code int, ok bool)
}

// Table is the tools intents are looked for among: an agent's own, named in
// its agents.yaml entry, then every tool proctor knows.
type Table struct {
	agent string // the agent whose results Exit reads, as the tools name it ("claude"); "" none
	own   []Tool
}

// For is the table of agent, as the tools proctor knows name it (Agents;
// "" for one it does not know), whose own tools are own.
func For(agent string, own ...Tool) Table { return Table{agent: agent, own: own} }

// Native is the name of proctor's own agent among the tools' agents.
const Native = "native"

// Agents are the agents whose tools proctor knows.
func Agents() []string {
	var out []string
	for _, t := range all() {
		for _, a := range strings.Split(t.Agent, ", ") {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// of says whether the tool is agent's.
func (t Tool) of(agent string) bool {
	return agent != "" && slices.Contains(strings.Split(t.Agent, ", "), agent)
}

func (tb Table) all() []Tool { return append(slices.Clone(tb.own), all()...) }

// Tools are the tools that do an intent, in the order they are looked for
// among those an agent offers: the agent's own, then proctor's, then the
// other agents'.
func (tb Table) Tools(kind string) []Tool {
	var out []Tool
	for _, t := range tb.all() {
		if t.Kind == kind {
			out = append(out, t)
		}
	}
	return out
}

func all() []Tool {
	return []Tool{
		{Name: "run_command", Agent: Native, Kind: Run, Key: "command", said: nativeExit},
		{Name: "Bash", Agent: "claude", Kind: Run, Key: "command", Describe: true, Marks: []string{"description"}, said: claudeExit},
		{Name: "Bash", Agent: "continue", Kind: Run, Key: "command", said: continueExit},
		{Name: "run_commands", Agent: "cline", Kind: Run, Key: "commands[]", said: clineExit},
		{Name: "run_shell_command", Agent: "gemini, qwen", Kind: Run, Key: "command", Describe: true, said: shellTrailer},
		// Copilot CLI's bash: run to its end (mode sync), waiting as long
		// as it lets a command run before it answers (600 s).
		{Name: "bash", Agent: "copilot", Kind: Run, Key: "command", Describe: true, Extra: map[string]any{"mode": "sync", "initial_wait": 600}, Marks: []string{"initial_wait"}, said: copilotExit},
		{Name: "bash", Agent: "opencode", Kind: Run, Key: "command", Describe: true},
		// Codex's exec_command: in the shell it was started in, not a login
		// shell (whose PATH is /etc/profile's, without the toolchain the
		// run was given), and waiting as long as Codex lets a command run
		// before it answers that the command is still running.
		{Name: "exec_command", Agent: "codex", Kind: Run, Key: "cmd", Patch: true,
			Extra: map[string]any{"login": false, "yield_time_ms": 30000}, said: codexExit},
		{Name: "shell", Agent: "codex", Kind: Run, Key: "command", Argv: true, Patch: true, said: codexExit},

		{Name: "read_file", Agent: Native, Kind: Read, Key: "path"},
		{Name: "Read", Agent: "claude", Kind: Read, Key: "file_path"},
		{Name: "read_file", Agent: "gemini, qwen", Kind: Read, Key: "file_path"},
		{Name: "read", Agent: "opencode", Kind: Read, Key: "filePath"},
		{Name: "view", Agent: "copilot", Kind: Read, Key: "path"},
		{Name: "Read", Agent: "continue", Kind: Read, Key: "filepath"},
		{Name: "read_files", Agent: "cline", Kind: Read, Key: "files[].path"},

		{Name: "write_file", Agent: Native, Kind: Write, Key: "path", Second: "content"},
		{Name: "Write", Agent: "claude", Kind: Write, Key: "file_path", Second: "content"},
		{Name: "write_file", Agent: "gemini, qwen", Kind: Write, Key: "file_path", Second: "content"},
		{Name: "write", Agent: "opencode", Kind: Write, Key: "filePath", Second: "content"},
		{Name: "create", Agent: "copilot", Kind: Write, Key: "path", Second: "file_text", NewOnly: true},
		{Name: "Write", Agent: "continue", Kind: Write, Key: "filepath", Second: "content"},
		{Name: "editor", Agent: "cline", Kind: Write, Key: "path", Second: "new_text", NewOnly: true},

		{Name: "edit_file", Agent: Native, Kind: Edit, Key: "path", Second: "search", Third: "replace"},
		{Name: "Edit", Agent: "claude, continue", Kind: Edit, Key: "file_path", Second: "old_string", Third: "new_string"},
		{Name: "edit", Agent: "qwen", Kind: Edit, Key: "file_path", Second: "old_string", Third: "new_string"},
		{Name: "edit", Agent: "opencode", Kind: Edit, Key: "filePath", Second: "oldString", Third: "newString"},
		{Name: "edit", Agent: "copilot", Kind: Edit, Key: "path", Second: "old_str", Third: "new_str"},
		{Name: "editor", Agent: "cline", Kind: Edit, Key: "path", Second: "old_text", Third: "new_text"},
		{Name: "replace", Agent: "gemini", Kind: Edit, Key: "file_path", Second: "old_string", Third: "new_string",
			Extra: map[string]any{"instruction": "replace the text as asked"}},

		{Name: "ask_user", Agent: Native, Kind: Ask, Key: "question"},
	}
}

// Absolute says whether the tool wants a file's path absolute (all but
// proctor's own, whose paths are relative to the workspace).
func (t Tool) Absolute() bool { return t.Kind != Run && t.Kind != Ask && t.Agent != "native" }

// Args are in's arguments as the tool names them, the file at path.
func (t Tool) Args(in Intent, path string) map[string]any {
	args := map[string]any{}
	for k, v := range t.Extra {
		args[k] = v
	}
	switch t.Kind {
	case Run:
		if t.Argv {
			args[t.Key] = []string{"bash", "-lc", in.Command}
		} else {
			setArg(args, t.Key, in.Command)
		}
		if t.Describe {
			args["description"] = "run " + clip.Head(in.Command, 60)
		}
	case Ask:
		setArg(args, t.Key, in.Question)
	case Read:
		setArg(args, t.Key, path)
	case Write:
		setArg(args, t.Key, path)
		setArg(args, t.Second, in.Content)
	case Edit:
		setArg(args, t.Key, path)
		setArg(args, t.Second, in.Old)
		setArg(args, t.Third, in.New)
	}
	return args
}

// setArg sets the argument at path ("name", "list[]", "list[].name") to v.
func setArg(args map[string]any, path string, v string) {
	list, field, isList := strings.Cut(path, "[]")
	switch {
	case !isList:
		args[path] = v
	case field == "":
		args[list] = []any{v}
	default:
		item, _ := args[list].([]any)
		if len(item) == 0 {
			item = []any{map[string]any{}}
		}
		item[0].(map[string]any)[strings.TrimPrefix(field, ".")] = v
		args[list] = item
	}
}

// getArg is the text of the argument at path in a call's arguments; a list
// of texts ("list[]") is each item, one a line.
func getArg(a map[string]json.RawMessage, path string) (string, bool) {
	list, field, isList := strings.Cut(path, "[]")
	if !isList {
		var s string
		v, ok := a[path]
		return s, ok && json.Unmarshal(v, &s) == nil
	}
	if field == "" {
		var items []string
		if json.Unmarshal(a[list], &items) != nil || len(items) == 0 {
			return "", false
		}
		return strings.Join(items, "\n"), true
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(a[list], &items) != nil || len(items) == 0 {
		return "", false
	}
	return getArg(items[0], strings.TrimPrefix(field, "."))
}

// topArg is the argument a path starts at.
func topArg(path string) string {
	name, _, _ := strings.Cut(path, "[]")
	return name
}

// Fits says whether a tool offered with this JSON schema of parameters is
// this one: it has the properties this tool's arguments use (tools of the
// same name differ between agents).
func (t Tool) Fits(schema json.RawMessage) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || s.Properties == nil {
		return t.Kind == Run // a command tool offered without a schema is taken at its name
	}
	for _, k := range []string{t.Key, t.Second, t.Third} {
		if _, ok := s.Properties[topArg(k)]; k != "" && !ok {
			return false
		}
	}
	for _, k := range t.Marks {
		if _, ok := s.Properties[k]; !ok {
			return false
		}
	}
	return true
}

// Of is the intent a tool call carries out, when its tool is one of the
// table's and its arguments are that tool's.
func (tb Table) Of(name, args string) (Intent, bool) {
	var a map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &a) != nil {
		return Intent{}, false
	}
	str := func(k string) (string, bool) { return getArg(a, k) }
	// The tool that names the most of the call's arguments is the one it is
	// (Cline's editor writes a file, or with old_text edits one).
	var named []Tool
	for _, t := range tb.all() {
		if t.Name == name {
			named = append(named, t)
		}
	}
	slices.SortStableFunc(named, func(x, y Tool) int { return y.keys() - x.keys() })
	for _, t := range named {
		if t.Kind == Write || t.Kind == Edit {
			if _, ok := str(t.Second); !ok {
				continue
			}
			if _, ok := str(t.Third); t.Third != "" && !ok {
				continue
			}
		}
		in := Intent{Kind: t.Kind}
		if t.Kind == Run {
			if t.Argv {
				var argv []string
				if json.Unmarshal(a[t.Key], &argv) != nil || len(argv) == 0 {
					continue
				}
				in.Command = argv[len(argv)-1]
				if len(argv) < 3 || argv[len(argv)-2] != "-lc" && argv[len(argv)-2] != "-c" {
					in.Command = strings.Join(argv, " ")
				}
				return in, true
			}
			if c, ok := str(t.Key); ok {
				in.Command = c
				return in, true
			}
			continue
		}
		p, ok := str(t.Key)
		if !ok {
			continue
		}
		if t.Kind == Ask {
			in.Question = p
			return in, true
		}
		in.Path = p
		switch t.Kind {
		case Write:
			in.Content, _ = str(t.Second)
		case Edit:
			in.Old, _ = str(t.Second)
			in.New, _ = str(t.Third)
		}
		return in, true
	}
	return Intent{}, false
}

// keys counts the arguments the tool names for its intent.
func (t Tool) keys() int {
	n := 0
	for _, k := range []string{t.Key, t.Second, t.Third} {
		if k != "" {
			n++
		}
	}
	return n
}

// Native is the intent as a call of proctor's own tool: its name and
// arguments.
func (in Intent) Native() (string, string) {
	i := slices.IndexFunc(all(), func(t Tool) bool { return t.Kind == in.Kind && t.Agent == "native" })
	t := all()[i]
	data, _ := json.Marshal(t.Args(in, in.Path))
	return t.Name, string(data)
}
