package script

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
)

// Export turns the recorded exchanges of a run into a model script that
// replays the run: one step per answered call, with the reply exactly as
// recorded (tool call ids included) and the last message's role as its
// expectation (and the API, when it is not chat completions). Failed attempts, and
// calls beside the model calls (counting tokens, listing models), are left out.
// Each request is read as its gist (its model and last message), so a long
// run exports in time that grows with it, not its square.
func Export(name string, l *bundle.ExchangeLog) ([]byte, error) {
	type call struct {
		ID        string `yaml:"id"`
		Name      string `yaml:"name"`
		Arguments string `yaml:"arguments"`
	}
	type usage struct {
		PromptTokens     int64 `yaml:"prompt_tokens"`
		CompletionTokens int64 `yaml:"completion_tokens"`
		TotalTokens      int64 `yaml:"total_tokens"`
		CacheReadTokens  int64 `yaml:"cache_read_tokens,omitempty"`
		CacheWriteTokens int64 `yaml:"cache_write_tokens,omitempty"`
	}
	type reply struct {
		Content   string `yaml:"content,omitempty"`
		ToolCalls []call `yaml:"tool_calls,omitempty"`
		Usage     usage  `yaml:"usage"`
	}
	type expect struct {
		API      string `yaml:"api,omitempty"`
		LastRole string `yaml:"last_role,omitempty"`
	}
	type step struct {
		Expect expect `yaml:"expect"`
		Reply  reply  `yaml:"reply"`
	}
	type file struct {
		Name  string `yaml:"name"`
		Model string `yaml:"model"`
		Steps []step `yaml:"steps"`
	}
	out := file{Name: name, Model: "replay"}
	for i, x := range l.Exchanges {
		if len(x.Response) == 0 || x.Error != "" || !x.ModelCall() {
			continue
		}
		gist, err := l.Gist(i)
		if err != nil {
			return nil, err
		}
		modelName, req, err := model.DecodeAnyRequest(x.API, gist)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", x.Seq, err)
		}
		if modelName != "" {
			out.Model = modelName
		}
		resp, err := model.DecodeReply(x.API, x.Response)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", x.Seq, err)
		}
		st := step{Reply: reply{Content: resp.Message.Content, Usage: usage(resp.Usage)}}
		if x.API != "" && x.API != model.APIChat {
			st.Expect.API = x.API // an external agent's run: replayed through the same API
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role != model.RoleAssistant {
			st.Expect.LastRole = req.Messages[n-1].Role
		}
		for _, c := range resp.Message.ToolCalls {
			st.Reply.ToolCalls = append(st.Reply.ToolCalls, call{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out.Steps = append(out.Steps, st)
	}
	if len(out.Steps) == 0 {
		return nil, fmt.Errorf("the run has no answered model call to export")
	}
	var buf bytes.Buffer
	buf.WriteString("# Exported by proctor script export; replays the recorded run step by step.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode script: %w", err)
	}
	return buf.Bytes(), nil
}
