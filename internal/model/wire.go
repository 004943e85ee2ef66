package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The wire format of OpenAI-compatible chat completions, as the scripted
// endpoint, the client and the readers of recorded exchanges see it.

type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    wireContent    `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// wireContent is a message's content: a text, or (as clients may send for
// system, user and tool messages) an array of content parts, whose text
// parts are joined; other parts (images, files) are left out.
type wireContent string

func (c *wireContent) UnmarshalJSON(data []byte) error {
	text, err := ContentText(data)
	*c = wireContent(text)
	return err
}

// ContentText is a message content sent as a text, null, or a list of
// content parts, whose text parts (text, input_text, output_text) are
// joined with newlines.
func ContentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content: want a text or an array of content parts: %w", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function wireFunctionDef `json:"function"`
}

type wireFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type wireResponse struct {
	ID                string       `json:"id,omitempty"`
	Object            string       `json:"object,omitempty"`
	Created           int64        `json:"created,omitempty"`
	Model             string       `json:"model,omitempty"`
	SystemFingerprint string       `json:"system_fingerprint,omitempty"`
	Choices           []wireChoice `json:"choices"`
	Usage             *Usage       `json:"usage,omitempty"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

func toWireCalls(calls []ToolCall) []wireToolCall {
	var out []wireToolCall
	for _, c := range calls {
		out = append(out, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// DecodeRequest reads a chat completion request (the scripted model's side
// of the wire, and recorded exchanges): the model asked for and the request.
func DecodeRequest(body []byte) (string, Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return "", Request{}, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	req := Request{Stream: w.Stream, IncludeUsage: w.StreamOptions != nil && w.StreamOptions.IncludeUsage, API: APIChat}
	for _, m := range w.Messages {
		msg := Message{Role: m.Role, Content: string(m.Content), ToolCallID: m.ToolCallID, Name: m.Name}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return w.Model, req, nil
}

// EncodeResponse is the JSON body of a non-streamed reply, created at the
// given Unix time, from a system named fingerprint.
func EncodeResponse(id, model string, created int64, fingerprint string, resp Response) ([]byte, error) {
	w := wireResponse{ID: id, Object: "chat.completion", Created: created, Model: model, SystemFingerprint: fingerprint, Choices: []wireChoice{{
		FinishReason: resp.FinishReason,
		Message:      wireMessage{Role: RoleAssistant, Content: wireContent(resp.Message.Content), ToolCalls: toWireCalls(resp.Message.ToolCalls)},
	}}, Usage: &resp.Usage}
	return json.Marshal(w)
}

// DecodeResponse reads a non-streamed reply (a live one, a recorded one,
// or a stream folded into one) and checks it for what the loop needs,
// naming what is missing.
func DecodeResponse(raw []byte) (*Response, error) {
	var cc wireResponse
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("the reply is not a chat completion: %v", err)}
	}
	bad := func(format string, args ...any) error {
		return &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf(format, args...)}
	}
	if len(cc.Choices) == 0 {
		return nil, bad("the reply has no choices")
	}
	ch := cc.Choices[0]
	msg := Message{Role: RoleAssistant, Content: string(ch.Message.Content)}
	for i, tc := range ch.Message.ToolCalls {
		if strings.TrimSpace(tc.ID) == "" {
			return nil, bad("tool call %d (%s) has no id", i+1, tc.Function.Name)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	var u Usage
	if cc.Usage != nil {
		u = Usage{PromptTokens: cc.Usage.PromptTokens, CompletionTokens: cc.Usage.CompletionTokens, TotalTokens: cc.Usage.TotalTokens}
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return &Response{Message: msg, FinishReason: ch.FinishReason, Model: cc.Model, Usage: u}, nil
}
