package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Chat Completions on the wire, without an SDK: the request proctor's
// client sends, the server-sent events a stream is read from, and the
// chunks of a streamed reply folded into the one reply a call without
// streaming would have had.

// chatRequestBody is req as the JSON body of POST /chat/completions for
// model: an assistant message with tool calls and no text has a null
// content, as the API writes it.
func chatRequestBody(model string, req Request) ([]byte, error) {
	type message struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	body := struct {
		Model         string         `json:"model"`
		Messages      []message      `json:"messages"`
		Tools         []wireTool     `json:"tools,omitempty"`
		Stream        bool           `json:"stream,omitempty"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
	}{Model: model, Messages: []message{}, Stream: req.Stream}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleTool, RoleAssistant:
		default:
			return nil, fmt.Errorf("encode chat request: message role %q is not system, user, assistant or tool", m.Role)
		}
		content := m.Content
		w := message{Role: m.Role, Content: &content, ToolCallID: m.ToolCallID, ToolCalls: toWireCalls(m.ToolCalls)}
		if m.Role == RoleAssistant && m.Content == "" && len(m.ToolCalls) > 0 {
			w.Content = nil
		}
		body.Messages = append(body.Messages, w)
	}
	for _, t := range req.Tools {
		def := wireFunctionDef{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			if !jsonObject(t.Parameters) {
				return nil, fmt.Errorf("encode chat request: the parameters of tool %s are not a JSON object", t.Name)
			}
			def.Parameters = t.Parameters
		}
		body.Tools = append(body.Tools, wireTool{Type: "function", Function: def})
	}
	if req.Stream {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	return json.Marshal(body)
}

// jsonObject reports whether raw is one JSON object (checked without
// decoding it: every request of a run carries the same tool schemas).
func jsonObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// maxEventBytes bounds one server-sent event's data.
const maxEventBytes = 16 << 20

// readEvents reads server-sent events from r, calling each with the data
// of every event that has some (its data lines joined with "\n"); comments
// and the other fields are skipped. It stops at the first error each
// returns.
func readEvents(r io.Reader, each func(data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	has := false
	dispatch := func() error {
		if !has {
			return nil
		}
		d := data
		data, has = nil, false
		return each(d)
	}
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a long line: gather it whole
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(long) <= maxEventBytes {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > maxEventBytes {
			return fmt.Errorf("a server-sent event over %d bytes", maxEventBytes)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && err == nil:
			if derr := dispatch(); derr != nil {
				return derr
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if has {
				data = append(data, '\n')
			}
			data, has = append(data, v...), true
		}
		if err == io.EOF {
			return dispatch()
		}
		if err != nil {
			return err
		}
	}
}

// chatChunk is one chunk of a streamed chat completion.
type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatFold gathers a stream's chunks into one reply.
type chatFold struct {
	model, finish, content string
	calls                  []ToolCall
	usage                  Usage
	chunks                 int
}

// errInStream is an error a provider sent as a chunk, in the middle of its
// reply.
type errInStream struct{ raw json.RawMessage }

func (e errInStream) Error() string { return "an error in the stream: " + string(e.raw) }

// add folds one chunk's data in.
func (f *chatFold) add(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return nil
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("stream chunk %d: %w", f.chunks+1, err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return errInStream{c.Error}
	}
	f.chunks++
	if c.Model != "" {
		f.model = c.Model
	}
	if c.Usage != nil {
		f.usage = *c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		f.content += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index > 128 {
				return &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("streamed tool call index %d is out of range", tc.Index)}
			}
			for len(f.calls) <= tc.Index {
				f.calls = append(f.calls, ToolCall{})
			}
			if tc.ID != "" {
				f.calls[tc.Index].ID = tc.ID
			}
			f.calls[tc.Index].Name += tc.Function.Name
			f.calls[tc.Index].Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			f.finish = ch.FinishReason
		}
	}
	return nil
}

// reply is the folded reply as a chat completion object.
func (f *chatFold) reply() ([]byte, error) {
	usage := f.usage
	return json.Marshal(wireResponse{Model: f.model, Object: "chat.completion", Choices: []wireChoice{{
		FinishReason: f.finish,
		Message:      wireMessage{Role: RoleAssistant, Content: wireContent(f.content), ToolCalls: toWireCalls(f.calls)},
	}}, Usage: &usage})
}
