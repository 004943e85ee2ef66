package script

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Script is a parsed model script.
type Script struct {
	Path  string // the file it came from, for messages
	Name  string
	Model string // the model name the endpoint reports
	Steps []Step
	// Anytime are steps that answer whenever a request matches them, before
	// the ordered steps and without moving on (side requests such as a
	// title for the conversation). Each has at least one expectation.
	Anytime []Step
	// Workspace is the folder the run's agent works in: an intent's path
	// is made absolute in it for the agents that want one.
	Workspace string
	// Tools are the tools an intent is made a call of: the run's agent's
	// own (its agents.yaml entry), then every tool proctor knows.
	Tools intent.Table
}

// Step is one expected request and its reply.
type Step struct {
	Line   int // where the step starts in the file
	Expect Expect
	Reply  Reply
}

// Expect lists conditions on a request; all must hold. Empty conditions
// always hold.
type Expect struct {
	LastRole     string         // role of the last message: user or tool
	LastContains string         // the last message's content contains this
	LastMatches  *regexp.Regexp // the last message's content matches this
	ToolsOffered []string       // these tools are offered
	NoTools      bool           // no tool is offered (a side request, such as a title, usually offers none)
	SystemHas    string         // the system prompt (its system messages, or instructions) contains this
	API          string         // the request came through this API (one of model.APIs); "" any
}

// Reply is what the scripted model answers.
type Reply struct {
	Content   string
	ToolCalls []model.ToolCall
	Usage     model.Usage
	intents   []intent.Intent // beside ToolCalls: a call written as an intent (run, read, write, edit, ask), made a tool's call when answered
}

// Load reads and parses the script file at path.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model script: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a model script. It reports every problem it finds, each as
// "file:line:col: field: problem".
func Parse(path string, data []byte) (*Script, error) {
	doc, err := yamldoc.Parse(path, data)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, fmt.Errorf("%s: empty script; a script needs a steps list", path)
	}
	d := &yamldoc.Decoder{File: path}
	s := &Script{Path: path, Model: "scripted"}
	var steps *yaml.Node
	d.Fields(doc, "", []string{"name", "model", "steps", "anytime"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "name":
			s.Name = d.Str(v, key)
		case "model":
			s.Model = d.Str(v, key)
		case "steps":
			steps = v
		case "anytime":
			for i, sn := range d.List(v, key) {
				field := fmt.Sprintf("anytime[%d]", i)
				st := step(d, sn, field, i)
				if st.Expect.empty() {
					d.Add(sn, field+".expect", "an any-time step needs an expectation (last_contains, last_matches, last_role, tools_offered, no_tools or system_contains), or it would answer every request")
				}
				s.Anytime = append(s.Anytime, st)
			}
		}
	})
	switch {
	case doc.Kind != yaml.MappingNode:
	case steps == nil:
		d.Add(doc, "steps", "missing; a script needs at least one step")
	case steps.Kind != yaml.SequenceNode || len(steps.Content) == 0:
		d.Add(steps, "steps", "want a list of at least one step")
	default:
		for i, sn := range steps.Content {
			s.Steps = append(s.Steps, step(d, sn, fmt.Sprintf("steps[%d]", i), i))
		}
	}
	if s.Model == "" {
		s.Model = "scripted"
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func step(d *yamldoc.Decoder, n *yaml.Node, field string, index int) Step {
	st := Step{Line: n.Line}
	hasReply := false
	d.Fields(n, field, []string{"expect", "reply"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "expect":
			st.Expect = expect(d, v, field+".expect")
		case "reply":
			hasReply = true
			st.Reply = reply(d, v, field+".reply", index)
		}
	})
	if n.Kind == yaml.MappingNode && !hasReply {
		d.Add(n, field+".reply", "missing")
	}
	return st
}

func expect(d *yamldoc.Decoder, n *yaml.Node, field string) Expect {
	var e Expect
	d.Fields(n, field, []string{"last_role", "last_contains", "last_matches", "tools_offered", "no_tools", "system_contains", "api"}, func(key string, _, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "last_role":
			e.LastRole = d.Str(v, f)
			if !slices.Contains([]string{model.RoleUser, model.RoleTool, model.RoleSystem}, e.LastRole) {
				d.Add(v, f, "%q is not one of user, tool, system", e.LastRole)
			}
		case "last_contains":
			e.LastContains = d.Str(v, f)
		case "last_matches":
			e.LastMatches = d.Regex(v, f)
		case "tools_offered":
			e.ToolsOffered = d.Strs(v, f)
		case "no_tools":
			e.NoTools = d.Bool(v, f)
		case "system_contains":
			e.SystemHas = d.Str(v, f)
		case "api":
			if e.API = d.Str(v, f); !slices.Contains(model.APIs, e.API) {
				d.Add(v, f, "%q is not one of %s", e.API, strings.Join(model.APIs, ", "))
			}
		}
	})
	return e
}

func reply(d *yamldoc.Decoder, n *yaml.Node, field string, index int) Reply {
	var r Reply
	d.Fields(n, field, []string{"content", "tool_calls", "usage"}, func(key string, _, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "content":
			r.Content = d.Str(v, f)
		case "tool_calls":
			for j, cn := range d.List(v, f) {
				c, in := toolCall(d, cn, fmt.Sprintf("%s[%d]", f, j), index, j)
				r.ToolCalls = append(r.ToolCalls, c)
				r.intents = append(r.intents, in)
			}
			if !slices.ContainsFunc(r.intents, func(in intent.Intent) bool { return in.Kind != "" }) {
				r.intents = nil
			}
		case "usage":
			d.Fields(v, f, []string{"prompt_tokens", "completion_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens"}, func(key string, _, uv *yaml.Node) {
				n := int64(d.Count(uv, f+"."+key))
				switch key {
				case "prompt_tokens":
					r.Usage.PromptTokens = n
				case "completion_tokens":
					r.Usage.CompletionTokens = n
				case "total_tokens":
					r.Usage.TotalTokens = n
				case "cache_read_tokens":
					r.Usage.CacheReadTokens = n
				case "cache_write_tokens":
					r.Usage.CacheWriteTokens = n
				}
			})
		}
	})
	if n.Kind == yaml.MappingNode && r.Content == "" && len(r.ToolCalls) == 0 {
		d.Add(n, field, "a reply needs content or tool_calls")
	}
	if r.Usage.TotalTokens == 0 {
		r.Usage.TotalTokens = r.Usage.PromptTokens + r.Usage.CompletionTokens
	}
	return r
}

func toolCall(d *yamldoc.Decoder, n *yaml.Node, field string, step, index int) (model.ToolCall, intent.Intent) {
	c := model.ToolCall{ID: fmt.Sprintf("call_%d_%d", step+1, index+1)}
	var in intent.Intent
	d.Fields(n, field, []string{"id", "name", "arguments", intent.Run, intent.Read, intent.Write, intent.Edit, intent.Ask}, func(key string, _, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case intent.Run, intent.Read, intent.Ask:
			if in.Kind != "" {
				d.Add(v, f, "a tool call does one thing: it already says %s", in.Kind)
			}
			in.Kind = key
			switch key {
			case intent.Run:
				in.Command = d.Str(v, f)
			case intent.Read:
				in.Path = d.Str(v, f)
			case intent.Ask:
				in.Question = d.Str(v, f)
			}
		case intent.Write, intent.Edit:
			if in.Kind != "" {
				d.Add(v, f, "a tool call does one thing: it already says %s", in.Kind)
			}
			in.Kind = key
			want := []string{"path", "content"}
			if key == intent.Edit {
				want = []string{"path", "old", "new"}
			}
			d.Fields(v, f, want, func(k string, _, fv *yaml.Node) {
				switch k {
				case "path":
					in.Path = d.Str(fv, f+".path")
				case "content":
					in.Content = d.Str(fv, f+".content")
				case "old":
					in.Old = d.Str(fv, f+".old")
				case "new":
					in.New = d.Str(fv, f+".new")
				}
			})
			if v.Kind == yaml.MappingNode && in.Path == "" {
				d.Add(v, f+".path", "missing")
			}
			if key == intent.Edit && v.Kind == yaml.MappingNode && in.Old == "" {
				d.Add(v, f+".old", "missing: the text to replace")
			}
		case "id":
			c.ID = d.Str(v, f)
		case "name":
			c.Name = d.Str(v, f)
		case "arguments":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				c.Arguments = v.Value // verbatim, valid JSON or not
				return
			}
			if v.Kind != yaml.MappingNode {
				d.Add(v, f, "want a mapping of the tool's arguments (or a string, sent as it is), got %s", yamldoc.KindName(v))
				return
			}
			var val any
			if err := v.Decode(&val); err != nil {
				d.Add(v, f, "%v", err)
				return
			}
			data, err := bundle.PlainJSON(val)
			if err != nil {
				d.Add(v, f, "cannot be written as JSON: %v", err)
				return
			}
			c.Arguments = string(data)
		}
	})
	switch {
	case n.Kind != yaml.MappingNode:
	case in.Kind != "" && (c.Name != "" || c.Arguments != ""):
		d.Add(n, field, "either name and arguments (one agent's tool) or %s (whichever tool the agent offers for it), not both", in.Kind)
	case in.Kind == intent.Run && in.Command == "":
		d.Add(n, field+".run", "want the command to run")
	case in.Kind == intent.Read && in.Path == "":
		d.Add(n, field+".read", "want the path of the file to read")
	case in.Kind == intent.Ask && strings.TrimSpace(in.Question) == "":
		d.Add(n, field+".ask", "want the question to ask")
	case in.Kind == "" && c.Name == "":
		d.Add(n, field+".name", "missing (or say run:, read:, write:, edit: or ask: for whichever tool the agent offers)")
	}
	if c.Arguments == "" {
		c.Arguments = "{}"
	}
	return c, in
}

// Check reports how req differs from what step i expects, or "" when it
// matches.
func (s *Script) Check(i int, req model.Request) string {
	diffs := s.Steps[i].Expect.differences(req)
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: step %d: %s", s.Path, s.Steps[i].Line, i+1, strings.Join(diffs, "; "))
}

// AnytimeFor is the any-time step that answers req, if one does.
func (s *Script) AnytimeFor(req model.Request) (Step, bool) {
	for _, st := range s.Anytime {
		if len(st.Expect.differences(req)) == 0 {
			return st, true
		}
	}
	return Step{}, false
}

func (e Expect) empty() bool {
	return e.LastRole == "" && e.LastContains == "" && e.LastMatches == nil && len(e.ToolsOffered) == 0 && !e.NoTools && e.SystemHas == "" && e.API == ""
}

// differences says how req differs from e; none when it matches.
func (e Expect) differences(req model.Request) []string {
	var diffs []string
	if e.API != "" && req.API != e.API {
		diffs = append(diffs, fmt.Sprintf("expected a request through the %s API, got one through %s", e.API, req.API))
	}
	var last model.Message
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1]
	}
	if e.LastRole != "" && last.Role != e.LastRole {
		diffs = append(diffs, fmt.Sprintf("expected the last message to be from %s, got %s", e.LastRole, orNone(last.Role)))
	}
	if e.LastContains != "" && !strings.Contains(last.Content, e.LastContains) {
		diffs = append(diffs, fmt.Sprintf("expected the last message to contain %q, got %q", e.LastContains, clip.Head(last.Content, 200)))
	}
	if e.LastMatches != nil && !e.LastMatches.MatchString(last.Content) {
		diffs = append(diffs, fmt.Sprintf("expected the last message to match /%s/, got %q", e.LastMatches, clip.Head(last.Content, 200)))
	}
	for _, t := range e.ToolsOffered {
		if !slices.ContainsFunc(req.Tools, func(ts model.ToolSpec) bool { return ts.Name == t }) {
			diffs = append(diffs, fmt.Sprintf("expected tool %s to be offered; it was not", t))
		}
	}
	if e.NoTools && len(req.Tools) > 0 {
		diffs = append(diffs, fmt.Sprintf("expected no tools to be offered, got %d", len(req.Tools)))
	}
	if e.SystemHas != "" {
		var system strings.Builder
		for _, m := range req.Messages {
			if m.Role == model.RoleSystem {
				system.WriteString(m.Content + "\n")
			}
		}
		if !strings.Contains(system.String(), e.SystemHas) {
			diffs = append(diffs, fmt.Sprintf("expected the system prompt to contain %q, got %q", e.SystemHas, clip.Head(system.String(), 200)))
		}
	}
	return diffs
}

func orNone(s string) string {
	if s == "" {
		return "no message"
	}
	return s
}

// WithWorkspace is the script for a run whose agent works in dir.
func (s *Script) WithWorkspace(dir string) *Script {
	c := *s
	c.Workspace = dir
	return &c
}

// WithTools is the script for a run whose agent names its own tools for
// intents (agents.yaml tools:).
func (s *Script) WithTools(own ...intent.Tool) *Script {
	c := *s
	c.Tools = intent.For("", own...)
	return &c
}

// WithAnytime is the script with more any-time steps after its own.
func (s *Script) WithAnytime(steps ...Step) *Script {
	if len(steps) == 0 {
		return s
	}
	c := *s
	c.Anytime = append(append([]Step{}, s.Anytime...), steps...)
	return &c
}
