package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/proxy"
	"github.com/proctor-dev/proctor/internal/script"
)

// BenchmarkProxy measures what the recording proxy adds to one model call:
// the same streamed chat completion through the official SDK, straight to a
// scripted endpoint and through the proxy in front of it, in the same run.
// The goal is ≤1 ms added per exchange (a live model call takes seconds).
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
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("You are a coding agent."), openai.UserMessage("ping")}}
	call := func(c openai.Client) {
		stream := c.Chat.Completions.NewStreaming(context.Background(), params)
		for stream.Next() {
		}
		if err := stream.Err(); err != nil {
			b.Fatal(err)
		}
	}
	direct := openai.NewClient(option.WithBaseURL(ep.URL+"/"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	proxied := openai.NewClient(option.WithBaseURL(p.URL+"/"), option.WithAPIKey(p.Key), option.WithMaxRetries(0))
	call(direct)
	call(proxied)
	var dt, pt time.Duration
	for range b.N {
		start := time.Now()
		call(direct)
		dt += time.Since(start)
		start = time.Now()
		call(proxied)
		pt += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(dt.Microseconds())/n, "direct-µs/call")
	b.ReportMetric(float64(pt.Microseconds())/n, "proxied-µs/call")
	b.ReportMetric(float64((pt-dt).Microseconds())/n, "added-µs/call")
	b.ReportMetric(float64(pt)/float64(dt), "proxied/direct")
	b.ReportMetric(0, "ns/op")
}
