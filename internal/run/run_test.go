package run_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

func demoSpec(t *testing.T) run.Spec {
	t.Helper()
	src := filepath.Join(t.TempDir(), "invoice")
	if err := demo.WriteFixture(src); err != nil {
		t.Fatal(err)
	}
	s, err := demo.Script()
	if err != nil {
		t.Fatal(err)
	}
	return run.Spec{SourceDir: src, Task: demo.Task, Criteria: demo.Criteria, Model: run.ModelChoice{Script: s},
		Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: demo.AllowedCommands}}
}

func newRunner(t *testing.T) *run.Runner {
	return &run.Runner{DataDir: t.TempDir(), Environ: os.Environ()}
}

func TestScriptedRunEndToEnd(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "streamed"}[stream], func(t *testing.T) {
			spec := demoSpec(t)
			spec.Model.Stream = stream
			var progress strings.Builder
			r := newRunner(t)
			r.Progress = &progress
			res, err := r.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			rc := res.Receipt
			if rc.Status != bundle.StatusAwaitingReview || rc.Stage != bundle.StageAwaitingReview || res.ExitCode() != 0 {
				t.Fatalf("status %s stage %s failure %+v\n%s", rc.Status, rc.Stage, rc.Failure, progress.String())
			}
			if strings.Join(rc.Changed, ",") != "money.go,money_test.go" || rc.Usage.ModelCalls != 5 || rc.Usage.TotalTokens != 5972 {
				t.Fatalf("changed %v usage %+v", rc.Changed, rc.Usage)
			}
			// The bundle reads back as valid, with every file.
			b, err := bundle.ReadRun(res.Dir, bundle.DefaultLimits())
			if err != nil || len(b.Problems) > 0 {
				t.Fatalf("bundle: %v %v", err, b.Problems)
			}
			diff, _ := os.ReadFile(filepath.Join(res.Dir, bundle.DiffFile))
			if !strings.Contains(string(diff), "+\treturn int64(math.Round(euros * 100))") {
				t.Fatalf("diff:\n%s", diff)
			}
			events, probs, _ := bundle.ReadEvents(res.Dir, bundle.DefaultLimits())
			counts := map[string]int{}
			for _, e := range events {
				counts[e.Type]++
			}
			if counts["tool.call"] != 6 || counts["model.request"] != 5 || counts["approval.decided"] != 1 || len(probs) > 0 {
				t.Fatalf("event counts %v, problems %v", counts, probs)
			}
			log, _, _ := bundle.ReadExchanges(res.Dir, bundle.DefaultLimits())
			xs := log.Exchanges
			if len(xs) != 5 {
				t.Fatalf("%d exchanges", len(xs))
			}
			for _, x := range xs {
				if x.Attempt != 1 {
					t.Fatalf("exchange %d says attempt %d, want 1", x.Seq, x.Attempt)
				}
			}
			tr := bundle.ParseTranscript(b.Transcript)
			if len(tr) != 13 || tr[0].Role != "system" || tr[1].Role != "user" || tr[len(tr)-1].Role != "assistant" {
				t.Fatalf("transcript sections: %d\n%s", len(tr), b.Transcript)
			}
			for _, want := range []string{"tool list_files", "tool edit_file", "tool run_command", "approved by policy", "bundle: " + res.Dir, "status: awaiting review"} {
				if !strings.Contains(progress.String(), want) {
					t.Errorf("progress lacks %q:\n%s", want, progress.String())
				}
			}
			// The source was not touched.
			if data, _ := os.ReadFile(filepath.Join(spec.SourceDir, "money.go")); strings.Contains(string(data), "math.Round") {
				t.Fatal("the source changed")
			}
		})
	}
}

func TestScriptMismatchFailsInScenarioDomainAndKeepsTheBundle(t *testing.T) {
	spec := demoSpec(t)
	spec.Task = "Add a currency field." // the script expects "rounding"
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Receipt.Failure
	if res.Receipt.Status != bundle.StatusError || f == nil || f.Domain != bundle.DomainScenario || f.Code != "script_mismatch" || !strings.Contains(f.Message, "builtin:demo.yaml:6: step 1") {
		t.Fatalf("receipt = %+v, failure %+v", res.Receipt.Status, f)
	}
	if res.ExitCode() != 1 {
		t.Fatalf("exit %d", res.ExitCode())
	}
	for _, name := range []string{bundle.ReceiptFile, bundle.EventsFile, bundle.ExchangesFile, bundle.TranscriptFile} {
		if _, err := os.Stat(filepath.Join(res.Dir, name)); err != nil {
			t.Errorf("%s missing: %v", name, err)
		}
	}
}

func TestDeniedCommandIsFedBack(t *testing.T) {
	spec := demoSpec(t)
	spec.Approver = nil // no approver: fail closed
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(res.Dir, bundle.TranscriptFile))
	if !strings.Contains(string(data), "error: run_command was denied by none: no approver is configured") {
		t.Fatalf("transcript:\n%s", data)
	}
}

func TestBoundsEndTheRun(t *testing.T) {
	spec := demoSpec(t)
	spec.Bounds.MaxTurns = 2
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Receipt.Failure; res.Receipt.Status != bundle.StatusFailed || f == nil || f.Code != "max_turns" || f.Domain != bundle.DomainAgent {
		t.Fatalf("%s %+v", res.Receipt.Status, f)
	}
	if res.Receipt.Bounds.MaxTurns != 2 {
		t.Fatal("the bounds in force are not on the receipt")
	}

	spec = demoSpec(t)
	spec.Bounds.MaxWorkspaceBytes = 100
	res, err = newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Receipt.Failure; res.Receipt.Status != bundle.StatusError || f == nil || f.Domain != bundle.DomainEnvironment || f.Code != "workspace_bound" {
		t.Fatalf("%s %+v", res.Receipt.Status, f)
	}
}

func TestSetupErrors(t *testing.T) {
	spec := demoSpec(t)
	spec.SourceDir = "/does/not/exist"
	_, err := newRunner(t).Run(context.Background(), spec)
	var se *run.SetupError
	if err == nil || !strings.Contains(err.Error(), "/does/not/exist") {
		t.Fatalf("err = %v", err)
	}
	if ok := errors.As(err, &se); !ok {
		t.Fatalf("%T is not a SetupError", err)
	}
}

func TestInterruptKeepsTheBundle(t *testing.T) {
	spec := demoSpec(t)
	// A script whose second reply runs a long command; the run is
	// interrupted while it runs.
	s, err := script.Parse("slow.yaml", []byte(`steps:
  - reply:
      tool_calls:
        - name: run_command
          arguments: {command: "sleep 30"}
  - reply: {content: done}
`))
	if err != nil {
		t.Fatal(err)
	}
	spec.Model.Script = s
	spec.Approver = agent.Policy{Allow: []string{"sleep"}}
	ctx, cancel := context.WithCancel(context.Background())
	r := newRunner(t)
	r.OnEvent = func(_ string, ev bundle.Event) {
		if ev.Type == "tool.call" {
			go func() { time.Sleep(200 * time.Millisecond); cancel() }()
		}
	}
	start := time.Now()
	res, err := r.Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatal("the interrupt did not stop the command")
	}
	if res.Receipt.Status != bundle.StatusInterrupted || res.ExitCode() != 130 || res.Receipt.EndedAt == nil {
		t.Fatalf("receipt %+v", res.Receipt)
	}
	b, err := bundle.ReadRun(res.Dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Transcript, "run_command") {
		t.Fatalf("transcript lost what happened:\n%s", b.Transcript)
	}
}
