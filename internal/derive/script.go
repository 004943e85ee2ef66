package derive

// The model.yaml of a made scenario: the run's recorded replies, each tool
// call an intent where it is one.

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
)

// callYAML is a tool call as a model script writes it: an intent, or a
// tool's name and arguments.
type callYAML map[string]any

type stepYAML struct {
	Expect map[string]string `yaml:"expect,omitempty"`
	Reply  replyYAML         `yaml:"reply"`
}

type replyYAML struct {
	Content   string     `yaml:"content,omitempty"`
	ToolCalls []callYAML `yaml:"tool_calls,omitempty"`
}

// script is the run's recorded replies, one step each, in order: each
// tool call an intent where it is one, expecting only who spoke last.
func (d *deriver) script() ([]stepYAML, error) {
	var steps []stepYAML
	// the fullest request, read whole once: the conversation's messages
	var fullest struct {
		log  *bundle.ExchangeLog
		i, n int
	}
	for i, r := range d.runs {
		log, probs, err := bundle.ReadExchanges(r.Dir, bundle.DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("read the exchanges of run %s: %w", d.rcs[i].RunID, err)
		}
		if len(probs) > 0 {
			return nil, fmt.Errorf("read the exchanges of run %s: %v", d.rcs[i].RunID, probs)
		}
		wsDir := r.Workspace
		for j, x := range log.Exchanges {
			if len(x.Response) == 0 || x.Error != "" || !x.ModelCall() {
				continue
			}
			gist, err := log.Gist(j)
			if err != nil {
				return nil, err
			}
			_, req, err := model.DecodeAnyRequest(x.API, gist)
			if err != nil {
				return nil, fmt.Errorf("exchange %d: %w", x.Seq, err)
			}
			resp, err := model.DecodeReply(x.API, x.Response)
			if err != nil {
				return nil, fmt.Errorf("exchange %d: %w", x.Seq, err)
			}
			n := len(req.Messages) // a request recorded whole: all of them
			if x.Request == nil {
				_, n = log.Size(j)
			}
			if n > fullest.n {
				fullest.log, fullest.i, fullest.n = log, j, n
			}
			st := stepYAML{Reply: replyYAML{Content: d.redact(resp.Message.Content)}}
			if n := len(req.Messages); n > 0 && (req.Messages[n-1].Role == model.RoleUser || req.Messages[n-1].Role == model.RoleTool) {
				st.Expect = map[string]string{"last_role": req.Messages[n-1].Role}
			}
			for _, c := range resp.Message.ToolCalls {
				st.Reply.ToolCalls = append(st.Reply.ToolCalls, d.call(c, wsDir))
			}
			steps = append(steps, st)
		}
	}
	var longest []model.Message
	if fullest.log != nil {
		raw, err := fullest.log.Request(fullest.i)
		if err != nil {
			return nil, err
		}
		x := fullest.log.Exchanges[fullest.i]
		_, req, err := model.DecodeAnyRequest(x.API, raw)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", x.Seq, err)
		}
		longest = req.Messages
	}
	if len(steps) == 0 {
		return nil, errors.New("the run has no answered model call: a scenario needs its model's replies")
	}
	d.made.Steps = len(steps)
	d.conversation(longest)
	return steps, nil
}

// conversation reads the person's side of the run from its fullest
// request: the first user message is the task, an answer to a question the
// agent asked is a yield reply, and every other user message is a turn.
func (d *deriver) conversation(msgs []model.Message) {
	asked := false
	for _, m := range msgs {
		switch m.Role {
		case model.RoleAssistant:
			asked = false
			for _, c := range m.ToolCalls {
				if in, ok := d.opt.Tools.Of(c.Name, c.Arguments); ok && in.Kind == intent.Ask {
					asked = true
				}
			}
		case model.RoleUser:
			text := d.redact(m.Content)
			switch {
			case len(d.turns) == 0:
				d.turns = append(d.turns, text)
			case asked:
				d.answers = append(d.answers, text)
			default:
				d.turns = append(d.turns, text)
			}
			asked = false
		}
	}
}

// call writes a recorded tool call as an intent when it is one (its path
// made relative to the workspace), else as the tool's own call.
func (d *deriver) call(c model.ToolCall, wsDir string) callYAML {
	in, ok := d.opt.Tools.Of(c.Name, c.Arguments)
	rel := func(p string) (string, bool) {
		if filepath.IsAbs(p) {
			r, err := filepath.Rel(wsDir, p)
			if err != nil || !filepath.IsLocal(r) {
				return "", false
			}
			p = filepath.ToSlash(r)
		}
		return p, filepath.IsLocal(filepath.FromSlash(p))
	}
	if ok {
		switch in.Kind {
		case intent.Run:
			return callYAML{intent.Run: d.redact(in.Command)}
		case intent.Ask:
			return callYAML{intent.Ask: d.redact(in.Question)}
		case intent.Read:
			if p, ok := rel(in.Path); ok {
				return callYAML{intent.Read: p}
			}
		case intent.Write:
			if p, ok := rel(in.Path); ok {
				return callYAML{intent.Write: map[string]string{"path": p, "content": d.redact(in.Content)}}
			}
		case intent.Edit:
			if p, ok := rel(in.Path); ok {
				return callYAML{intent.Edit: map[string]string{"path": p, "old": d.redact(in.Old), "new": d.redact(in.New)}}
			}
		}
	}
	// Arguments that are a JSON object are written as YAML, redacted.
	var args any = d.redact(c.Arguments)
	var parsed map[string]any
	if json.Unmarshal([]byte(args.(string)), &parsed) == nil {
		args = parsed
	}
	return callYAML{"name": c.Name, "arguments": args}
}
