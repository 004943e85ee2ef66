package script

import (
	"net/http"

	"github.com/proctor-dev/proctor/internal/model"
)

// The Gemini API (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse), which Gemini CLI speaks: the request
// (model.DecodeGeminiRequest) is checked against the script's steps as any
// other, and a step's reply is answered as a GenerateContentResponse, or
// as a stream of them.

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, asked string, stream bool) {
	body, ok := readBody(w, r, model.APIGemini)
	if !ok {
		return
	}
	req, err := model.DecodeGeminiRequest(body, stream)
	if err != nil {
		writeAPIError(w, model.APIGemini, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	id, reply, ok := s.answer(w, req)
	if !ok {
		return
	}
	resp := geminiObject(id, s.named(asked), reply)
	if !stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	// The text first, then the calls with the finish reason and usage, as
	// Gemini streams them. Without alt=sse Gemini answers a JSON array of
	// the chunks.
	parts := resp["candidates"].([]map[string]any)[0]["content"].(map[string]any)["parts"].([]map[string]any)
	var chunks []map[string]any
	if len(parts) > 0 && parts[0]["text"] != nil && len(parts) > 1 {
		chunks = append(chunks, map[string]any{"candidates": []map[string]any{{"content": map[string]any{"role": "model", "parts": parts[:1]}, "index": 0}},
			"modelVersion": resp["modelVersion"], "responseId": resp["responseId"]})
		last := clone(resp)
		cand := clone(resp["candidates"].([]map[string]any)[0])
		cand["content"] = map[string]any{"role": "model", "parts": parts[1:]}
		last["candidates"] = []map[string]any{cand}
		chunks = append(chunks, last)
	} else {
		chunks = append(chunks, resp)
	}
	if r.URL.Query().Get("alt") != "sse" {
		writeJSON(w, http.StatusOK, chunks)
		return
	}
	send := sse(w)
	for _, c := range chunks {
		send("", c)
	}
}

// geminiObject is a step's reply as a GenerateContentResponse: its text as
// a text part, then a functionCall part per tool call.
func geminiObject(id, name string, reply Reply) map[string]any {
	var parts []map[string]any
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		parts = append(parts, map[string]any{"text": reply.Content})
	}
	for _, c := range reply.ToolCalls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": arguments(c.Arguments)}})
	}
	u := reply.Usage
	return map[string]any{
		"candidates": []map[string]any{{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": u.PromptTokens, "candidatesTokenCount": u.CompletionTokens, "totalTokenCount": u.TotalTokens,
			"cachedContentTokenCount": u.CacheReadTokens},
		"modelVersion": name, "responseId": id,
	}
}
