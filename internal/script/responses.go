package script

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
)

// The Responses API (POST /v1/responses), which Codex CLI and other newer
// agents speak: the request's input items become the same model.Request the
// chat completions endpoint checks against the script's steps, and a step's
// reply is answered as a response object, or as the event stream the SDKs
// expect.

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

// decodeResponses reads a Responses API request as a model.Request.
func decodeResponses(body []byte) (string, model.Request, error) {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return "", model.Request{}, fmt.Errorf("request body is not a Responses API request: %w", err)
	}
	req := model.Request{Stream: in.Stream, IncludeUsage: true, API: model.APIResponses}
	if in.Instructions != "" {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleSystem, Content: in.Instructions})
	}
	var text string
	var items []responsesItem
	if err := json.Unmarshal(in.Input, &text); err == nil {
		items = []responsesItem{{Type: "message", Role: model.RoleUser, Content: in.Input}}
	} else if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return "", model.Request{}, fmt.Errorf("input: want a text or a list of input items: %w", err)
		}
	}
	for i, it := range items {
		switch {
		case it.Type == "function_call":
			call := model.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleAssistant {
				req.Messages[n-1].ToolCalls = append(req.Messages[n-1].ToolCalls, call)
			} else {
				req.Messages = append(req.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}})
			}
		case it.Type == "function_call_output":
			out, err := model.ContentText(it.Output)
			if err != nil {
				return "", model.Request{}, fmt.Errorf("input[%d].output: %w", i, err)
			}
			req.Messages = append(req.Messages, model.Message{Role: model.RoleTool, ToolCallID: it.CallID, Content: out})
		case it.Type == "message" || (it.Type == "" && it.Role != ""):
			content, err := model.ContentText(it.Content)
			if err != nil {
				return "", model.Request{}, fmt.Errorf("input[%d].content: %w", i, err)
			}
			role := it.Role
			if role == "developer" {
				role = model.RoleSystem
			}
			req.Messages = append(req.Messages, model.Message{Role: role, Content: content})
		}
		// Other items (reasoning and the like) say nothing a step checks.
	}
	for _, t := range in.Tools {
		if t.Type == "function" {
			req.Tools = append(req.Tools, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	return in.Model, req, nil
}

func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
		return
	}
	asked, req, err := decodeResponses(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	id, reply, ok := s.answer(w, req)
	if !ok {
		return
	}
	name := s.script.Model
	if asked != "" {
		name = asked
	}
	resp := responseObject("resp_"+id, name, time.Now().Unix(), reply)
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		data, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	started := clone(resp)
	started["status"], started["output"] = "in_progress", []any{}
	delete(started, "usage")
	send("response.created", map[string]any{"response": started})
	send("response.in_progress", map[string]any{"response": started})
	for i, item := range resp["output"].([]map[string]any) {
		added := clone(item)
		added["status"] = "in_progress"
		switch item["type"] {
		case "message":
			text := item["content"].([]map[string]any)[0]["text"].(string)
			added["content"] = []any{}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			send("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "part": part})
			send("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "delta": text, "logprobs": []any{}})
			send("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
			send("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": i, "content_index": 0, "part": item["content"].([]map[string]any)[0]})
		case "function_call":
			added["arguments"] = ""
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			send("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": i, "delta": item["arguments"]})
			send("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": i, "name": item["name"], "arguments": item["arguments"]})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	send("response.completed", map[string]any{"response": resp})
}

// responseObject is a step's reply as a completed Responses API response:
// its text as a message item, then a function_call item per tool call.
func responseObject(id, name string, created int64, reply Reply) map[string]any {
	var output []map[string]any
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		output = append(output, map[string]any{"type": "message", "id": "msg_" + id, "status": "completed", "role": "assistant",
			"content": []map[string]any{{"type": "output_text", "text": reply.Content, "annotations": []any{}}}})
	}
	for _, c := range reply.ToolCalls {
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name,
			"arguments": c.Arguments, "status": "completed"})
	}
	u := reply.Usage
	return map[string]any{"id": id, "object": "response", "created_at": created, "status": "completed", "model": name,
		"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"usage": map[string]any{"input_tokens": u.PromptTokens, "output_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
