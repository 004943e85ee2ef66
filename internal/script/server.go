package script

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
)

// Server serves one script as a model endpoint of every API it knows (chat
// completions, the Responses API, Anthropic Messages, Gemini): each request
// is checked against the next step and answered with its reply in the API
// it came through. A request that does not match, or one past the last step, gets an
// error the client files under the scenario domain.
type Server struct {
	script *Script
	mu     sync.Mutex
	next   int
	failed string // the first mismatch; later requests repeat it
}

// NewServer returns a server at the script's first step.
func NewServer(s *Script) *Server { return &Server{script: s} }

// Served reports how many steps have been answered.
func (s *Server) Served() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Remaining reports how many steps have not been answered.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Steps) - s.next
}

// fingerprint is the system_fingerprint of every reply.
const fingerprint = "proctor-script"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/v1beta")
	if !ok {
		path = strings.TrimPrefix(path, "/v1")
	}
	path = "/" + strings.TrimPrefix(path, "/")
	gemini, method, isGemini := model.GeminiPath(path)
	switch {
	case r.Method == http.MethodPost && isGemini && method == "countTokens":
		s.countTokens(w, r, model.APIGemini)
	case r.Method == http.MethodPost && isGemini:
		s.gemini(w, r, gemini, method == "streamGenerateContent")
	case r.Method == http.MethodGet && path == "/models":
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/models/"):
		if id := strings.TrimPrefix(path, "/models/"); id != s.script.Model {
			writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("the model %q does not exist here; this scripted endpoint serves %q", id, s.script.Model))
			return
		}
		writeJSON(w, http.StatusOK, s.modelObject())
	case r.Method == http.MethodPost && path == "/chat/completions":
		s.complete(w, r)
	case r.Method == http.MethodPost && path == "/responses":
		s.respond(w, r)
	case r.Method == http.MethodPost && path == "/messages":
		s.messages(w, r)
	case r.Method == http.MethodPost && path == "/messages/count_tokens":
		s.countTokens(w, r, model.APIMessages)
	default:
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s %s is not served; this is a scripted model: POST /v1/chat/completions, POST /v1/responses, POST /v1/messages (and /count_tokens), POST /v1beta/models/{model}:generateContent (and :streamGenerateContent, :countTokens), GET /v1/models, GET /v1/models/{id}", r.Method, r.URL.Path))
	}
}

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.script.Model, "object": "model", "created": 0, "owned_by": "proctor-script"}
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20)) // a larger body is an error, not cut
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
		return
	}
	asked, req, err := model.DecodeRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	id, reply, ok := s.answer(w, req)
	if ok {
		s.reply(w, "chatcmpl-"+id, asked, req, reply)
	}
}

// answer picks the reply to req: an any-time step that matches it (the
// script does not move on), else the next step when it matches. When none
// does, it writes the 409 and ok is false. id names the step.
func (s *Server) answer(w http.ResponseWriter, req model.Request) (id string, reply Reply, ok bool) {
	if poll, waits := waitFor(req); waits {
		return "script-wait", Reply{ToolCalls: []model.ToolCall{poll}}, true
	}
	if st, found := s.script.AnytimeFor(req); found {
		reply, err := st.Reply.forRequest(req, s.script.Workspace, s.script.Tools)
		if err != nil {
			writeAPIError(w, req.API, http.StatusConflict, model.CodeScriptMismatch, fmt.Sprintf("%s:%d: any-time step: %v", s.script.Path, st.Line, err))
			return "", Reply{}, false
		}
		return "script-anytime", reply, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.next
	switch {
	case s.failed != "":
		writeAPIError(w, req.API, http.StatusConflict, model.CodeScriptMismatch, s.failed)
	case i >= len(s.script.Steps):
		writeAPIError(w, req.API, http.StatusConflict, model.CodeScriptEnded, fmt.Sprintf("%s: request %d came after the last step (%d); the script has no reply for it", s.script.Path, i+1, len(s.script.Steps)))
	default:
		if diff := s.script.Check(i, req); diff != "" {
			s.failed = diff
			writeAPIError(w, req.API, http.StatusConflict, model.CodeScriptMismatch, diff)
			return "", Reply{}, false
		}
		reply, err := s.script.Steps[i].Reply.forRequest(req, s.script.Workspace, s.script.Tools)
		if err != nil {
			s.failed = fmt.Sprintf("%s:%d: step %d: %v", s.script.Path, s.script.Steps[i].Line, i+1, err)
			writeAPIError(w, req.API, http.StatusConflict, model.CodeScriptMismatch, s.failed)
			return "", Reply{}, false
		}
		s.next++
		return fmt.Sprintf("script-%d", i+1), reply, true
	}
	return "", Reply{}, false
}

// reply answers req with a step's reply.
func (s *Server) reply(w http.ResponseWriter, id, asked string, req model.Request, reply Reply) {
	resp := model.Response{Message: model.Message{Role: model.RoleAssistant, Content: reply.Content, ToolCalls: reply.ToolCalls}, Usage: reply.Usage, FinishReason: "stop"}
	if len(reply.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	name := s.script.Model // the reply names the model asked for, as providers do
	if asked != "" {
		name = asked
	}
	created := time.Now().Unix()
	if req.Stream {
		s.stream(w, id, name, created, req.IncludeUsage, resp)
		return
	}
	data, err := model.EncodeResponse(id, name, created, fingerprint, resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// stream sends the reply as server-sent chunks, the way OpenAI does: the
// role and text, then each tool call, then the finish reason and — when the
// request asked for it (stream_options.include_usage) — the usage.
func (s *Server) stream(w http.ResponseWriter, id, name string, created int64, usage bool, resp model.Response) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", data)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": name, "system_fingerprint": fingerprint,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": resp.Message.Content}, nil))
	for i, c := range resp.Message.ToolCalls {
		send(chunk(map[string]any{"tool_calls": []map[string]any{{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}}}, nil))
	}
	send(chunk(map[string]any{}, resp.FinishReason))
	if usage {
		send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": name, "system_fingerprint": fingerprint, "choices": []any{}, "usage": resp.Usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeAPIError(w, model.APIChat, status, code, msg)
}

// writeAPIError answers an error in the shape the API's clients read: the
// code (script_mismatch…) is in it for each.
func writeAPIError(w http.ResponseWriter, api string, status int, code, msg string) {
	if status == http.StatusConflict {
		// Asking again cannot make a request match its step: no SDK
		// should retry it (openai-node, openai-go and the Anthropic SDKs
		// honour this header).
		w.Header().Set("x-should-retry", "false")
	}
	writeJSON(w, status, model.ErrorBody(api, status, code, msg))
}

// Endpoint is one scripted model served on its own at a fixed base URL
// (http://ADDR/v1), as proctor script serve gives it: a Host whose root is
// the script.
type Endpoint struct {
	URL    string // base URL, ending in /v1
	Server *Server
	*Host
}

// Start serves the script on addr (e.g. "127.0.0.1:0") until Close.
func Start(s *Script, addr string) (*Endpoint, error) {
	ss := NewServer(s)
	h, err := newHost(addr, ss)
	if err != nil {
		return nil, fmt.Errorf("serve model script %s: %w", s.Path, err)
	}
	return &Endpoint{URL: strings.TrimSuffix(h.base, "s/") + "v1", Server: ss, Host: h}, nil
}
