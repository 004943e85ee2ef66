package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/yamltree"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// YAMLError formats a YAML syntax error as "file:line: problem".
func YAMLError(path string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(msg, "yaml: "))
}

// Script is a parsed model script.
type Script struct {
	Path  string // the file it came from, for messages
	Name  string
	Model string // the model name the endpoint reports
	Steps []Step
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
}

// Reply is what the scripted model answers.
type Reply struct {
	Content   string
	ToolCalls []model.ToolCall
	Usage     model.Usage
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
// "file:line: field: problem".
func Parse(path string, data []byte) (*Script, error) {
	p := &parser{path: path}
	root, err := yamltree.Parse(data)
	if err != nil {
		return nil, YAMLError(path, err)
	}
	s := &Script{Path: path, Model: "scripted"}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty script; a script needs a steps list", path)
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with name, model and steps", path, doc.Line)
	}
	var stepsNode *yaml.Node
	for k, v := range pairs(doc) {
		switch k.Value {
		case "name":
			s.Name = p.str(v, "name")
		case "model":
			s.Model = p.str(v, "model")
		case "steps":
			stepsNode = v
		default:
			p.add(k, "%s: unknown key (known: name, model, steps)", k.Value)
		}
	}
	switch {
	case stepsNode == nil:
		p.add(doc, "steps: missing; a script needs at least one step")
	case stepsNode.Kind != yaml.SequenceNode || len(stepsNode.Content) == 0:
		p.add(stepsNode, "steps: want a list of at least one step")
	default:
		for i, sn := range stepsNode.Content {
			s.Steps = append(s.Steps, p.step(sn, fmt.Sprintf("steps[%d]", i), i))
		}
	}
	if s.Model == "" {
		s.Model = "scripted"
	}
	if len(p.problems) > 0 {
		return nil, errors.New(strings.Join(p.problems, "\n"))
	}
	return s, nil
}

type parser struct {
	path     string
	problems []string
}

func (p *parser) add(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf("%s:%d: %s", p.path, n.Line, fmt.Sprintf(format, args...)))
}

func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode {
		p.add(n, "%s: want text", field)
		return ""
	}
	return n.Value
}

func (p *parser) int64(n *yaml.Node, field string) int64 {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil || v < 0 {
		p.add(n, "%s: want a whole number ≥ 0, got %q", field, n.Value)
	}
	return v
}

func pairs(n *yaml.Node) func(func(*yaml.Node, *yaml.Node) bool) {
	return func(yield func(*yaml.Node, *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !yield(n.Content[i], n.Content[i+1]) {
				return
			}
		}
	}
}

func (p *parser) step(n *yaml.Node, field string, index int) Step {
	st := Step{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		p.add(n, "%s: want a mapping with expect and reply", field)
		return st
	}
	hasReply := false
	for k, v := range pairs(n) {
		switch k.Value {
		case "expect":
			st.Expect = p.expect(v, field+".expect")
		case "reply":
			hasReply = true
			st.Reply = p.reply(v, field+".reply", index)
		default:
			p.add(k, "%s.%s: unknown key (known: expect, reply)", field, k.Value)
		}
	}
	if !hasReply {
		p.add(n, "%s.reply: missing", field)
	}
	return st
}

func (p *parser) expect(n *yaml.Node, field string) Expect {
	var e Expect
	if n.Kind != yaml.MappingNode {
		p.add(n, "%s: want a mapping", field)
		return e
	}
	for k, v := range pairs(n) {
		switch k.Value {
		case "last_role":
			e.LastRole = p.str(v, field+".last_role")
			if !slices.Contains([]string{model.RoleUser, model.RoleTool, model.RoleSystem}, e.LastRole) {
				p.add(v, "%s.last_role: %q is not one of user, tool, system", field, e.LastRole)
			}
		case "last_contains":
			e.LastContains = p.str(v, field+".last_contains")
		case "last_matches":
			re, err := regexp.Compile(p.str(v, field+".last_matches"))
			if err != nil {
				p.add(v, "%s.last_matches: %v", field, err)
			}
			e.LastMatches = re
		case "tools_offered":
			if v.Kind != yaml.SequenceNode {
				p.add(v, "%s.tools_offered: want a list of tool names", field)
				continue
			}
			for _, t := range v.Content {
				e.ToolsOffered = append(e.ToolsOffered, p.str(t, field+".tools_offered"))
			}
		default:
			p.add(k, "%s.%s: unknown key (known: last_role, last_contains, last_matches, tools_offered)", field, k.Value)
		}
	}
	return e
}

func (p *parser) reply(n *yaml.Node, field string, index int) Reply {
	var r Reply
	if n.Kind != yaml.MappingNode {
		p.add(n, "%s: want a mapping with content and/or tool_calls", field)
		return r
	}
	for k, v := range pairs(n) {
		switch k.Value {
		case "content":
			r.Content = p.str(v, field+".content")
		case "tool_calls":
			if v.Kind != yaml.SequenceNode {
				p.add(v, "%s.tool_calls: want a list", field)
				continue
			}
			for j, cn := range v.Content {
				r.ToolCalls = append(r.ToolCalls, p.toolCall(cn, fmt.Sprintf("%s.tool_calls[%d]", field, j), index, j))
			}
		case "usage":
			if v.Kind != yaml.MappingNode {
				p.add(v, "%s.usage: want a mapping", field)
				continue
			}
			for uk, uv := range pairs(v) {
				switch uk.Value {
				case "prompt_tokens":
					r.Usage.PromptTokens = p.int64(uv, field+".usage.prompt_tokens")
				case "completion_tokens":
					r.Usage.CompletionTokens = p.int64(uv, field+".usage.completion_tokens")
				case "total_tokens":
					r.Usage.TotalTokens = p.int64(uv, field+".usage.total_tokens")
				default:
					p.add(uk, "%s.usage.%s: unknown key", field, uk.Value)
				}
			}
		default:
			p.add(k, "%s.%s: unknown key (known: content, tool_calls, usage)", field, k.Value)
		}
	}
	if r.Content == "" && len(r.ToolCalls) == 0 {
		p.add(n, "%s: a reply needs content or tool_calls", field)
	}
	if r.Usage.TotalTokens == 0 {
		r.Usage.TotalTokens = r.Usage.PromptTokens + r.Usage.CompletionTokens
	}
	return r
}

func (p *parser) toolCall(n *yaml.Node, field string, step, index int) model.ToolCall {
	c := model.ToolCall{ID: fmt.Sprintf("call_%d_%d", step+1, index+1)}
	if n.Kind != yaml.MappingNode {
		p.add(n, "%s: want a mapping with name and arguments", field)
		return c
	}
	for k, v := range pairs(n) {
		switch k.Value {
		case "id":
			c.ID = p.str(v, field+".id")
		case "name":
			c.Name = p.str(v, field+".name")
		case "arguments":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				c.Arguments = v.Value // verbatim, valid JSON or not
				continue
			}
			var val any
			if err := v.Decode(&val); err != nil {
				p.add(v, "%s.arguments: %v", field, err)
				continue
			}
			data, err := json.Marshal(val)
			if err != nil {
				p.add(v, "%s.arguments: cannot be written as JSON: %v", field, err)
				continue
			}
			c.Arguments = string(data)
		default:
			p.add(k, "%s.%s: unknown key (known: id, name, arguments)", field, k.Value)
		}
	}
	if c.Name == "" {
		p.add(n, "%s.name: missing", field)
	}
	if c.Arguments == "" {
		c.Arguments = "{}"
	}
	return c
}

// Check reports how req differs from what step i expects, or "" when it
// matches.
func (s *Script) Check(i int, req model.Request) string {
	e := s.Steps[i].Expect
	var diffs []string
	var last model.Message
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1]
	}
	if e.LastRole != "" && last.Role != e.LastRole {
		diffs = append(diffs, fmt.Sprintf("expected the last message to be from %s, got %s", e.LastRole, orNone(last.Role)))
	}
	if e.LastContains != "" && !strings.Contains(last.Content, e.LastContains) {
		diffs = append(diffs, fmt.Sprintf("expected the last message to contain %q, got %q", e.LastContains, clip(last.Content, 200)))
	}
	if e.LastMatches != nil && !e.LastMatches.MatchString(last.Content) {
		diffs = append(diffs, fmt.Sprintf("expected the last message to match /%s/, got %q", e.LastMatches, clip(last.Content, 200)))
	}
	for _, t := range e.ToolsOffered {
		if !slices.ContainsFunc(req.Tools, func(ts model.ToolSpec) bool { return ts.Name == t }) {
			diffs = append(diffs, fmt.Sprintf("expected tool %s to be offered; it was not", t))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: step %d: %s", s.Path, s.Steps[i].Line, i+1, strings.Join(diffs, "; "))
}

func orNone(s string) string {
	if s == "" {
		return "no message"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
