package proxy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/proxy"
	"github.com/proctor-dev/proctor/internal/script"
)

// BenchmarkProxy measures what the recording proxy adds to one model call,
// for each API it serves: the same streamed call through the API's
// official SDK, straight to a scripted endpoint and through the proxy in
// front of it, in the same run. The goal is ≤1 ms added per exchange (a
// live model call takes seconds).
func BenchmarkProxy(b *testing.B) {
	s, err := script.Parse("bench.yaml", []byte("model: m\nanytime:\n  - expect: {last_contains: ping}\n    reply: {content: pong, tool_calls: [{id: c1, name: read_file, arguments: {path: a.txt}}]}\nsteps:\n  - reply: {content: never}\n"))
	if err != nil {
		b.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close()
	p, err := proxy.Start(proxy.Config{Upstream: model.Endpoint{BaseURL: ep.URL, Model: "m"}, Record: func(model.Exchange, *model.Response) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	// Each API's call, given the base URL (ending in /v1) and key.
	calls := []struct {
		api  string
		call func(base, key string) func() error
	}{
		{model.APIChat, func(base, key string) func() error {
			c := openai.NewClient(option.WithBaseURL(base+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
			params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a coding agent."), openai.UserMessage("ping")}}
			return func() error {
				stream := c.Chat.Completions.NewStreaming(ctx, params)
				for stream.Next() {
				}
				return stream.Err()
			}
		}},
		{model.APIResponses, func(base, key string) func() error {
			c := openai.NewClient(option.WithBaseURL(base+"/"), option.WithAPIKey(key), option.WithMaxRetries(0))
			params := responses.ResponseNewParams{Model: "m", Instructions: openai.String("You are a coding agent."), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("ping")}}
			return func() error {
				stream := c.Responses.NewStreaming(ctx, params)
				for stream.Next() {
				}
				return stream.Err()
			}
		}},
		{model.APIMessages, func(base, key string) func() error {
			c := anthropic.NewClient(aoption.WithBaseURL(strings.TrimSuffix(base, "/v1")+"/"), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
			params := anthropic.MessageNewParams{Model: "m", MaxTokens: 100, System: []anthropic.TextBlockParam{{Text: "You are a coding agent."}},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("ping"))}}
			return func() error {
				stream := c.Messages.NewStreaming(ctx, params)
				for stream.Next() {
				}
				return stream.Err()
			}
		}},
		{model.APIGemini, func(base, key string) func() error {
			c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: strings.TrimSuffix(base, "/v1") + "/"}})
			if err != nil {
				return func() error { return err }
			}
			contents := []*genai.Content{genai.NewContentFromText("ping", genai.RoleUser)}
			return func() error {
				for _, err := range c.Models.GenerateContentStream(ctx, "m", contents, nil) {
					if err != nil {
						return err
					}
				}
				return nil
			}
		}},
	}
	for _, tc := range calls {
		b.Run(tc.api, func(b *testing.B) {
			direct, proxied := tc.call(ep.URL, "none"), tc.call(p.URL, p.Key)
			for _, f := range []func() error{direct, proxied} {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			var dt, pt time.Duration
			for range b.N {
				start := time.Now()
				if err := direct(); err != nil {
					b.Fatal(err)
				}
				dt += time.Since(start)
				start = time.Now()
				if err := proxied(); err != nil {
					b.Fatal(err)
				}
				pt += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(dt.Microseconds())/n, "direct-µs/call")
			b.ReportMetric(float64(pt.Microseconds())/n, "proxied-µs/call")
			b.ReportMetric(float64((pt-dt).Microseconds())/n, "added-µs/call")
			b.ReportMetric(float64(pt)/float64(dt), "proxied/direct")
			b.ReportMetric(0, "ns/op")
		})
	}
}
