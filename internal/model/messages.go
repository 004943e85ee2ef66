package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The Anthropic Messages API (POST /v1/messages), which Claude Code and the
// Anthropic SDKs speak: its requests and replies read as the same Request
// and Response as the OpenAI APIs, for the scripted endpoint, the recording
// proxy and readers of recorded exchanges.

type messagesRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"` // a text, or a list of text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a text, or a list of blocks
	} `json:"messages"`
	Tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// messagesBlock is one content block of a message.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// messagesBlocks reads a content that is a text or a list of blocks.
func messagesBlocks(raw json.RawMessage) ([]messagesBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return []messagesBlock{{Type: "text", Text: text}}, nil
	}
	var blocks []messagesBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("want a text or a list of content blocks: %w", err)
	}
	return blocks, nil
}

// DecodeMessagesRequest reads a Messages API request as a Request: the
// system prompt, with any system-role message among the messages, as the
// first message; an assistant message's tool_use
// blocks as its tool calls; a user message's tool_result blocks as tool
// messages, which come after the text the same message carries (an agent
// such as Claude Code adds reminders beside its tool results), so a tool
// result is the last message whenever one was sent. Thinking, images and
// other blocks say nothing a step checks and are left out.
func DecodeMessagesRequest(body []byte) (string, Request, error) {
	var in messagesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return "", Request{}, fmt.Errorf("request body is not a Messages API request: %w", err)
	}
	req := Request{Stream: in.Stream, IncludeUsage: true, API: APIMessages}
	system, err := messagesBlocks(in.System)
	if err != nil {
		return "", Request{}, fmt.Errorf("system: %w", err)
	}
	prompt := []string{blocksText(system)}
	for i, m := range in.Messages {
		blocks, err := messagesBlocks(m.Content)
		if err != nil {
			return "", Request{}, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		if m.Role == RoleSystem {
			// Claude Code sends its environment as a system message after
			// the user's: it is part of the system prompt, not the last
			// message.
			prompt = append(prompt, blocksText(blocks))
			continue
		}
		msg := Message{Role: m.Role, Content: blocksText(blocks)}
		var results []Message
		for j, b := range blocks {
			switch b.Type {
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: jsonText(b.Input)})
			case "tool_result":
				out, err := toolResultText(b.Content)
				if err != nil {
					return "", Request{}, fmt.Errorf("messages[%d].content[%d].content: %w", i, j, err)
				}
				results = append(results, Message{Role: RoleTool, ToolCallID: b.ToolUseID, Content: out, IsError: b.IsError})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 || len(results) == 0 {
			req.Messages = append(req.Messages, msg)
		}
		req.Messages = append(req.Messages, results...)
	}
	if text := strings.TrimSpace(strings.Join(prompt, "\n")); text != "" {
		req.Messages = append([]Message{{Role: RoleSystem, Content: text}}, req.Messages...)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return in.Model, req, nil
}

// blocksText joins the text blocks with newlines.
func blocksText(blocks []messagesBlock) string {
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// toolResultText is a tool_result's content: a text, or blocks whose text
// is joined.
func toolResultText(raw json.RawMessage) (string, error) {
	blocks, err := messagesBlocks(raw)
	return blocksText(blocks), err
}

// jsonText is raw as compact JSON text, "{}" when empty.
func jsonText(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// messagesReply is a Messages API message, the reply.
type messagesReply struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    []messagesBlock `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      messagesUsage   `json:"usage"`
}

type messagesUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// DecodeMessagesReply reads a Messages API message (a recorded one, or a
// stream folded into one) as a Response. Its prompt tokens count the
// cached ones too, as OpenAI's do.
func DecodeMessagesReply(raw []byte) (*Response, error) {
	var m messagesReply
	if err := json.Unmarshal(raw, &m); err != nil || m.Type != "message" {
		return nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("the reply is not a Messages API message: %s", orType(err, m.Type))}
	}
	u := m.Usage
	resp := &Response{Message: Message{Role: RoleAssistant, Content: blocksText(m.Content)}, Model: m.Model,
		Usage: Usage{PromptTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, CompletionTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: jsonText(b.Input)})
		}
	}
	switch m.StopReason {
	case "tool_use":
		resp.FinishReason = "tool_calls"
	case "max_tokens":
		resp.FinishReason = "length"
	default:
		resp.FinishReason = "stop"
	}
	return resp, nil
}

func orType(err error, typ string) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("its type is %q", typ)
}

// foldMessages folds a Messages API event stream (message_start, content
// blocks started, grown by deltas and stopped, message_delta, message_stop)
// into the message a non-streamed call would have answered.
func foldMessages(events [][]byte) ([]byte, error) {
	var msg map[string]any
	var blocks []map[string]any
	partial := map[int]*strings.Builder{} // tool_use input JSON, as it grows
	stopped := false
	for i, data := range events {
		var e struct {
			Type         string          `json:"type"`
			Message      json.RawMessage `json:"message"`
			Index        int             `json:"index"`
			ContentBlock map[string]any  `json:"content_block"`
			Delta        map[string]any  `json:"delta"`
			Usage        map[string]any  `json:"usage"`
			Error        struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("stream event %d: %w", i+1, err)
		}
		switch e.Type {
		case "message_start":
			if err := json.Unmarshal(e.Message, &msg); err != nil || msg == nil {
				return nil, fmt.Errorf("stream event %d: message_start without a message", i+1)
			}
		case "content_block_start":
			if e.Index != len(blocks) || e.ContentBlock == nil {
				return nil, fmt.Errorf("stream event %d: content block %d started out of order", i+1, e.Index)
			}
			blocks = append(blocks, e.ContentBlock)
			if e.ContentBlock["type"] == "tool_use" {
				partial[e.Index] = &strings.Builder{}
			}
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(blocks) {
				return nil, fmt.Errorf("stream event %d: delta for content block %d, which has not started", i+1, e.Index)
			}
			b := blocks[e.Index]
			switch e.Delta["type"] {
			case "text_delta":
				b["text"] = str(b["text"]) + str(e.Delta["text"])
			case "input_json_delta":
				if p := partial[e.Index]; p != nil {
					p.WriteString(str(e.Delta["partial_json"]))
				}
			case "thinking_delta":
				b["thinking"] = str(b["thinking"]) + str(e.Delta["thinking"])
			case "signature_delta":
				b["signature"] = str(e.Delta["signature"])
			}
		case "message_delta":
			if msg == nil {
				return nil, fmt.Errorf("stream event %d: message_delta before message_start", i+1)
			}
			for k, v := range e.Delta {
				msg[k] = v
			}
			usage, _ := msg["usage"].(map[string]any)
			if usage == nil {
				usage = map[string]any{}
			}
			for k, v := range e.Usage {
				if v != nil {
					usage[k] = v
				}
			}
			msg["usage"] = usage
		case "message_stop":
			stopped = true
		case "error":
			return nil, fmt.Errorf("the stream ended with an error: %s: %s", e.Error.Type, e.Error.Message)
		}
	}
	if msg == nil || !stopped {
		return nil, fmt.Errorf("%w (%d events, no message_stop)", ErrStreamCut, len(events))
	}
	for i, p := range partial {
		input := json.RawMessage("{}")
		if s := strings.TrimSpace(p.String()); s != "" {
			input = json.RawMessage(s)
		}
		if !json.Valid(input) {
			return nil, fmt.Errorf("content block %d: its tool input is not JSON: %q", i, p.String())
		}
		blocks[i]["input"] = input
	}
	if blocks == nil {
		blocks = []map[string]any{}
	}
	msg["content"] = blocks
	return json.Marshal(msg)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
