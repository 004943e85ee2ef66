package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
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
	var r responses.Response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("the reply is not a Responses API response: %v", err)}
	}
	resp := &Response{Message: Message{Role: RoleAssistant, Content: r.OutputText()}, FinishReason: "stop", Model: string(r.Model),
		Usage: Usage{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens, TotalTokens: r.Usage.TotalTokens}}
	for _, item := range r.Output {
		if item.Type == "function_call" {
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: item.CallID, Name: item.Name, Arguments: item.Arguments.OfString})
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

// DecodeReply reads a recorded reply of either API.
func DecodeReply(api string, raw []byte) (*Response, error) {
	if api == APIResponses {
		return DecodeResponsesReply(raw)
	}
	return DecodeResponse(raw)
}

// DecodeAnyRequest reads a recorded request of either API.
func DecodeAnyRequest(api string, body []byte) (string, Request, error) {
	if api == APIResponses {
		return DecodeResponsesRequest(body)
	}
	return DecodeRequest(body)
}

// ErrStreamCut is returned by FoldStream for a stream that ended before
// its reply did.
var ErrStreamCut = errors.New("the stream ended before the reply did")

// FoldStream folds a server-sent event stream of either API into the one
// object a non-streamed call would have answered: chat completion chunks
// through the SDK's accumulator, Responses API events by the response of
// their last response.completed, response.incomplete or response.failed
// event.
func FoldStream(api string, body []byte) ([]byte, error) {
	dec := ssestream.NewDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))})
	defer dec.Close()
	var acc openai.ChatCompletionAccumulator
	var final json.RawMessage
	chunks, finished := 0, false
	for dec.Next() {
		ev := dec.Event()
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 || string(data) == "[DONE]" {
			continue
		}
		if api == APIResponses {
			var e struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal(data, &e); err != nil {
				return nil, fmt.Errorf("stream event %d: %w", chunks+1, err)
			}
			chunks++
			switch e.Type {
			case "response.completed", "response.incomplete", "response.failed":
				final = e.Response
			}
			continue
		}
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return nil, fmt.Errorf("stream chunk %d: %w", chunks+1, err)
		}
		chunks++
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			finished = finished || ch.FinishReason != ""
		}
	}
	if err := dec.Err(); err != nil {
		return nil, fmt.Errorf("read stream: %w", err)
	}
	if api == APIResponses {
		if final == nil {
			return nil, fmt.Errorf("%w (%d events, no response.completed)", ErrStreamCut, chunks)
		}
		return final, nil
	}
	if !finished {
		return nil, fmt.Errorf("%w (%d chunks, no finish_reason)", ErrStreamCut, chunks)
	}
	return json.Marshal(acc.ChatCompletion)
}

// APIOfPath is the API a request path (after /v1) is for, or "".
func APIOfPath(path string) string {
	switch strings.TrimPrefix(path, "/v1") {
	case "/chat/completions":
		return APIChat
	case "/responses":
		return APIResponses
	}
	return ""
}
