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
// agents speak: the request (model.DecodeResponsesRequest) is checked
// against the script's steps as a chat completion request is, and a step's
// reply is answered as a response object, or as the event stream the SDKs
// expect.

func (s *Server) respond(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
		return
	}
	asked, req, err := model.DecodeResponsesRequest(body)
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
