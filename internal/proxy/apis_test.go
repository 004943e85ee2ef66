package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"google.golang.org/genai"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/proxy"
)

const toolScript = `steps:
  - expect: {last_role: user, tools_offered: [write_file]}
    reply:
      content: writing
      tool_calls: [{id: call_1, name: write_file, arguments: {path: a.txt, content: hi}}]
      usage: {prompt_tokens: 50, completion_tokens: 7, cache_read_tokens: 40}
  - expect: {last_role: tool, last_contains: ok}
    reply: {content: done, usage: {prompt_tokens: 60, completion_tokens: 2}}
`

func root(p *proxy.Proxy) string { return strings.TrimSuffix(p.URL, "/v1") }

// The Anthropic SDK through the proxy, with the proxy's key as its
// x-api-key, as Claude Code holds it: each call recorded as a Messages
// call with its reply read back (the stream folded), count_tokens passed
// on and not recorded.
func TestTheAnthropicSDKThroughTheProxy(t *testing.T) {
	ctx := context.Background()
	p, rec := scripted(t, toolScript, proxy.Limits{MaxTotalCalls: 2})
	c := anthropic.NewClient(aoption.WithBaseURL(root(p)+"/"), aoption.WithAPIKey(p.Key), aoption.WithMaxRetries(0))
	tool := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}}, "write_file")
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100, Tools: []anthropic.ToolUnionParam{tool},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("write a.txt"))}}
	stream := c.Messages.NewStreaming(ctx, params, aoption.WithQuery("beta", "true"))
	var m anthropic.Message
	for stream.Next() {
		if err := m.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil || len(m.Content) != 2 || m.Content[1].Name != "write_file" {
		t.Fatalf("streamed reply %+v: %v", m.Content, err)
	}
	if n, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "claude-test", Messages: params.Messages}); err != nil || n.InputTokens <= 0 {
		t.Fatalf("count_tokens through the proxy: %v", err)
	}
	params.Messages = append(params.Messages, m.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_1", "ok", false)))
	done, err := c.Messages.New(ctx, params)
	if err != nil || done.Content[0].Text != "done" {
		t.Fatalf("second call: %v", err)
	}
	xs, replies := modelCalls(rec.all())
	if len(xs) != 2 {
		t.Fatalf("recorded %d model calls, want 2 (count_tokens is recorded beside them)", len(xs))
	}
	for i, x := range xs {
		if x.API != model.APIMessages || x.Error != "" || replies[i] == nil {
			t.Fatalf("call %d: api %q error %q", i+1, x.API, x.Error)
		}
	}
	if r := replies[0]; len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Arguments != `{"content":"hi","path":"a.txt"}` ||
		r.Usage.PromptTokens != 50 || r.Usage.CacheReadTokens != 40 || r.Usage.CompletionTokens != 7 {
		t.Fatalf("first reply read back as %+v", r)
	}
	if _, req, err := model.DecodeAnyRequest(xs[1].API, xs[1].Request); err != nil || req.Messages[len(req.Messages)-1].Role != model.RoleTool {
		t.Fatalf("second request read back: %+v, %v", req, err)
	}
}

// Gemini's SDK through the proxy: the key as x-goog-api-key, the stream
// as alt=sse; each call recorded as a Gemini call.
func TestTheGeminiSDKThroughTheProxy(t *testing.T) {
	ctx := context.Background()
	p, rec := scripted(t, toolScript, proxy.Limits{})
	c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: p.Key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: root(p) + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "write_file"}}}}}
	history := []*genai.Content{genai.NewContentFromText("write a.txt", genai.RoleUser)}
	var parts []*genai.Part
	for r, err := range c.Models.GenerateContentStream(ctx, "gemini-test", history, cfg) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r.Candidates[0].Content.Parts...)
	}
	history = append(history, genai.NewContentFromParts(parts, genai.RoleModel),
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionResponse("write_file", map[string]any{"output": "ok"})}, genai.RoleUser))
	done, err := c.Models.GenerateContent(ctx, "gemini-test", history, cfg)
	if err != nil || done.Text() != "done" {
		t.Fatalf("second call: %v", err)
	}
	xs, replies := rec.all()
	if len(xs) != 2 || xs[0].API != model.APIGemini || xs[0].Error != "" || replies[0] == nil || len(replies[0].Message.ToolCalls) != 1 || replies[0].Usage.CacheReadTokens != 40 {
		t.Fatalf("recorded %+v", xs)
	}
	if xs[1].Error != "" || replies[1].Message.Content != "done" {
		t.Fatalf("second call recorded as %+v", xs[1])
	}
}

// A live provider gets the real key the way its API takes it, and never
// the agent's: x-api-key and an anthropic-version for Anthropic,
// x-goog-api-key for Gemini; the query is the proxy's own.
func TestEachProviderGetsTheRealKeyItsWay(t *testing.T) {
	for _, tc := range []struct {
		kind, path, query, header, wantPath, wantQuery string
	}{
		{model.KindAnthropic, "/v1/messages", "?beta=true&foo=bar", "X-Api-Key", "/v1/messages", "beta=true"},
		{model.KindGemini, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "?alt=sse&key=KEY&x=1", "X-Goog-Api-Key", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var mu sync.Mutex
			var seen *http.Request
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = r.Clone(context.Background())
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"error":{"message":"nope"}}`)
			}))
			defer up.Close()
			base := up.URL + "/v1"
			if tc.kind == model.KindGemini {
				base = up.URL + "/v1beta"
			}
			p, _ := start(t, model.Endpoint{BaseURL: base, Kind: tc.kind, APIKey: "real-key"}, proxy.Limits{})
			req, _ := http.NewRequest(http.MethodPost, root(p)+tc.path+strings.ReplaceAll(tc.query, "KEY", p.Key), strings.NewReader(`{"contents":[],"messages":[]}`))
			if tc.kind == model.KindAnthropic {
				req.Header.Set("X-Api-Key", p.Key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if seen == nil || seen.URL.Path != tc.wantPath || seen.URL.RawQuery != tc.wantQuery {
				t.Fatalf("the provider saw %v", seen.URL)
			}
			if got := seen.Header.Get(tc.header); got != "real-key" {
				t.Fatalf("%s = %q, want the real key", tc.header, got)
			}
			for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
				if h != tc.header && seen.Header.Get(h) != "" {
					t.Fatalf("%s was passed on: %q", h, seen.Header.Get(h))
				}
			}
			if tc.kind == model.KindAnthropic && seen.Header.Get("Anthropic-Version") == "" {
				t.Fatal("no anthropic-version was sent")
			}
		})
	}
}

// An agent that speaks another API than the run's live model is refused,
// and the refusal says which and what to do; it is recorded.
func TestACallInAnAPITheModelDoesNotSpeakIsRefused(t *testing.T) {
	p, rec := start(t, model.Endpoint{BaseURL: "http://127.0.0.1:1/v1", Kind: model.KindOpenAI, APIKey: "k"}, proxy.Limits{})
	req, _ := http.NewRequest(http.MethodPost, root(p)+"/v1/messages", strings.NewReader(`{"messages":[]}`))
	req.Header.Set("X-Api-Key", p.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Type  string                   `json:"type"`
		Error struct{ Message string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || body.Type != "error" || !strings.Contains(body.Error.Message, "the agent called the messages API, but the run's model (a profile of kind openai)") {
		t.Fatalf("%d %+v", resp.StatusCode, body)
	}
	xs, _ := rec.all()
	if len(xs) != 1 || xs[0].API != model.APIMessages || !strings.Contains(xs[0].Error, "HTTP 400") {
		t.Fatalf("recorded %+v", xs)
	}
	// Claude Code's reachability check is answered by the proxy itself.
	head, _ := http.NewRequest(http.MethodHead, root(p)+"/api/hello", nil)
	head.Header.Set("Authorization", "Bearer "+p.Key)
	if resp, err := http.DefaultClient.Do(head); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /api/hello: %v %v", resp, err)
	}
}

// The routes of the Messages and Gemini APIs are as exact as the others:
// a dot segment, an escape, a method that is not a model's or a path past
// one reaches no provider, and of the query only alt=sse and beta=true
// are passed on, as the proxy writes them.
func TestHostileRoutesOfTheOtherAPIsReachNoProvider(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"error":{"message":"nope"}}`)
	}))
	defer live.Close()
	for _, kind := range []string{model.KindAnthropic, model.KindGemini} {
		seen = nil
		base := live.URL + "/v1"
		if kind == model.KindGemini {
			base = live.URL + "/v1beta"
		}
		p, _ := start(t, model.Endpoint{BaseURL: base, Kind: kind, APIKey: "real"}, proxy.Limits{})
		post := func(rawPath string) int {
			req, err := http.NewRequest(http.MethodPost, root(p)+rawPath, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Api-Key", p.Key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, path := range []string{
			"/v1beta/models/../files:generateContent",
			"/v1beta/models/%2e%2e:generateContent",
			"/v1beta/models/gemini:generateContent/../../files",
			"/v1beta/models/gemini:deleteEverything",
			"/v1beta/files",
			"/v1beta/models/gemini%3AgenerateContent",
			"/v1/messages/batches",
			"/v1/messages/../organizations/api_keys",
			"/v1/messages%2Fbatches",
		} {
			if code := post(path); code != http.StatusNotFound {
				t.Errorf("%s: POST %s: %d, want 404", kind, path, code)
			}
		}
		ok := "/v1/messages?beta=true&x=../../organizations"
		want := "/v1/messages?beta=true"
		if kind == model.KindGemini {
			ok = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=x&$.xgafv=../../files"
			want = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
		}
		post(ok)
		mu.Lock()
		if len(seen) != 1 || seen[0] != want {
			t.Errorf("%s: the provider saw %q, want only %s", kind, seen, want)
		}
		mu.Unlock()
	}
}
