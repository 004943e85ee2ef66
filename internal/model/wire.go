package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// The wire format of OpenAI-compatible chat completions. Requests are
// encoded here so that what is sent is exactly what is recorded.

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
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
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
	ID      string       `json:"id,omitempty"`
	Object  string       `json:"object,omitempty"`
	Model   string       `json:"model,omitempty"`
	Choices []wireChoice `json:"choices"`
	Usage   *Usage       `json:"usage,omitempty"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

// requestEncoder encodes requests of one conversation. A conversation
// resends every earlier message with each request, so the encoder keeps the
// JSON of the messages it has encoded and encodes only the new ones.
type requestEncoder struct {
	msgs    []Message
	encoded [][]byte
	// The request without its messages, as last encoded: a conversation
	// offers the same tools every turn, and their schemas are most of a
	// request. shared, when not nil, is the head last encoded by any
	// conversation over the same SDK client (a suite's runs offer the same
	// tools too).
	head   head
	shared *heads
}

// head is the encoding of a request without its messages.
type head struct {
	data   []byte
	model  string
	tools  []ToolSpec
	stream bool
}

func (h *head) fits(model string, req Request) bool {
	return h.data != nil && h.model == model && h.stream == req.Stream && sameTools(req.Tools, h.tools)
}

// heads is a head shared by encoders; its data is never changed in place.
type heads struct {
	mu   sync.Mutex
	last head
}

func (hs *heads) get(model string, req Request) (head, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.last, hs.last.fits(model, req)
}

func (hs *heads) put(h head) {
	hs.mu.Lock()
	hs.last = h
	hs.mu.Unlock()
}

// cloneTools copies tool specs deeply, so that a head's key does not
// change with its caller's slices.
func cloneTools(tools []ToolSpec) []ToolSpec {
	out := make([]ToolSpec, len(tools))
	for i, t := range tools {
		t.Parameters = bytes.Clone(t.Parameters)
		out[i] = t
	}
	return out
}

func sameTools(a, b []ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

func (e *requestEncoder) encode(model string, req Request) ([]byte, error) {
	keep := 0
	for keep < len(e.msgs) && keep < len(req.Messages) && sameMessage(e.msgs[keep], req.Messages[keep]) {
		keep++
	}
	e.msgs, e.encoded = e.msgs[:keep], e.encoded[:keep]
	for _, m := range req.Messages[keep:] {
		data, err := json.Marshal(wireMessage{Role: m.Role, Content: m.Content, ToolCalls: toWireCalls(m.ToolCalls), ToolCallID: m.ToolCallID, Name: m.Name})
		if err != nil {
			return nil, fmt.Errorf("encode chat request: %w", err)
		}
		e.msgs = append(e.msgs, m)
		e.encoded = append(e.encoded, data)
	}
	if !e.head.fits(model, req) {
		if e.shared == nil {
			e.shared = new(heads)
		}
		h, ok := e.shared.get(model, req)
		if !ok {
			data, err := encodeRequest(model, Request{Tools: req.Tools, Stream: req.Stream})
			if err != nil {
				return nil, err
			}
			h = head{data: data, model: model, tools: cloneTools(req.Tools), stream: req.Stream}
			e.shared.put(h)
		}
		e.head = h
	}
	head := e.head.data
	// head is {"model":…,"messages":null,…}: splice the messages in.
	const null = `"messages":null`
	i := bytes.Index(head, []byte(null))
	if i < 0 {
		return nil, fmt.Errorf("encode chat request: unexpected encoding %s", head)
	}
	size := len(head)
	for _, m := range e.encoded {
		size += len(m) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, head[:i]...)
	out = append(out, `"messages":[`...)
	for j, m := range e.encoded {
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	out = append(out, ']')
	return append(out, head[i+len(null):]...), nil
}

func sameMessage(a, b Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.Name != b.Name || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}

func encodeRequest(model string, req Request) ([]byte, error) {
	w := wireRequest{Model: model, Stream: req.Stream}
	if req.Stream {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, wireMessage{Role: m.Role, Content: m.Content, ToolCalls: toWireCalls(m.ToolCalls), ToolCallID: m.ToolCallID, Name: m.Name})
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	data, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode chat request: %w", err)
	}
	return data, nil
}

func toWireCalls(calls []ToolCall) []wireToolCall {
	var out []wireToolCall
	for _, c := range calls {
		out = append(out, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// DecodeRequest reads a request body as EncodeRequest writes it (the
// scripted model's side of the wire).
func DecodeRequest(body []byte) (string, Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return "", Request{}, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	req := Request{Stream: w.Stream}
	for _, m := range w.Messages {
		msg := Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
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

// EncodeResponse is the JSON body of a non-streamed reply.
func EncodeResponse(id, model string, resp Response) ([]byte, error) {
	w := wireResponse{ID: id, Object: "chat.completion", Model: model, Choices: []wireChoice{{
		FinishReason: resp.FinishReason,
		Message:      wireMessage{Role: RoleAssistant, Content: resp.Message.Content, ToolCalls: toWireCalls(resp.Message.ToolCalls)},
	}}, Usage: &resp.Usage}
	return json.Marshal(w)
}

// decodeResponse checks a reply for what the loop needs and names what is
// missing.
func decodeResponse(raw []byte) (*Response, error) {
	bad := func(format string, args ...any) error {
		return &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf(format, args...)}
	}
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, bad("the reply is not a chat completion: %v", err)
	}
	if len(w.Choices) == 0 {
		return nil, bad("the reply has no choices")
	}
	ch := w.Choices[0]
	msg := Message{Role: RoleAssistant, Content: ch.Message.Content}
	for i, c := range ch.Message.ToolCalls {
		if strings.TrimSpace(c.ID) == "" {
			return nil, bad("tool call %d (%s) has no id", i+1, c.Function.Name)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	resp := &Response{Message: msg, FinishReason: ch.FinishReason, Model: w.Model}
	if w.Usage != nil {
		resp.Usage = *w.Usage
		if resp.Usage.TotalTokens == 0 {
			resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		}
	}
	return resp, nil
}

// DecodeResponse reads a recorded non-streamed reply.
func DecodeResponse(raw []byte) (*Response, error) { return decodeResponse(raw) }
