package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/proxy"
	"github.com/proctor-dev/proctor/internal/script"
)

// recorded keeps what a proxy recorded.
type recorded struct {
	p       *proxy.Proxy
	mu      sync.Mutex
	xs      []model.Exchange
	replies []*model.Response
}

func (r *recorded) record(x model.Exchange, reply *model.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.xs = append(r.xs, x)
	r.replies = append(r.replies, reply)
}

// all is what was recorded once every call that has begun is.
func (r *recorded) all() ([]model.Exchange, []*model.Response) {
	r.p.Drain()
	return r.sofar()
}

// sofar is what was recorded until now.
func (r *recorded) sofar() ([]model.Exchange, []*model.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Exchange(nil), r.xs...), append([]*model.Response(nil), r.replies...)
}

// modelCalls are the recorded model calls and their replies, without the
// calls beside them (counting tokens, listing models), of which there is at
// least one.
func modelCalls(xs []model.Exchange, replies []*model.Response) ([]model.Exchange, []*model.Response) {
	var mx []model.Exchange
	var mr []*model.Response
	for i, x := range xs {
		if x.Call == "" {
			mx, mr = append(mx, x), append(mr, replies[i])
		}
	}
	if len(mx) == len(xs) {
		return nil, nil // a call beside them was not recorded
	}
	return mx, mr
}

// scripted starts a proxy in front of a scripted endpoint.
func scripted(t *testing.T, src string, lim proxy.Limits) (*proxy.Proxy, *recorded) {
	t.Helper()
	s, err := script.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return start(t, model.Endpoint{BaseURL: ep.URL, Model: s.Model}, lim)
}

func start(t *testing.T, up model.Endpoint, lim proxy.Limits) (*proxy.Proxy, *recorded) {
	t.Helper()
	rec := &recorded{}
	p, err := proxy.Start(proxy.Config{Upstream: up, Limits: lim, Record: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	rec.p = p
	return p, rec
}

func sdk(p *proxy.Proxy, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(p.URL+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// The official SDK through the proxy: both APIs, streamed and not,
// models.retrieve; each call recorded with its API, the stream folded into
// one reply, tool calls decoded.
func TestOfficialSDKThroughTheProxy(t *testing.T) {
	ctx := context.Background()
	p, rec := scripted(t, `model: m1
steps:
  - expect: {api: chat, last_contains: hello}
    reply: {content: hi, usage: {prompt_tokens: 3, completion_tokens: 1, total_tokens: 4}}
  - expect: {api: chat}
    reply: {content: "", tool_calls: [{id: c1, name: read_file, arguments: {path: a.txt}}, {id: c2, name: read_file, arguments: {path: b.txt}}]}
  - expect: {api: responses, last_contains: go on}
    reply: {content: "", tool_calls: [{id: c3, name: write_file, arguments: {path: a.txt, content: new}}]}
  - expect: {api: responses}
    reply: {content: done}
`, proxy.Limits{})
	c := sdk(p, p.Key)

	if m, err := c.Models.Get(ctx, "m1"); err != nil || m.ID != "m1" {
		t.Fatalf("models.retrieve through the proxy: %+v %v", m, err)
	}
	cc, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("hello")})}})
	if err != nil || cc.Choices[0].Message.Content != "hi" {
		t.Fatalf("chat: %+v %v", cc, err)
	}
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m1", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("read both")}})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || len(acc.Choices) == 0 || len(acc.Choices[0].Message.ToolCalls) != 2 {
		t.Fatalf("streamed chat: %+v %v", acc.ChatCompletion, err)
	}
	rs := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "m1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go on")}})
	var calls []string
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.output_item.done" && ev.Item.Type == "function_call" {
			calls = append(calls, ev.Item.Name)
		}
	}
	if err := rs.Err(); err != nil || len(calls) != 1 || calls[0] != "write_file" {
		t.Fatalf("streamed responses: %v %v", calls, err)
	}
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and now")}})
	if err != nil || r.OutputText() != "done" {
		t.Fatalf("responses: %+v %v", r, err)
	}

	xs, replies := modelCalls(rec.all())
	if len(xs) != 4 {
		t.Fatalf("recorded %d model calls, want 4 (models.retrieve is recorded beside them)", len(xs))
	}
	wantAPI := []string{model.APIChat, model.APIChat, model.APIResponses, model.APIResponses}
	for i, x := range xs {
		if x.API != wantAPI[i] || x.Error != "" || !json.Valid(x.Response) || replies[i] == nil || x.Attempt != 1 {
			t.Errorf("exchange %d: api %q error %q reply %+v attempt %d", i+1, x.API, x.Error, replies[i], x.Attempt)
		}
	}
	if replies[0].Usage.TotalTokens != 4 {
		t.Errorf("usage of the first reply: %+v", replies[0].Usage)
	}
	if got := replies[1].Message.ToolCalls; len(got) != 2 || got[1].ID != "c2" || !strings.Contains(got[1].Arguments, "b.txt") {
		t.Errorf("folded chat stream's tool calls: %+v", got)
	}
	if got := replies[2].Message.ToolCalls; len(got) != 1 || got[0].ID != "c3" || got[0].Name != "write_file" {
		t.Errorf("folded responses stream's tool calls: %+v", got)
	}
	if _, req, err := model.DecodeAnyRequest(xs[2].API, xs[2].Request); err != nil || req.Messages[len(req.Messages)-1].Content != "go on" {
		t.Errorf("recorded responses request: %+v %v", req, err)
	}
}

// The agent holds a placeholder key; the live provider gets the real one,
// and never the placeholder.
func TestTheRealKeyStaysInTheProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer sk-real-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"live","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"from live"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	defer live.Close()
	p, rec := start(t, model.Endpoint{BaseURL: live.URL + "/v1", APIKey: "sk-real-123", Model: "live"}, proxy.Limits{})
	if strings.Contains(p.Key, "sk-real") || !strings.HasPrefix(p.Key, "proctor-proxy-") {
		t.Fatalf("placeholder key %q", p.Key)
	}
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "live", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	wrong := sdk(p, "sk-real-123")
	if _, err := wrong.Chat.Completions.New(ctx, params); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a call without the placeholder key was let through: %v", err)
	}
	right := sdk(p, p.Key)
	cc, err := right.Chat.Completions.New(ctx, params)
	if err != nil || cc.Choices[0].Message.Content != "from live" {
		t.Fatalf("forwarded call: %+v %v", cc, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "Bearer sk-real-123" {
		t.Fatalf("the provider saw %q", seen)
	}
	// The refused call is recorded too, with why; no key is in either.
	xs, _ := rec.all()
	if len(xs) != 2 || !strings.Contains(xs[0].Error, "refused POST /v1/chat/completions: HTTP 401") || xs[1].Error != "" {
		t.Fatalf("recorded %d exchanges: %+v", len(xs), xs)
	}
	for _, x := range xs {
		if strings.Contains(string(x.Request)+string(x.Response)+x.Error, p.Key) || strings.Contains(string(x.Request)+string(x.Response)+x.Error, "sk-real-123") {
			t.Fatalf("a key is in the record: %+v", x)
		}
	}
}

// Past a bound every call is refused with a 400 that names it, which the
// SDK does not retry; refused calls are recorded too.
func TestBoundsAreEnforcedByTheProxy(t *testing.T) {
	const steps = "model: m\nsteps:\n  - reply: {content: one, usage: {prompt_tokens: 40, completion_tokens: 20, total_tokens: 60}}\n  - reply: {content: two}\n  - reply: {content: three}\n"
	now := time.Now()
	for _, tc := range []struct {
		name  string
		lim   proxy.Limits
		okays int
		want  string
	}{
		{"max calls", proxy.Limits{MaxCalls: 2}, 2, "max_turns=2"},
		{"max tokens", proxy.Limits{MaxTokens: 50}, 1, "max_tokens=50 (60 tokens spent)"},
		// At a bound is past it: max_tokens=60 spent 60 is refused, as
		// max_messages=2 refuses the third call.
		{"max tokens reached exactly", proxy.Limits{MaxTokens: 60}, 1, "max_tokens=60 (60 tokens spent)"},
		{"max tokens one short", proxy.Limits{MaxTokens: 61}, 3, ""},
		{"max messages", proxy.Limits{MaxTotalCalls: 2}, 2, "max_messages=2"},
		{"max messages not reached", proxy.Limits{MaxTotalCalls: 3}, 3, ""},
		{"wall clock", proxy.Limits{Deadline: now.Add(-time.Second)}, 0, "wall_clock_s"},
		{"none reached", proxy.Limits{MaxCalls: 5, MaxTokens: 1000, Deadline: now.Add(time.Hour)}, 3, ""},
		// 40 prompt and 20 completion tokens at $100 and $1,000 a million:
		// $0.004 + $0.02 = $0.024.
		{"max cost", proxy.Limits{MaxCostUSD: 0.02, Prices: priced("m", 100, 1000)}, 1, "max_cost_usd=0.02 ($0.02 spent)"},
		{"max cost not reached", proxy.Limits{MaxCostUSD: 0.03, Prices: priced("m", 100, 1000)}, 3, ""},
		// A call names its model: one its profile does not allow is refused,
		// and under max_cost_usd so is one without a price (fail closed).
		{"a model the profile does not allow", proxy.Limits{Models: []string{"cheap"}}, 0, `model "m" is not the run's: its model profile allows cheap`},
		{"a model without a price", proxy.Limits{MaxCostUSD: 5, Prices: priced("other", 1, 1), Model: "other"}, 0, `max_cost_usd=5 (model "m", which the call names, has no price`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, rec := scripted(t, steps, tc.lim)
			c := openai.NewClient(option.WithBaseURL(p.URL+"/"), option.WithAPIKey(p.Key)) // the SDK's default retries
			okays := 0
			var last error
			for range 3 {
				_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
				if err == nil {
					okays++
				} else {
					last = err
				}
			}
			xs, _ := rec.all()
			if okays != tc.okays || len(xs) != 3 || !strings.HasPrefix(p.Exceeded(), tc.want) || (tc.want == "") != (p.Exceeded() == "") {
				t.Fatalf("%d calls answered, %d recorded, exceeded %q, last error %v", okays, len(xs), p.Exceeded(), last)
			}
			if tc.want == "" {
				return
			}
			var apiErr *openai.Error
			if !errors.As(last, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, tc.want) || !strings.Contains(xs[2].Error, tc.want) {
				t.Fatalf("refusal %v, recorded %q; want a 400 that names %q", last, xs[2].Error, tc.want)
			}
		})
	}
}

func priced(model string, in, out float64) pricing.Table {
	return pricing.Table{Prices: map[string]pricing.Price{model: {Input: in, Output: out}}}
}

// Each call is costed by the model it names, not the run's: an agent that
// names a pricier model than its profile's is held to max_cost_usd at that
// model's price (it was costed at the profile's, $0 for 10 calls).
func TestEachCallIsCostedByTheModelItNames(t *testing.T) {
	const steps = "model: cheap\nsteps:\n  - reply: {content: one, usage: {prompt_tokens: 40, completion_tokens: 20, total_tokens: 60}}\n  - reply: {content: two, usage: {prompt_tokens: 40, completion_tokens: 20, total_tokens: 60}}\n  - reply: {content: three}\n"
	prices := pricing.Table{Prices: map[string]pricing.Price{"cheap": {}, "dear": {Input: 100, Output: 1000}}} // a "dear" call: $0.024
	p, _ := scripted(t, steps, proxy.Limits{MaxCostUSD: 0.03, Prices: prices, Model: "cheap", Models: []string{"cheap", "dear"}})
	c := openai.NewClient(option.WithBaseURL(p.URL+"/"), option.WithAPIKey(p.Key), option.WithMaxRetries(0))
	okays := 0
	for range 3 {
		if _, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "dear", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}}); err == nil {
			okays++
		}
	}
	if okays != 2 || !strings.HasPrefix(p.Exceeded(), "max_cost_usd=0.03 ($0.05 spent)") {
		t.Fatalf("%d calls answered, exceeded %q; want 2, then max_cost_usd at the price of the model called", okays, p.Exceeded())
	}
}

// A provider that cannot be reached is a 502 the agent may retry, and the
// attempt numbers come from the SDK's retry header.
func TestAnUnreachableProviderIsRecordedPerAttempt(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	p, rec := start(t, model.Endpoint{BaseURL: url + "/v1", Model: "m"}, proxy.Limits{})
	c := openai.NewClient(option.WithBaseURL(p.URL+"/"), option.WithAPIKey(p.Key), option.WithMaxRetries(2), option.WithRequestTimeout(5*time.Second))
	_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	if err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("err = %v, want a 502", err)
	}
	xs, _ := rec.all()
	if len(xs) != 3 {
		t.Fatalf("recorded %d attempts, want 3", len(xs))
	}
	for i, x := range xs {
		if x.Attempt != i+1 || !strings.Contains(x.Error, "did not answer") {
			t.Errorf("attempt %d recorded as %d: %q", i+1, x.Attempt, x.Error)
		}
	}
}

// An agent that retries without saying so (no retry-count header, as
// opencode does) sends the same body again: each is recorded as the next
// attempt of the same call, and a new body starts again at 1.
func TestARetryIsKnownByItsBodyWithoutAHeader(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	p, rec := start(t, model.Endpoint{BaseURL: url + "/v1", Model: "m"}, proxy.Limits{})
	post := func(body string) {
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, body := range []string{`{"model":"m","messages":[{"role":"user","content":"a"}]}`, `{"model":"m","messages":[{"role":"user","content":"a"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"a"}]}`, `{"model":"m","messages":[{"role":"user","content":"b"}]}`} {
		post(body)
	}
	xs, _ := rec.all()
	var got []int
	for _, x := range xs {
		got = append(got, x.Attempt)
	}
	if fmt.Sprint(got) != "[1 2 3 1]" {
		t.Fatalf("attempts %v, want [1 2 3 1]", got)
	}
}

// An agent may ask proctor about a gated call: the run's approver decides
// (none configured denies); the placeholder key is needed, and a body that
// is not an approval is refused.
func TestApprovalsThroughTheProxy(t *testing.T) {
	ask := func(p *proxy.Proxy, key, body string) (int, proxy.Answer) {
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/proctor/approvals", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d proxy.Answer
		json.NewDecoder(resp.Body).Decode(&d)
		return resp.StatusCode, d
	}
	closed, _ := start(t, model.Endpoint{BaseURL: "http://127.0.0.1:9/v1"}, proxy.Limits{})
	if code, d := ask(closed, closed.Key, `{"call_id": "c1", "tool": "run_command", "arguments": "{\"command\": \"ls\"}"}`); code != 200 || d.Approved || d.By != "none" {
		t.Fatalf("no approver: %d %+v", code, d)
	}
	var got proxy.Approval
	p, err := proxy.Start(proxy.Config{Upstream: model.Endpoint{BaseURL: "http://127.0.0.1:9/v1"}, Approve: func(_ context.Context, a proxy.Approval) proxy.Answer {
		got = a
		return proxy.Answer{Approved: a.Arguments == `{"command": "go test"}`, By: "policy", Reason: "allowed prefix"}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if code, d := ask(p, p.Key, `{"call_id": "c2", "tool": "run_command", "arguments": "{\"command\": \"go test\"}"}`); code != 200 || !d.Approved || d.By != "policy" || got.CallID != "c2" {
		t.Fatalf("approved: %d %+v (asked %+v)", code, d, got)
	}
	if code, _ := ask(p, "sk-other", `{"tool": "run_command"}`); code != http.StatusUnauthorized {
		t.Fatalf("without the placeholder key: %d", code)
	}
	if code, _ := ask(p, p.Key, `not json`); code != http.StatusBadRequest {
		t.Fatalf("a body that is not an approval: %d", code)
	}
}

// An agent whose tool results do not tell its model how a command ended
// tells proctor (opencode's plugin); only with the placeholder key, and
// only a call id with an exit status.
func TestCommandResultsThroughTheProxy(t *testing.T) {
	var got []proxy.Result
	p, err := proxy.Start(proxy.Config{Upstream: model.Endpoint{BaseURL: "http://127.0.0.1:9/v1"}, Result: func(r proxy.Result) { got = append(got, r) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	send := func(key, body string) int {
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/proctor/results", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		key, body string
		want      int
	}{
		{p.Key, `{"call_id": "c1", "exit": 3}`, http.StatusNoContent},
		{"sk-other", `{"call_id": "c2", "exit": 0}`, http.StatusUnauthorized},
		{p.Key, `{"call_id": "c3"}`, http.StatusBadRequest},
		{p.Key, `{"exit": 0}`, http.StatusBadRequest},
		{p.Key, `not json`, http.StatusBadRequest},
	} {
		if code := send(tc.key, tc.body); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.body, code, tc.want)
		}
	}
	if len(got) != 1 || got[0].CallID != "c1" || *got[0].Exit != 3 {
		t.Fatalf("taken: %+v", got)
	}
}

// Calls are recorded in the order they began, even when a later call ends
// first.
func TestCallsAreRecordedInTheOrderTheyBegan(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		json.NewDecoder(r.Body).Decode(&body)
		if body.Model == "slow" {
			close(arrived)
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"` + body.Model + `","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`))
	}))
	defer slow.Close()
	p, rec := start(t, model.Endpoint{BaseURL: slow.URL + "/v1"}, proxy.Limits{})
	c := sdk(p, p.Key)
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "slow", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a")}})
		done <- err
	}()
	<-arrived
	fast := make(chan error, 1)
	go func() {
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "fast", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("b")}})
		fast <- err
	}()
	if err := <-fast; err != nil {
		t.Fatal(err)
	}
	if xs, _ := rec.sofar(); len(xs) != 0 {
		t.Fatalf("the later call was recorded before the earlier one ended: %d", len(xs))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p.Drain()
	_, replies := rec.all()
	if len(replies) != 2 || replies[0].Model != "slow" || replies[1].Model != "fast" {
		t.Fatalf("recorded out of order: %+v", replies)
	}
}

// The real key opens only the routes the proxy serves: a path that a
// provider could read as another route — dot segments, escapes, extra
// segments, a query — is refused before anything is forwarded, and no
// query is passed on.
func TestOnlyTheServedRoutesReachTheProvider(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[]}`))
	}))
	defer live.Close()
	p, rec := start(t, model.Endpoint{BaseURL: live.URL + "/v1", APIKey: "sk-real-123", Model: "live"}, proxy.Limits{})
	get := func(rawPath string) int {
		req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(p.URL, "/v1")+rawPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "" // keep the path as written: the client must not clean it
		req.Header.Set("Authorization", "Bearer "+p.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{
		"/v1/models/../organization/admin_api_keys",
		"/v1/models/..%2Forganization%2Fadmin_api_keys",
		"/v1/models/%2e%2e/organization/admin_api_keys",
		"/v1/models/%2E%2E/%2E%2E/v1/files",
		"/v1/models/gpt-4o/../../organization/admin_api_keys",
		"/v1/models//organization",
		"/v1/models/.hidden",
		"/v1/models/a/b/c/d/e",
		"/v1/organization/admin_api_keys",
		"/v1/files",
		"/v1/models/",
		"/models",
		"/v1//models",
		"/v1/models/gpt%2D4o",
	} {
		if code := get(path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	for _, path := range []string{"/v1/models", "/v1/models/gpt-4o", "/v1/models/openai/gpt-4o:free", "/v1/models?limit=1&after=../../x", "/v1/models/gpt-4o?x=../../organization"} {
		if code := get(path); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, code)
		}
	}
	// Each refused request is in the record, with its status; each models
	// list passed on, as a call beside the model calls.
	p.Drain()
	xs, _ := rec.sofar()
	refused, listed := 0, 0
	for _, x := range xs {
		switch {
		case strings.Contains(x.Error, "HTTP 404"):
			refused++
		case x.Call == model.CallModels && x.Error == "" && strings.Contains(string(x.Request), `"path": "/v1/models`):
			listed++
		}
	}
	if refused != 14 || listed != 5 || len(xs) != 19 {
		t.Errorf("recorded %d refused requests and %d models lists, want 14 and 5: %+v", refused, listed, xs)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/v1/models", "/v1/models/gpt-4o", "/v1/models/openai/gpt-4o:free", "/v1/models", "/v1/models/gpt-4o"}
	if len(seen) != len(want) {
		t.Fatalf("the provider saw %q, want %q", seen, want)
	}
	for i, w := range want {
		if seen[i] != w+" Bearer sk-real-123" {
			t.Errorf("the provider saw %q, want %q", seen[i], w)
		}
	}
}

// An agent sends its next call as soon as it has read a reply, which may
// be before the proxy has counted that reply's tokens: the next call still
// waits for them, and is refused past max_tokens. (The proxy's clock, read
// between the reply's forwarding and its counting, holds the first call
// there while the second is sent.)
func TestTheNextCallWaitsForTheTokensBeforeIt(t *testing.T) {
	s, err := script.Parse("s.yaml", []byte("model: m\nsteps:\n  - reply: {content: one, usage: {prompt_tokens: 40, completion_tokens: 20, total_tokens: 60}}\n  - reply: {content: two}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	var reads atomic.Int32
	slowClock := func() time.Time {
		if reads.Add(1) == 2 { // the first call's reply is forwarded, not yet counted
			time.Sleep(300 * time.Millisecond)
		}
		return time.Now()
	}
	p, err := proxy.Start(proxy.Config{Upstream: model.Endpoint{BaseURL: ep.URL, Model: s.Model}, Limits: proxy.Limits{MaxTokens: 50}, Record: func(model.Exchange, *model.Response) {}, Now: slowClock})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := sdk(p, p.Key)
	first := make(chan error, 1)
	go func() {
		_, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
		first <- err
	}()
	// Send the second call while the first is held between its reply and
	// its counting.
	for reads.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	_, err = c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("y")}})
	if err := <-first; err != nil {
		t.Fatalf("the first call: %v", err)
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "max_tokens=50 (60 tokens spent)") {
		t.Fatalf("the second call, sent before the first's tokens were counted: %v", err)
	}
}

// Each route takes only its method: a DELETE of the models list or a GET
// of the chat route reaches no provider (the real key opens no route the
// proxy does not serve, whatever the method).
func TestEachRouteTakesOnlyItsMethod(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer live.Close()
	p, _ := start(t, model.Endpoint{BaseURL: live.URL + "/v1", APIKey: "sk-real-123", Model: "live"}, proxy.Limits{})
	root := strings.TrimSuffix(p.URL, "/v1")
	for path, served := range map[string]string{
		"/v1/chat/completions": http.MethodPost, "/v1/responses": http.MethodPost, "/v1/messages": http.MethodPost,
		"/v1/messages/count_tokens": http.MethodPost, "/v1/proctor/approvals": http.MethodPost, "/v1/proctor/results": http.MethodPost,
		"/v1/models": http.MethodGet, "/v1/models/gpt-4o": http.MethodGet, "/v1beta/models/gemini:generateContent": http.MethodPost,
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if method == served {
				continue
			}
			req, _ := http.NewRequest(method, root+path, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+p.Key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", method, path, resp.StatusCode)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Fatalf("the provider was sent: %v", seen)
	}
}

// Counting tokens (Anthropic's count_tokens, Gemini's :countTokens) is
// passed on and recorded, marked as what it asked: every call an agent
// makes is in the record, and none of these is a model call.
func TestCallsBesideTheModelCallsAreRecorded(t *testing.T) {
	p, rec := scripted(t, "steps:\n  - reply: {content: hi}\n", proxy.Limits{MaxTotalCalls: 1})
	for _, c := range []struct{ path, body string }{
		{"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello"}]}`},
		{"/v1beta/models/m:countTokens", `{"contents":[{"role":"user","parts":[{"text":"hello"}]}]}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(p.URL, "/v1")+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+p.Key)
		req.Header.Set("X-Api-Key", p.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", c.path, resp.StatusCode)
		}
	}
	xs, replies := rec.all()
	if len(xs) != 2 || xs[0].Call != model.CallCountTokens || xs[1].Call != model.CallCountTokens || replies[0] != nil ||
		!strings.Contains(string(xs[0].Request), "hello") || len(xs[1].Response) == 0 {
		t.Fatalf("recorded %+v", xs)
	}
	// Not model calls: the run's one model call is still to be made.
	c := sdk(p, p.Key)
	if _, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
		t.Fatalf("the model call after them: %v", err)
	}
}
