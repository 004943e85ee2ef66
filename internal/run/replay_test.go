package run_test

import (
	"context"
	"os"
	"path/filepath"
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
}
