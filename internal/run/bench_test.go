package run_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// BenchmarkScriptedConversation runs a 200-step scripted conversation (one
// tool call a step: reads, searches, lists, writes) and reports the harness
// time per turn beyond the model endpoint's own time. The endpoint's time is
// measured in the same run by sending the recorded requests, byte for byte,
// to a fresh endpoint serving the same script over HTTP; the harness time is
// the rest of the run (setup, the loop, tools, recording, the final diff)
// divided by the turns. Target: ≤ 1 ms of harness per turn.
func BenchmarkScriptedConversation(b *testing.B) {
	const steps = 200
	var sb strings.Builder
	sb.WriteString("steps:\n")
	for i := range steps - 1 {
		var call string
		switch i % 4 {
		case 0:
			call = `{name: read_file, arguments: {path: money.go}}`
		case 1:
			call = `{name: search, arguments: {pattern: "func "}}`
		case 2:
			call = fmt.Sprintf(`{name: write_file, arguments: {path: "notes/n%d.md", content: "note %d\n"}}`, i, i)
		case 3:
			call = `{name: list_files, arguments: {}}`
		}
		fmt.Fprintf(&sb, "  - reply: {content: \"step %d\", tool_calls: [%s], usage: {prompt_tokens: 100, completion_tokens: 10}}\n", i, call)
	}
	sb.WriteString("  - reply: {content: done}\n")
	s, err := script.Parse("bench.yaml", []byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	bnd := bounds.Defaults()
	bnd.MaxTurns, bnd.MaxToolCalls = steps+1, steps+1
	var harness, modelTime time.Duration
	turns := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		src := filepath.Join(b.TempDir(), "invoice")
		demo.WriteFixture(src)
		r := &run.Runner{DataDir: b.TempDir()}
		b.StartTimer()
		start := time.Now()
		res, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: "bench", Model: run.ModelChoice{Script: s}, Bounds: bnd})
		total := time.Since(start)
		b.StopTimer()
		if err != nil || res.Receipt.Usage.ModelCalls != steps {
			b.Fatalf("%v %+v", err, res.Receipt)
		}
		inModel := endpointTime(b, s, res.Dir)
		modelTime += inModel
		harness += total - inModel
		turns += steps
		b.StartTimer()
	}
	perTurn := harness / time.Duration(turns)
	modelPerTurn := modelTime / time.Duration(turns)
	b.ReportMetric(float64(perTurn.Microseconds())/1000, "harness-ms/turn")
	b.ReportMetric(float64(modelPerTurn.Microseconds())/1000, "model-ms/turn")
	b.ReportMetric(float64(perTurn)/float64(modelPerTurn), "harness/model")
	if perTurn > time.Millisecond {
		b.Logf("above target: %s of harness a turn, target 1ms", perTurn)
	}
}

// endpointTime replays a run's recorded requests against a fresh endpoint
// serving the same script and returns the time the endpoint took, round
// trips included.
func endpointTime(b *testing.B, s *script.Script, runDir string) time.Duration {
	b.Helper()
	xs, _, err := bundle.ReadExchanges(runDir, bundle.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	ep, err := script.Start(s, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ep.Close()
	client := &http.Client{}
	var total time.Duration
	for i := range xs.Exchanges {
		req, err := xs.Request(i)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		resp, err := client.Post(ep.URL+"/chat/completions", "application/json", bytes.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		total += time.Since(start)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("replayed request %d: status %d", xs.Exchanges[i].Seq, resp.StatusCode)
		}
	}
	return total
}
