package script

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/proctor-dev/proctor/internal/model"
)

// The Anthropic Messages API (POST /v1/messages), which Claude Code
// speaks: the request (model.DecodeMessagesRequest) is checked against the
// script's steps as any other, and a step's reply is answered as a message,
// or as the event stream the SDKs accumulate.

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, model.APIMessages)
	if !ok {
		return
	}
	asked, req, err := model.DecodeMessagesRequest(body)
	if err != nil {
		writeAPIError(w, model.APIMessages, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	id, reply, ok := s.answer(w, req)
	if !ok {
		return
	}
	msg := messageObject("msg_"+id, s.named(asked), reply)
	if !req.Stream {
		writeJSON(w, http.StatusOK, msg)
		return
	}
	send := sse(w)
	started := clone(msg)
	started["content"], started["stop_reason"] = []any{}, nil
	started["usage"] = map[string]any{"input_tokens": reply.Usage.PromptTokens - reply.Usage.CacheReadTokens - reply.Usage.CacheWriteTokens,
		"cache_read_input_tokens": reply.Usage.CacheReadTokens, "cache_creation_input_tokens": reply.Usage.CacheWriteTokens, "output_tokens": 1}
	send("message_start", map[string]any{"type": "message_start", "message": started})
	send("ping", map[string]any{"type": "ping"})
	for i, block := range msg["content"].([]map[string]any) {
		start := clone(block)
		var delta map[string]any
		switch block["type"] {
		case "text":
			start["text"] = ""
			delta = map[string]any{"type": "text_delta", "text": block["text"]}
		case "tool_use":
			start["input"] = map[string]any{}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(block["input"].(json.RawMessage))}
		}
		send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": reply.Usage.CompletionTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// messageObject is a step's reply as a Messages API message: its text as a
// text block, then a tool_use block per tool call.
func messageObject(id, name string, reply Reply) map[string]any {
	var content []map[string]any
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": reply.Content})
	}
	for _, c := range reply.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": arguments(c.Arguments)})
	}
	stop := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stop = "tool_use"
	}
	u := reply.Usage
	return map[string]any{"id": id, "type": "message", "role": "assistant", "model": name, "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.PromptTokens - u.CacheReadTokens - u.CacheWriteTokens, "output_tokens": u.CompletionTokens,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}}
}

// arguments is a tool call's arguments as the JSON object the Messages
// and Gemini APIs carry: a script's arguments that are not a JSON object
// are sent as {"input": "…"}, the text as it was written.
func arguments(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	data, _ := json.Marshal(map[string]string{"input": args})
	return data
}

// countTokens answers POST /v1/messages/count_tokens (and Gemini's
// :countTokens) with an estimate (a
// token per four bytes of the request), as a scripted model has no
// tokenizer; an agent asks it only to size its context.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request, api string) {
	body, ok := readBody(w, r, api)
	if !ok {
		return
	}
	if !json.Valid(body) {
		writeAPIError(w, api, http.StatusBadRequest, "bad_request", "the request body is not JSON")
		return
	}
	n := max(1, len(body)/4)
	if api == model.APIGemini {
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": n})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": n})
}

// readBody reads a request's body, up to 64 MiB (a larger body is an
// error, not cut).
func readBody(w http.ResponseWriter, r *http.Request, api string) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	if err != nil {
		writeAPIError(w, api, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
		return nil, false
	}
	return body, true
}

// sse starts an event stream; each call sends one event, named when typ
// is not "".
func sse(w http.ResponseWriter) func(typ string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	return func(typ string, v any) {
		data, _ := json.Marshal(v)
		if typ != "" {
			fmt.Fprintf(w, "event: %s\n", typ)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// named is the model a reply names: the one asked for, as providers do.
func (s *Server) named(asked string) string {
	if asked != "" {
		return asked
	}
	return s.script.Model
}
