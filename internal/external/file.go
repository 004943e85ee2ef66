package external

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// File is agents.yaml: the agents a user can pick by name, beside the
// built-in native, codex, claude, gemini, qwen, opencode and copilot.
//
//	agents:
//	  - name: my-agent
//	    kind: command
//	    command: [./bin/my-agent, --task, "{{task}}"]
//	    resume: [./bin/my-agent, --continue, "{{task}}"]
//	    env: {MY_AGENT_QUIET: "1"}
//	    tools:                       # its tools for intents, where proctor does not know them
//	      run: {name: shell, command: cmd, exit: 'exit status (\d+)'}
//	      read: {name: open, path: "files[].path"}
type File struct {
	Path   string
	Agents []Agent
}

// Fields are the fields of an agent, in agents.yaml and a scenario's
// agent:.
var Fields = []string{"name", "kind", "command", "resume", "env", "version", "config", "tools"}

var (
	agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// Load reads agents.yaml at path; a file that does not exist has no agents.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read agents: %w", err)
	}
	return Parse(path, data)
}

// Parse reads agents.yaml from data, reporting every problem as
// file:line:col: field: problem.
func Parse(path string, data []byte) (*File, error) {
	doc, err := yamldoc.Parse(path, data)
	if err != nil || doc == nil {
		return &File{Path: path}, err
	}
	out := &File{Path: path}
	d := &yamldoc.Decoder{File: path}
	d.Fields(doc, "", []string{"agents"}, func(_ string, _, v *yaml.Node) {
		seen := map[string]bool{KindNative: true}
		for _, k := range BuiltinKinds() {
			seen[k] = true
		}
		for i, n := range d.List(v, "agents") {
			field := fmt.Sprintf("agents[%d]", i)
			a := Decode(d, n, field)
			switch {
			case n.Kind != yaml.MappingNode:
				continue
			case a.Name == "":
				d.Add(n, field+".name", "missing")
			case seen[a.Name]:
				d.Add(n, field+".name", "%q is defined twice (%s are built in)", a.Name, strings.Join(append([]string{KindNative}, BuiltinKinds()...), ", "))
			}
			seen[a.Name] = true
			out.Agents = append(out.Agents, a)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Decode reads one agent (an agents.yaml entry, or a scenario's agent:).
// A codex or native agent without a name is named after its kind.
func Decode(d *yamldoc.Decoder, n *yaml.Node, field string) Agent {
	var a Agent
	d.Fields(n, field, Fields, func(key string, _, v *yaml.Node) {
		f := yamldoc.Join(field, key)
		switch key {
		case "name":
			if a.Name = d.Str(v, f); a.Name != "" && !agentName.MatchString(a.Name) {
				d.Add(v, f, "%q: want 1-64 letters, digits, '.', '_' or '-'", a.Name)
			}
		case "kind":
			if a.Kind = d.Str(v, f); !slices.Contains(Kinds(), a.Kind) {
				d.Add(v, f, "%q: want one of %s", a.Kind, strings.Join(Kinds(), ", "))
			}
		case "command":
			a.Command = d.Strs(v, f)
		case "version":
			a.Version = d.Strs(v, f)
		case "resume":
			a.Resume = d.Strs(v, f)
		case "config":
			a.Config = d.Str(v, f)
		case "tools":
			if v.Kind != yaml.ScalarNode {
				a.Tools = decodeTools(d, v, f)
			} else if a.ToolsOf = d.Str(v, f); !slices.Contains(intent.Agents(), a.ToolsOf) {
				d.Add(v, f, "%q: want the agent whose tools these are, one of %s, or a mapping of your agent's own tools", a.ToolsOf, strings.Join(intent.Agents(), ", "))
			}
		case "env":
			if v.Kind != yaml.MappingNode {
				d.Add(v, f, "want a mapping of NAME: value, got %s", yamldoc.KindName(v))
				return
			}
			a.Env = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k := v.Content[i].Value
				if !yamldoc.EnvName(k) || proctorSets(k) {
					d.Add(v.Content[i], f+"."+k, "not a variable an agent may be given (a name, not OPENAI_*, ANTHROPIC_*, GEMINI_*, GOOGLE_GEMINI_BASE_URL or PROCTOR_*, which proctor sets)")
					continue
				}
				a.Env[k] = d.Str(v.Content[i+1], f+"."+k)
			}
		}
	})
	if n.Kind != yaml.MappingNode {
		return a
	}
	switch {
	case a.Kind == "":
		d.Add(n, yamldoc.Join(field, "kind"), "missing; want one of %s", strings.Join(Kinds(), ", "))
	case a.Kind == KindCommand && len(a.Command) == 0:
		d.Add(n, yamldoc.Join(field, "command"), "missing; a command agent needs the command to run, e.g. [./my-agent, \"{{task}}\"]")
	case a.Kind == KindNative && (len(a.Command) > 0 || len(a.Env) > 0 || len(a.Resume) > 0):
		d.Add(n, field, "the native agent takes no command or env")
	case a.ToolsOf != "" && a.Kind != KindCommand:
		d.Add(n, yamldoc.Join(field, "tools"), "only a command agent is told whose tools it has; a %s agent's are its own", a.Kind)
	case a.Config != "" && a.Kind != KindCodex:
		d.Add(n, yamldoc.Join(field, "config"), "only a codex agent takes config (more config.toml); give a %s agent its own arguments in command: or variables in env:", a.Kind)
	}
	if a.Name == "" && a.Kind != KindCommand {
		a.Name = a.Kind
	}
	return a
}

// Find is the agent called name: native, a built-in kind (unless the
// file says otherwise), or one of the file's.
func (f *File) Find(name string) (Agent, error) {
	for _, a := range f.Agents {
		if a.Name == name {
			return a, nil
		}
	}
	if name == "" || name == KindNative {
		return Native(), nil
	}
	if _, ok := builtinKind(name); ok {
		return Agent{Name: name, Kind: name}, nil
	}
	return Agent{}, fmt.Errorf("no agent %q: the agents are %s (add one to %s)", name, strings.Join(f.Names(), ", "), f.Path)
}

// Names are the agents one can pick, native first.
func (f *File) Names() []string {
	names := append([]string{KindNative}, BuiltinKinds()...)
	for _, a := range f.Agents {
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	return names
}

// proctorSets says whether proctor sets the variable for every agent (the
// proxy and its key for each API, the model, the agent's home), so an
// agent's env: may not.
func proctorSets(name string) bool {
	for _, prefix := range []string{"OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_GEMINI_", "PROCTOR_"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// Kinds are the kinds an agent may be: native, the built-in agents, command.
func Kinds() []string {
	return slices.Concat([]string{KindNative}, BuiltinKinds(), []string{KindCommand})
}

// The fields of an intent's tool in tools:, by intent: the tool's name,
// and the names of its arguments for the intent's (a path: "commands[]",
// "files[].path").
var toolFields = map[string][]string{
	intent.Run:   {"name", "command", "exit"},
	intent.Read:  {"name", "path"},
	intent.Write: {"name", "path", "content", "new_only"},
	intent.Edit:  {"name", "path", "old", "new"},
}

// argPath is an argument's name or a path into a tool's arguments: a name,
// "name[]" (a list of texts), or "name[].field" (a list of objects).
var argPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*(\[\](\.[A-Za-z_][A-Za-z0-9_-]*)?)?$`)

// decodeTools reads an agent's tools: — for each intent the agent's own
// tool that does it — as the intent tools it adds to the ones proctor
// knows (internal/intent), looked for first.
func decodeTools(d *yamldoc.Decoder, n *yaml.Node, field string) []intent.Tool {
	kinds := []string{intent.Run, intent.Read, intent.Write, intent.Edit}
	var out []intent.Tool
	d.Fields(n, field, kinds, func(kind string, _, v *yaml.Node) {
		f := yamldoc.Join(field, kind)
		t := intent.Tool{Kind: kind, Agent: "agents.yaml"}
		d.Fields(v, f, toolFields[kind], func(key string, _, val *yaml.Node) {
			kf := yamldoc.Join(f, key)
			if key == "new_only" {
				t.NewOnly = d.Bool(val, kf)
				return
			}
			text := d.Str(val, kf)
			switch key {
			case "name":
				t.Name = text
				return
			case "exit":
				re, err := regexp.Compile(text)
				switch {
				case err != nil:
					d.Add(val, kf, "not a regular expression: %v", err)
				case re.NumSubexp() < 1:
					d.Add(val, kf, "%q has no group: the first group is the exit code, e.g. 'exit status (\\d+)'", text)
				default:
					t.ExitCode = re
				}
				return
			}
			if !argPath.MatchString(text) {
				d.Add(val, kf, "%q: want an argument's name, name[] (a list of texts) or name[].field (a list of objects)", text)
			}
			switch key {
			case "command", "path":
				t.Key = text
			case "content", "old":
				t.Second = text
			case "new":
				t.Third = text
			}
		})
		need := map[string][]string{intent.Run: {"name", "command"}, intent.Read: {"name", "path"}, intent.Write: {"name", "path", "content"}, intent.Edit: {"name", "path", "old", "new"}}[kind]
		for _, k := range need {
			if v.Kind == yaml.MappingNode && !hasKey(v, k) {
				d.Add(v, yamldoc.Join(f, k), "missing; a %s tool names it", kind)
			}
		}
		out = append(out, t)
	})
	return out
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}
