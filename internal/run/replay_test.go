package run_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

const replayScript = `steps:
  - reply:
      content: Looking first.
      tool_calls:
        - name: list_files
          arguments: {}
        - name: read_file
          arguments: {path: money.go, start_line: 1, end_line: 6}
  - reply:
      tool_calls:
        - name: edit_file
          arguments: {path: money.go, search: "int64(euros * 100)", replace: "int64(euros*100 + 0.5)"}
        - name: write_file
          arguments: {path: NOTES.md, content: "rounding fixed\n"}
        - name: delete_file
          arguments: {path: README.md}
  - reply:
      tool_calls:
        - name: run_command
          arguments: {command: "grep -c 0.5 money.go"}
        - name: run_command
          arguments: {command: "rm -rf /"}
  - reply:
      content: Done.
`

func TestReplayReproducesTranscriptAndDiff(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	s, err := script.Parse("replay-test.yaml", []byte(replayScript))
	if err != nil {
		t.Fatal(err)
	}
	r := &run.Runner{DataDir: t.TempDir()}
	first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "fix rounding", Criteria: []string{"round"}, Model: run.ModelChoice{Script: s},
		Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: []string{"grep"}}})
	if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("%v %+v", err, first.Receipt)
	}
	// The source moves on after the run; the replay still starts from the
	// recorded base.
	os.WriteFile(filepath.Join(src, "money.go"), []byte("package money\n"), 0o644)

	spec, cleanup, err := r.ReplaySpec(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	second, err := r.Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if second.RunID == first.RunID || second.Receipt.Status != first.Receipt.Status {
		t.Fatalf("replay: %+v", second.Receipt)
	}
	for _, name := range []string{bundle.TranscriptFile, bundle.DiffFile} {
		a, _ := os.ReadFile(filepath.Join(first.Dir, name))
		b, _ := os.ReadFile(filepath.Join(second.Dir, name))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs:\n--- recorded\n%s\n--- replayed\n%s", name, a, b)
		}
	}
	if first.Receipt.Source.CommitSHA != second.Receipt.Source.CommitSHA {
		t.Errorf("base commits differ: %s vs %s", first.Receipt.Source.CommitSHA, second.Receipt.Source.CommitSHA)
	}
	sameRequests(t, first.Dir, second.Dir)
}

// sameRequests checks that two runs made the same model requests, byte for
// byte, as their bundles rebuild them.
func sameRequests(t *testing.T, a, b string) {
	t.Helper()
	la, _, err := bundle.ReadExchanges(a, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	lb, _, err := bundle.ReadExchanges(b, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Exchanges) == 0 || len(la.Exchanges) != len(lb.Exchanges) {
		t.Fatalf("%d requests recorded, %d replayed", len(la.Exchanges), len(lb.Exchanges))
	}
	for i := range la.Exchanges {
		ra, err := la.Request(i)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := lb.Request(i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ra, rb) {
			t.Fatalf("request %d differs:\n%s\n---\n%s", i+1, ra, rb)
		}
	}
}

// A long run — 150 calls, each reading a 16 KB file — keeps a bundle that
// grows with its conversation (not its square), and replays offline from
// it, every request byte for byte.
func TestALongRunReplaysByteForByte(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "big.txt"), bytes.Repeat([]byte("0123456789abcde\n"), 1024), 0o644)
	const calls = 150
	var steps strings.Builder
	steps.WriteString("steps:\n")
	for range calls {
		steps.WriteString("  - reply:\n      tool_calls: [{read: big.txt}]\n")
	}
	steps.WriteString("  - reply: {content: done}\n")
	s, err := script.Parse("long.yaml", []byte(steps.String()))
	if err != nil {
		t.Fatal(err)
	}
	b := bounds.Defaults()
	b.MaxToolCalls, b.MaxTurns, b.MaxTokens = calls+10, calls+10, 0
	r := &run.Runner{DataDir: t.TempDir()}
	first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "read it", Model: run.ModelChoice{Script: s}, Bounds: b})
	if err != nil || first.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("%v %+v", err, first.Receipt.Failure)
	}
	var size int64
	for _, name := range []string{bundle.ExchangesFile, bundle.SegmentsFile} {
		info, err := os.Stat(filepath.Join(first.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		size += info.Size()
	}
	if conversation := int64(calls * 16 << 10); size > 2*conversation {
		t.Errorf("the recording is %d bytes for a conversation of about %d", size, conversation)
	}
	spec, cleanup, err := r.ReplaySpec(ctx, first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	spec.Bounds = b
	second, err := r.Run(ctx, spec)
	if err != nil || second.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("replay: %v %+v", err, second.Receipt.Failure)
	}
	sameRequests(t, first.Dir, second.Dir)
}
