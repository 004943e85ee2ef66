package script_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/proctor-dev/proctor/internal/script"
)

// sdkEndpoint serves a script and returns an official openai-go client for
// it, with the SDK's default retries, and a count of the requests it got.
func sdkEndpoint(t *testing.T, src string) (openai.Client, *atomic.Int32) {
	t.Helper()
	ep := serve(t, src)
	var n atomic.Int32
	target, _ := url.Parse(ep.URL)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		r.URL.Scheme, r.URL.Host, r.RequestURI = target.Scheme, target.Host, ""
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			k, err := resp.Body.Read(buf)
			w.Write(buf[:k])
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(counting.Close)
	return openai.NewClient(option.WithBaseURL(counting.URL+"/v1/"), option.WithAPIKey("none")), &n
}

// What real clients sent proctor's scripted endpoint: content-part arrays,
// models.retrieve, a stream without include_usage, a mismatch that the SDK
// retried.
func TestOfficialSDKAgainstTheScriptedEndpoint(t *testing.T) {
	ctx := context.Background()
	c, calls := sdkEndpoint(t, "model: scripted-m\nsteps:\n  - expect: {last_contains: hello}\n    reply: {content: hi there}\n  - reply: {content: streamed}\n  - expect: {last_contains: nothing like it}\n    reply: {content: never}\n")

	m, err := c.Models.Get(ctx, "scripted-m")
	if err != nil || m.ID != "scripted-m" {
		t.Fatalf("models.retrieve: %+v %v", m, err)
	}
	if _, err := c.Models.Get(ctx, "gpt-nope"); err == nil {
		t.Fatal("an unknown model was found")
	}

	// A user message made of content parts.
	parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("hello"), openai.TextContentPart("again")}
	cc, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-x", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts)}})
	if err != nil {
		t.Fatalf("content parts: %v", err)
	}
	if cc.Choices[0].Message.Content != "hi there" || cc.Model != "gpt-x" || cc.Created == 0 || cc.SystemFingerprint == "" || cc.ID == "" {
		t.Fatalf("reply %+v", cc)
	}

	// A stream that did not ask for usage gets no usage chunk.
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-x", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go on")}})
	text, usageChunks := "", 0
	for stream.Next() {
		ch := stream.Current()
		if ch.JSON.Usage.Valid() && ch.Usage.TotalTokens > 0 || len(ch.Choices) == 0 {
			usageChunks++
		}
		for _, choice := range ch.Choices {
			text += choice.Delta.Content
		}
	}
	if err := stream.Err(); err != nil || text != "streamed" || usageChunks != 0 {
		t.Fatalf("stream: %q, %d usage chunks, %v", text, usageChunks, err)
	}

	// A mismatch is answered once: the SDK does not retry it.
	before := calls.Load()
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-x", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("something else")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || apiErr.Code != "script_mismatch" {
		t.Fatalf("mismatch: %v", err)
	}
	if got := calls.Load() - before; got != 1 {
		t.Fatalf("the SDK sent the mismatching request %d times; want 1 (x-should-retry: false)", got)
	}
}

// A side request (a client titling the conversation in parallel with its
// first turn) is answered by an any-time step, whenever it comes, and the
// ordered steps go on as if it had not been asked.
func TestAnytimeStepsAnswerSideRequests(t *testing.T) {
	ctx := context.Background()
	c, _ := sdkEndpoint(t, "steps:\n  - expect: {last_contains: fix}\n    reply: {content: first}\n  - reply: {content: second}\nanytime:\n  - expect: {last_contains: Generate a title}\n    reply: {content: A title}\n")
	ask := func(text string) string {
		t.Helper()
		cc, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		return cc.Choices[0].Message.Content
	}
	for _, tc := range [][2]string{{"Generate a title for: fix it", "A title"}, {"please fix the bug", "first"}, {"Generate a title again", "A title"}, {"go on", "second"}} {
		if got := ask(tc[0]); got != tc[1] {
			t.Fatalf("%q answered %q, want %q", tc[0], got, tc[1])
		}
	}
	if _, err := script.Parse("s.yaml", []byte("steps:\n  - reply: {content: x}\nanytime:\n  - reply: {content: y}\n")); err == nil || !strings.Contains(err.Error(), "anytime[0].expect: an any-time step needs an expectation") {
		t.Fatalf("an any-time step without expectations: %v", err)
	}
}

// A side request may end with the same user message as the main one
// (opencode's title request does): an any-time step tells it apart by its
// system prompt, or by its offering no tools.
func TestASideRequestIsKnownByItsSystemPromptOrNoTools(t *testing.T) {
	ctx := context.Background()
	for _, anytime := range []string{"{system_contains: generate a title}", "{no_tools: true}"} {
		c, _ := sdkEndpoint(t, "steps:\n  - expect: {tools_offered: [write]}\n    reply: {content: main}\nanytime:\n  - expect: "+anytime+"\n    reply: {content: A title}\n")
		ask := func(system string, tools bool) string {
			t.Helper()
			p := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("Fix the bug")}}
			if tools {
				p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "write"})}
			}
			cc, err := c.Chat.Completions.New(ctx, p)
			if err != nil {
				t.Fatalf("%s: %v", anytime, err)
			}
			return cc.Choices[0].Message.Content
		}
		if got := ask("You generate a title for the session.", false); got != "A title" {
			t.Fatalf("%s: the title request answered %q", anytime, got)
		}
		if got := ask("You are a coding agent.", true); got != "main" {
			t.Fatalf("%s: the main request answered %q", anytime, got)
		}
	}
}

// Codex CLI speaks only the Responses API. The scripted endpoint answers
// it, streamed and not, with function calls and their outputs, through the
// official SDK.
func TestResponsesAPIWithTheOfficialSDK(t *testing.T) {
	ctx := context.Background()
	c, _ := sdkEndpoint(t, `steps:
  - expect: {last_role: user, last_contains: rounding, tools_offered: [read_file]}
    reply:
      content: I will read it.
      tool_calls: [{name: read_file, arguments: {path: money.go}, id: call_1}]
      usage: {prompt_tokens: 10, completion_tokens: 5}
  - expect: {last_role: tool, last_contains: package money}
    reply: {content: Fixed., usage: {prompt_tokens: 20, completion_tokens: 2}}
`)
	tools := []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "read_file", Parameters: map[string]any{"type": "object"}}}}
	user := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{responses.ResponseInputContentParamOfInputText("Fix the rounding bug")}, responses.EasyInputMessageRoleUser)
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5-codex", Instructions: openai.String("be careful"), Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{user}}})
	if err != nil {
		t.Fatalf("first turn: %v", err)
	}
	if first.OutputText() != "I will read it." || len(first.Output) != 2 || first.Output[1].Type != "function_call" || first.Output[1].CallID != "call_1" ||
		first.Output[1].Name != "read_file" || first.Usage.InputTokens != 10 || first.Model != "gpt-5-codex" {
		t.Fatalf("first turn: %+v", first)
	}
	out := responses.ResponseInputItemParamOfFunctionCallOutput("package money\n")
	out.OfFunctionCallOutput.CallID = openai.String("call_1")
	call := responses.ResponseInputItemParamOfFunctionCall(`{"path":"money.go"}`, "call_1", "read_file")
	stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-5-codex", Tools: tools,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{user, call, out}}})
	var deltas string
	var done *responses.Response
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			deltas += ev.Delta
		case "response.completed":
			r := ev.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil || deltas != "Fixed." || done == nil || done.OutputText() != "Fixed." || done.Usage.TotalTokens != 22 {
		t.Fatalf("streamed turn: %q %+v %v", deltas, done, err)
	}
}

// A step may say which API it expects; a request through the other is a
// mismatch that says so.
func TestAStepMayExpectAnAPI(t *testing.T) {
	ctx := context.Background()
	c, _ := sdkEndpoint(t, "steps:\n  - expect: {api: responses}\n    reply: {content: via responses}\n")
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "expected a request through the responses API, got one through chat") {
		t.Fatalf("chat request to a responses step: %v", err)
	}
	if _, err := script.Parse("s.yaml", []byte("steps:\n  - expect: {api: soap}\n    reply: {content: x}\n")); err == nil || !strings.Contains(err.Error(), `"soap" is not one of chat, responses, messages, gemini`) {
		t.Fatalf("a bad api: %v", err)
	}
	c2, _ := sdkEndpoint(t, "steps:\n  - expect: {api: responses}\n    reply: {content: via responses}\n")
	r, err := c2.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	if err != nil || r.OutputText() != "via responses" {
		t.Fatalf("responses request: %v", err)
	}
}
