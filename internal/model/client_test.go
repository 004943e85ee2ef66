package model_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
)

const okReply = `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`

func fastRetry() model.RetryPolicy {
	return model.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, AttemptTimeout: 300 * time.Millisecond}
}

// server answers with the given (status, body) pairs in turn, then with the
// last one; a status of 0 hangs until the client gives up.
func server(t *testing.T, answers ...[2]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(answers) {
			i = len(answers) - 1
		}
		a := answers[i]
		if a[0] == "0" {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		var status int
		fmt.Sscan(a[0], &status)
		w.Header().Set("Content-Type", "application/json")
		if status == 429 {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
		w.Write([]byte(a[1]))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first: frees hanging handlers
	return srv, &n
}

func complete(t *testing.T, url string, rec *[]model.Exchange) (*model.Response, error) {
	c := model.NewClient(model.Endpoint{BaseURL: url + "/v1", Model: "m", APIKey: "sk-test-key-123456"}, fastRetry(), func(x model.Exchange) {
		if rec != nil {
			*rec = append(*rec, x)
		}
	})
	return c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
}

func TestRetries(t *testing.T) {
	apiErr := `{"error":{"message":"slow down","type":"rate_limit","code":"rate_limit_exceeded"}}`
	tests := []struct {
		name     string
		answers  [][2]string
		calls    int32
		wantCode string // "" for success
		domain   model.Domain
	}{
		{"ok", [][2]string{{"200", okReply}}, 1, "", ""},
		{"429 then ok", [][2]string{{"429", apiErr}, {"200", okReply}}, 2, "", ""},
		{"500 then ok", [][2]string{{"500", `{"error":{"message":"boom"}}`}, {"200", okReply}}, 2, "", ""},
		{"hang then ok", [][2]string{{"0", ""}, {"200", okReply}}, 2, "", ""},
		{"429 always", [][2]string{{"429", apiErr}}, 3, model.CodeRateLimited, model.DomainModel},
		{"503 always", [][2]string{{"503", `{"error":{"message":"down"}}`}}, 3, model.CodeProviderError, model.DomainModel},
		{"hangs always", [][2]string{{"0", ""}}, 3, model.CodeTimeout, model.DomainModel},
		{"400 not retried", [][2]string{{"400", `{"error":{"message":"bad tools"}}`}}, 1, model.CodeBadRequest, model.DomainModel},
		{"401 not retried", [][2]string{{"401", `{"error":{"message":"bad key"}}`}}, 1, model.CodeAuth, model.DomainModel},
		{"404 not retried", [][2]string{{"404", `{"error":{"message":"no such model"}}`}}, 1, model.CodeNotFound, model.DomainModel},
		{"script mismatch", [][2]string{{"409", `{"error":{"message":"s.yaml:3: step 1: differs","code":"script_mismatch"}}`}}, 1, model.CodeScriptMismatch, model.DomainScenario},
		{"empty choices", [][2]string{{"200", `{"choices":[]}`}}, 1, model.CodeBadResponse, model.DomainModel},
		{"tool call without id", [][2]string{{"200", `{"choices":[{"message":{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"read_file","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`}}, 1, model.CodeBadResponse, model.DomainModel},
		{"not JSON", [][2]string{{"200", `<html>gateway</html>`}}, 1, model.CodeBadResponse, model.DomainModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := server(t, tc.answers...)
			var xs []model.Exchange
			resp, err := complete(t, srv.URL, &xs)
			if got := n.Load(); got != tc.calls {
				t.Errorf("server saw %d calls, want %d", got, tc.calls)
			}
			if len(xs) != int(tc.calls) {
				t.Errorf("%d exchanges recorded, want %d", len(xs), tc.calls)
			}
			if tc.wantCode == "" {
				if err != nil || resp.Message.Content != "hello" || resp.Usage.TotalTokens != 5 {
					t.Fatalf("resp %+v, err %v", resp, err)
				}
				return
			}
			e, ok := model.AsError(err)
			if !ok || e.Code != tc.wantCode || e.Domain != tc.domain {
				t.Fatalf("err = %v, want code %s in domain %s", err, tc.wantCode, tc.domain)
			}
			if strings.Contains(err.Error(), "sk-test-key") {
				t.Fatal("the key leaked into the error")
			}
		})
	}
}

func TestUnreachableIsRetriedThenFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := complete(t, url, nil)
	e, ok := model.AsError(err)
	if !ok || e.Code != model.CodeUnreachable || e.Attempts != 3 || !e.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv, _ := server(t, [2]string{"0", ""})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c := model.NewClient(model.Endpoint{BaseURL: srv.URL + "/v1", Model: "m"}, model.RetryPolicy{MaxAttempts: 5, AttemptTimeout: time.Minute}, nil)
	start := time.Now()
	_, err := c.Complete(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}

// "models.yaml defines no profiles" was said of a file that does not exist.
func TestAMissingModelsFileSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.yaml")
	ps, err := model.LoadProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ps.Find("openai")
	if err == nil || !strings.Contains(err.Error(), "there is no models file at "+path) || !strings.Contains(err.Error(), "docs/models.md") {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(path, []byte("profiles: []\n"), 0o644)
	ps, _ = model.LoadProfiles(path)
	if _, err := ps.Find("openai"); err == nil || !strings.Contains(err.Error(), "defines no profiles") {
		t.Fatalf("an empty file: %v", err)
	}
}

func TestProfiles(t *testing.T) {
	good := `profiles:
  - name: openai
    base_url: https://api.openai.com/v1
    model: gpt-4.1
    api_key_env: OPENAI_API_KEY
  - name: local
    base_url: http://127.0.0.1:8000/v1
    model: qwen
    stream: true
  - name: claude
    kind: anthropic
    base_url: https://api.anthropic.com/v1
    model: claude-sonnet-4-5
    api_key_env: ANTHROPIC_API_KEY
`
	ps, err := model.ParseProfiles("models.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Find("openai")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Endpoint(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY is empty") {
		t.Fatalf("missing key: %v", err)
	}
	ep, err := p.Endpoint(func(k string) string { return map[string]string{"OPENAI_API_KEY": "sk-x"}[k] })
	if err != nil || ep.APIKey != "sk-x" {
		t.Fatalf("endpoint %+v %v", ep, err)
	}
	if ep.Kind != model.KindOpenAI || !ep.Speaks(model.APIResponses) || ep.Speaks(model.APIMessages) {
		t.Fatalf("an openai profile: %+v", ep)
	}
	c, _ := ps.Find("claude")
	if ep, err := c.Endpoint(func(string) string { return "sk-ant" }); err != nil || ep.Kind != model.KindAnthropic || !ep.Speaks(model.APIMessages) || ep.Speaks(model.APIChat) {
		t.Fatalf("an anthropic profile: %+v %v", ep, err)
	}
	if _, err := ps.Find("nope"); err == nil || !strings.Contains(err.Error(), "it has: openai, local, claude") {
		t.Fatalf("find: %v", err)
	}

	bad := []struct{ src, want string }{
		{"profiles:\n  - name: x\n    base_url: https://a/v1\n    model: m\n    api_key: sk-literal\n", "models.yaml:5:5: profiles[0].api_key: a literal secret is not allowed"},
		{"profiles:\n  - name: x\n    base_url: https://a/v1\n    model: m\n    token: abc\n", "profiles[0].token: a literal secret is not allowed"},
		{"profiles:\n  - name: x\n    base_url: https://a/v1\n    model: m\n    api_key_env: sk-123-not-a-name\n", "is not an environment variable name"},
		{"profiles:\n  - name: x\n    base_url: ftp://a\n    model: m\n", `profiles[0].base_url: "ftp://a" is not an http(s) URL`},
		{"profiles:\n  - base_url: https://a\n    model: m\n", "profiles[0].name: missing"},
		{"profiles:\n  - name: x\n    base_url: https://a\n    model: m\n  - name: x\n    base_url: https://a\n    model: m\n", `profiles[1].name: "x" is defined twice`},
		{"profiles:\n  - name: x\n    base_url: https://a\n    model: m\n    timeout_s: soon\n", `models.yaml:5:16: profiles[0].timeout_s: want a positive integer, got "soon"`},
		{"profiles: [\n", "models.yaml:1:1: did not find expected node content"},
		{"models: []\n", "models.yaml:1:1: models: unknown field (known: profiles)"},
		{"profiles:\n  - name: x\n    kind: mistral\n    base_url: https://a\n    model: m\n", `profiles[0].kind: "mistral": want one of openai, anthropic, gemini`},
	}
	for _, tc := range bad {
		if _, err := model.ParseProfiles("models.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseProfiles(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

// A streamed reply cut short, a stream of only [DONE], or a plain or cut
// JSON body answered to a streaming request once ended as a successful,
// empty reply. Each is a failure in the model domain; a cut stream and an
// error event in the stream are retried like a dropped connection or a 5xx.
func TestStreamFaults(t *testing.T) {
	chunk := `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hel"}}]}` + "\n\n"
	good := chunk + `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	sse := "text/event-stream"
	tests := []struct {
		name      string
		answers   [][2]string // content type, body
		calls     int
		code      string
		retryable bool
	}{
		{"whole stream", [][2]string{{sse, good}}, 1, "", false},
		{"cut, no finish_reason, no [DONE]", [][2]string{{sse, chunk}}, 3, model.CodeStreamCut, true},
		{"cut once, then whole", [][2]string{{sse, chunk}, {sse, good}}, 2, "", false},
		{"only [DONE]", [][2]string{{sse, "data: [DONE]\n\n"}}, 1, model.CodeBadResponse, false},
		{"plain JSON body", [][2]string{{"application/json", okReply}}, 1, model.CodeBadResponse, false},
		{"cut JSON body", [][2]string{{"application/json", okReply[:40]}}, 1, model.CodeBadResponse, false},
		{"error event, then whole", [][2]string{{sse, `data: {"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}` + "\n\n"}, {sse, good}}, 2, "", false},
		{"error event always", [][2]string{{sse, chunk + `data: {"error":{"message":"overloaded","code":"overloaded"}}` + "\n\n"}}, 3, model.CodeProviderError, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				a := tc.answers[min(int(n.Add(1))-1, len(tc.answers)-1)]
				w.Header().Set("Content-Type", a[0])
				w.Write([]byte(a[1]))
			}))
			defer srv.Close()
			var xs []model.Exchange
			c := model.NewClient(model.Endpoint{BaseURL: srv.URL + "/v1", Model: "m"}, fastRetry(), func(x model.Exchange) { xs = append(xs, x) })
			resp, err := c.Complete(context.Background(), model.Request{Stream: true, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
			if int(n.Load()) != tc.calls || len(xs) != tc.calls {
				t.Errorf("%d calls and %d exchanges, want %d", n.Load(), len(xs), tc.calls)
			}
			for i, x := range xs {
				if x.Attempt != i+1 || (i < len(xs)-1 && x.Error == "") {
					t.Errorf("exchange %d: attempt %d, error %q", i, x.Attempt, x.Error)
				}
			}
			if tc.code == "" {
				if err != nil || resp.Message.Content != "hello" {
					t.Fatalf("resp %+v, err %v", resp, err)
				}
				return
			}
			e, ok := model.AsError(err)
			if !ok || e.Code != tc.code || e.Domain != model.DomainModel || e.Retryable != tc.retryable {
				t.Fatalf("err = %#v, want %s in the model domain, retryable %v", err, tc.code, tc.retryable)
			}
		})
	}
}

// Retry-After: 30 was once ignored (the retry came after milliseconds). It
// is honoured up to model.MaxRetryAfter; a longer wait fails at once as
// rate_limited, naming the wait.
func TestRetryAfterIsHonoured(t *testing.T) {
	tests := []struct {
		header string
		calls  int
		waited time.Duration
		err    string
	}{
		{"30", 2, 30 * time.Second, ""},
		{"120", 2, 120 * time.Second, ""},
		{"300", 1, 0, "asked to wait 5m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.header, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if n.Add(1) == 1 {
					w.Header().Set("Retry-After", tc.header)
					w.WriteHeader(http.StatusTooManyRequests)
					w.Write([]byte(`{"error":{"message":"slow down"}}`))
					return
				}
				w.Write([]byte(okReply))
			}))
			defer srv.Close()
			var waited time.Duration
			c := model.NewClientSleeping(model.Endpoint{BaseURL: srv.URL + "/v1", Model: "m"}, fastRetry(), nil, func(_ context.Context, d time.Duration) error {
				waited += d
				return nil
			})
			_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
			if int(n.Load()) != tc.calls || waited != tc.waited {
				t.Fatalf("%d calls after waiting %s, want %d after %s", n.Load(), waited, tc.calls, tc.waited)
			}
			if tc.err == "" && err != nil {
				t.Fatal(err)
			}
			if e, ok := model.AsError(err); tc.err != "" && (!ok || e.Code != model.CodeRateLimited || !strings.Contains(e.Message, tc.err)) {
				t.Fatalf("err = %v, want rate_limited naming %q", err, tc.err)
			}
		})
	}
}

// Each run makes its own client. The SDK's default gave every client its
// own transport, so each kept its connections open: a 10,000-case suite ran
// out of file descriptors. Clients share one pool of connections.
func TestClientsShareConnections(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, okReply)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for range 50 {
		c := model.NewClient(model.Endpoint{BaseURL: srv.URL + "/v1", Model: "m"}, fastRetry(), nil)
		if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n > 2 {
		t.Fatalf("50 clients, one after another, opened %d connections; want them to reuse one", n)
	}
}

// A provider that drops the connection before answering is unreachable
// (retried), told apart by the error's type, not its text.
func TestDroppedConnectionIsUnreachable(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	_, err := complete(t, srv.URL, nil)
	e, ok := model.AsError(err)
	if !ok || e.Code != model.CodeUnreachable || !e.Retryable || calls.Load() != 3 {
		t.Fatalf("err = %v after %d calls, want unreachable, retried 3 times", err, calls.Load())
	}
}
