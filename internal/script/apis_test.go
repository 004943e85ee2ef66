package script_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"google.golang.org/genai"

	"github.com/proctor-dev/proctor/internal/script"
)

// One script, API-neutral, answered through the Anthropic Messages API and
// the Gemini API to their official SDKs: a tool call, its result, the end.
const writeScript = `model: scripted
steps:
  - expect: {last_role: user, last_contains: "make a.txt", tools_offered: [write_file], system_contains: careful}
    reply:
      content: I will write it.
      tool_calls:
        - {id: call_w, name: write_file, arguments: {path: a.txt, content: "hi\n"}}
      usage: {prompt_tokens: 100, completion_tokens: 20, cache_read_tokens: 60, cache_write_tokens: 10}
  - expect: {last_role: tool, last_contains: wrote 3 bytes}
    reply: {content: Done., usage: {prompt_tokens: 130, completion_tokens: 5}}
`

// rootOf starts the script and returns the endpoint's root (its URL
// without /v1), where the Anthropic and Google SDKs add their own version.
func rootOf(t *testing.T, src string) string {
	t.Helper()
	return strings.TrimSuffix(serve(t, src).URL, "/v1")
}

// serve starts the script src until the test ends.
func serve(t *testing.T, src string) *script.Endpoint {
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
	return ep
}

func anthropicClient(root string) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(root+"/"), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
}

var writeTool = anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: map[string]any{
	"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}}, "write_file")

func firstTurn() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		System:   []anthropic.TextBlockParam{{Text: "Be careful."}},
		Tools:    []anthropic.ToolUnionParam{writeTool},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("please make a.txt"))}}
}

// checkToolUse checks the first reply: its text, its tool_use block and
// its usage, cached tokens apart.
func checkToolUse(t *testing.T, m *anthropic.Message) {
	t.Helper()
	if len(m.Content) != 2 || m.Content[0].Text != "I will write it." || m.Content[1].Type != "tool_use" || m.Content[1].ID != "call_w" || m.Content[1].Name != "write_file" {
		t.Fatalf("first reply: %+v", m.Content)
	}
	var in struct{ Path, Content string }
	if err := json.Unmarshal(m.Content[1].Input, &in); err != nil || in.Path != "a.txt" || in.Content != "hi\n" {
		t.Fatalf("tool input %s: %v", m.Content[1].Input, err)
	}
	if m.StopReason != anthropic.StopReasonToolUse || m.Usage.InputTokens != 30 || m.Usage.CacheReadInputTokens != 60 || m.Usage.CacheCreationInputTokens != 10 || m.Usage.OutputTokens != 20 {
		t.Fatalf("stop %q usage %+v", m.StopReason, m.Usage)
	}
}

func TestTheAnthropicSDKRunsAToolRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := anthropicClient(rootOf(t, writeScript))
	first := firstTurn()
	m, err := c.Messages.New(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	checkToolUse(t, m)
	second := first
	second.Messages = append(second.Messages, m.ToParam(),
		anthropic.NewUserMessage(anthropic.NewTextBlock("<system-reminder>stay on task</system-reminder>"), anthropic.NewToolResultBlock("call_w", "wrote 3 bytes", false)))
	done, err := c.Messages.New(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Content) != 1 || done.Content[0].Text != "Done." || done.StopReason != anthropic.StopReasonEndTurn {
		t.Fatalf("last reply: %+v", done)
	}
	// Count tokens answers an estimate, never a step.
	n, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "claude-test",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("how long is this?"))}})
	if err != nil || n.InputTokens <= 0 {
		t.Fatalf("count_tokens: %+v, %v", n, err)
	}
}

func TestTheAnthropicSDKAccumulatesAStream(t *testing.T) {
	ctx := context.Background()
	c := anthropicClient(rootOf(t, writeScript))
	stream := c.Messages.NewStreaming(ctx, firstTurn())
	var m anthropic.Message
	for stream.Next() {
		if err := m.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkToolUse(t, &m)
}

func TestAMismatchReachesTheAnthropicSDKAsAConflict(t *testing.T) {
	c := anthropicClient(rootOf(t, writeScript))
	p := firstTurn()
	p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("something else"))}
	_, err := c.Messages.New(context.Background(), p)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), `expected the last message to contain \"make a.txt\"`) {
		t.Fatalf("a request off the script: %v", err)
	}
}

func geminiClient(t *testing.T, root string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: root + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var geminiConfig = &genai.GenerateContentConfig{
	SystemInstruction: genai.NewContentFromText("Be careful.", genai.RoleUser),
	Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "write_file", Description: "write a file",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}}}}}},
}

func checkFunctionCall(t *testing.T, text string, calls []*genai.FunctionCall) {
	t.Helper()
	if text != "I will write it." || len(calls) != 1 || calls[0].Name != "write_file" || calls[0].Args["path"] != "a.txt" || calls[0].Args["content"] != "hi\n" {
		t.Fatalf("first reply: %q %+v", text, calls)
	}
}

func TestTheGeminiSDKRunsAToolRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := geminiClient(t, rootOf(t, writeScript))
	history := []*genai.Content{genai.NewContentFromText("please make a.txt", genai.RoleUser)}
	r, err := c.Models.GenerateContent(ctx, "gemini-test", history, geminiConfig)
	if err != nil {
		t.Fatal(err)
	}
	checkFunctionCall(t, r.Text(), r.FunctionCalls())
	if u := r.UsageMetadata; u.PromptTokenCount != 100 || u.CandidatesTokenCount != 20 || u.CachedContentTokenCount != 60 || u.TotalTokenCount != 120 {
		t.Fatalf("usage %+v", u)
	}
	history = append(history, r.Candidates[0].Content,
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionResponse("write_file", map[string]any{"output": "wrote 3 bytes"})}, genai.RoleUser))
	done, err := c.Models.GenerateContent(ctx, "gemini-test", history, geminiConfig)
	if err != nil || done.Text() != "Done." {
		t.Fatalf("last reply: %v", err)
	}
	n, err := c.Models.CountTokens(ctx, "gemini-test", history, nil)
	if err != nil || n.TotalTokens <= 0 {
		t.Fatalf("countTokens: %+v, %v", n, err)
	}
}

func TestTheGeminiSDKReadsAStream(t *testing.T) {
	ctx := context.Background()
	c := geminiClient(t, rootOf(t, writeScript))
	var text strings.Builder
	var calls []*genai.FunctionCall
	chunks := 0
	for r, err := range c.Models.GenerateContentStream(ctx, "gemini-test", []*genai.Content{genai.NewContentFromText("please make a.txt", genai.RoleUser)}, geminiConfig) {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		text.WriteString(r.Text())
		calls = append(calls, r.FunctionCalls()...)
	}
	if chunks != 2 {
		t.Fatalf("%d chunks, want the text then the call", chunks)
	}
	checkFunctionCall(t, text.String(), calls)
}

func TestAMismatchReachesTheGeminiSDKAsAConflict(t *testing.T) {
	c := geminiClient(t, rootOf(t, writeScript))
	_, err := c.Models.GenerateContent(context.Background(), "gemini-test", []*genai.Content{genai.NewContentFromText("something else", genai.RoleUser)}, geminiConfig)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != http.StatusConflict || !strings.Contains(apiErr.Message, `expected the last message to contain "make a.txt"`) {
		t.Fatalf("a request off the script: %v", err)
	}
}
