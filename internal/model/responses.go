package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The Responses API (POST /v1/responses) beside chat completions: its
// requests and replies read as the same Request and Response, for the
// scripted endpoint, the recording proxy and readers of recorded exchanges.

type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"` // a text, or a list of items
	Tools        []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// responsesItem is one input item: a message (typed "message", or untyped
// with a role), a function call the model made, or its output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// DecodeResponsesRequest reads a Responses API request (POST /v1/responses)
// as a Request: instructions and developer messages as system messages,
// function_call items as the assistant's tool calls, function_call_output
// items as tool messages. Other items (reasoning and the like) are left out.
func DecodeResponsesRequest(body []byte) (string, Request, error) {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return "", Request{}, fmt.Errorf("request body is not a Responses API request: %w", err)
	}
	req := Request{Stream: in.Stream, IncludeUsage: true, API: APIResponses}
	if in.Instructions != "" {
		req.Messages = append(req.Messages, Message{Role: RoleSystem, Content: in.Instructions})
	}
	var text string
	var items []responsesItem
	if err := json.Unmarshal(in.Input, &text); err == nil {
		items = []responsesItem{{Type: "message", Role: RoleUser, Content: in.Input}}
	} else if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return "", Request{}, fmt.Errorf("input: want a text or a list of input items: %w", err)
		}
	}
	for i, it := range items {
		switch {
		case it.Type == "function_call":
			call := ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == RoleAssistant {
				req.Messages[n-1].ToolCalls = append(req.Messages[n-1].ToolCalls, call)
			} else {
				req.Messages = append(req.Messages, Message{Role: RoleAssistant, ToolCalls: []ToolCall{call}})
			}
		case it.Type == "function_call_output":
			out, err := ContentText(it.Output)
			if err != nil {
				return "", Request{}, fmt.Errorf("input[%d].output: %w", i, err)
			}
			req.Messages = append(req.Messages, Message{Role: RoleTool, ToolCallID: it.CallID, Content: out})
		case it.Type == "message" || (it.Type == "" && it.Role != ""):
			content, err := ContentText(it.Content)
			if err != nil {
				return "", Request{}, fmt.Errorf("input[%d].content: %w", i, err)
			}
			role := it.Role
			if role == "developer" {
				role = RoleSystem
			}
			req.Messages = append(req.Messages, Message{Role: role, Content: content})
		}
		// Other items (reasoning and the like) say nothing a step checks.
	}
	for _, t := range in.Tools {
		if t.Type == "function" {
			req.Tools = append(req.Tools, ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	return in.Model, req, nil
}

// DecodeResponsesReply reads a Responses API response object (a recorded
// one, or a stream folded into one) as a Response: its output text, and a
// tool call per function_call item.
func DecodeResponsesReply(raw []byte) (*Response, error) {
	var r struct {
		Model  string `json:"model"`
		Status string `json:"status"`
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"output"`
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			TotalTokens  int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("the reply is not a Responses API response: %v", err)}
	}
	var text strings.Builder // the output text: every output_text of every message, in order
	for _, item := range r.Output {
		for _, c := range item.Content {
			if item.Type == "message" && c.Type == "output_text" {
				text.WriteString(c.Text)
			}
		}
	}
	resp := &Response{Message: Message{Role: RoleAssistant, Content: text.String()}, FinishReason: "stop", Model: r.Model,
		Usage: Usage{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens, TotalTokens: r.Usage.TotalTokens}}
	for _, item := range r.Output {
		if item.Type == "function_call" {
			var args string // a text, as the API writes it (anything else kept as its JSON)
			if json.Unmarshal(item.Arguments, &args) != nil {
				args = string(item.Arguments)
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: item.CallID, Name: item.Name, Arguments: args})
		}
	}
	if len(resp.Message.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	if r.Status == "incomplete" {
		resp.FinishReason = "length"
	}
	return resp, nil
}

// DecodeReply reads a recorded reply of any API.
func DecodeReply(api string, raw []byte) (*Response, error) {
	switch api {
	case APIResponses:
		return DecodeResponsesReply(raw)
	case APIMessages:
		return DecodeMessagesReply(raw)
	case APIGemini:
		return DecodeGeminiReply(raw)
	}
	return DecodeResponse(raw)
}

// DecodeAnyRequest reads a recorded request of any API: the model asked
// for ("" for Gemini, which names it in the path) and the request.
func DecodeAnyRequest(api string, body []byte) (string, Request, error) {
	switch api {
	case APIResponses:
		return DecodeResponsesRequest(body)
	case APIMessages:
		return DecodeMessagesRequest(body)
	case APIGemini:
		req, err := DecodeGeminiRequest(body, false)
		return "", req, err
	}
	return DecodeRequest(body)
}

// ErrStreamCut is returned by FoldStream for a stream that ended before
// its reply did.
var ErrStreamCut = errors.New("the stream ended before the reply did")

// FoldStream folds a server-sent event stream of any API into the one
// object a non-streamed call would have answered: chat completion chunks
// through the SDK's accumulator, Responses API events by the response of
// their last response.completed, response.incomplete or response.failed
// event, Messages API events block by block, Gemini chunks part by part.
func FoldStream(api string, body []byte) ([]byte, error) {
	var events [][]byte
	err := readEvents(bytes.NewReader(body), func(data []byte) error {
		if data = bytes.TrimSpace(data); len(data) > 0 && string(data) != "[DONE]" {
			events = append(events, data)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read stream: %w", err)
	}
	switch api {
	case APIResponses:
		return foldResponses(events)
	case APIMessages:
		return foldMessages(events)
	case APIGemini:
		return foldGemini(events)
	}
	return foldChat(events)
}

func foldResponses(events [][]byte) ([]byte, error) {
	var final json.RawMessage
	for i, data := range events {
		var e struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("stream event %d: %w", i+1, err)
		}
		switch e.Type {
		case "response.completed", "response.incomplete", "response.failed":
			final = e.Response
		}
	}
	if final == nil {
		return nil, fmt.Errorf("%w (%d events, no response.completed)", ErrStreamCut, len(events))
	}
	return final, nil
}

func foldChat(events [][]byte) ([]byte, error) {
	var fold chatFold
	for _, data := range events {
		if err := fold.add(data); err != nil {
			return nil, err
		}
	}
	if fold.finish == "" {
		return nil, fmt.Errorf("%w (%d chunks, no finish_reason)", ErrStreamCut, len(events))
	}
	return fold.reply()
}

// APIOfPath is the API a model call's path (after /v1, or /v1beta) is
// for, or "" when the path is not a model call.
func APIOfPath(path string) string {
	path = strings.TrimPrefix(path, "/v1beta")
	path = strings.TrimPrefix(path, "/v1")
	switch path {
	case "/chat/completions":
		return APIChat
	case "/responses":
		return APIResponses
	case "/messages":
		return APIMessages
	}
	if _, method, ok := GeminiPath(path); ok && method != "countTokens" {
		return APIGemini
	}
	return ""
}

// GeminiPath reads a Gemini path, /models/{model}:{method}, into the
// model and the method, one of GeminiMethods.
func GeminiPath(path string) (model, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/models/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || !slices.Contains(GeminiMethods, rest[i+1:]) {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}
