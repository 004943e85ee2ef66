package run_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
)

func TestRecoverOrphans(t *testing.T) {
	data := t.TempDir()
	src := "../../testdata/bundles/runs/20261201-093012-k3f9qa"
	mk := func(id, status, live string) string {
		dir := filepath.Join(data, "runs", id)
		os.MkdirAll(dir, 0o755)
		b, _ := bundle.ReadRun(src, bundle.DefaultLimits())
		rc := b.Receipt
		rc.RunID, rc.Status, rc.Stage, rc.EndedAt, rc.Review = id, bundle.Status(status), bundle.StageRunning, nil, nil
		if err := bundle.WriteReceipt(dir, &rc); err != nil {
			t.Fatal(err)
		}
		events, _ := os.ReadFile(filepath.Join(src, bundle.EventsFile))
		os.WriteFile(filepath.Join(dir, bundle.EventsFile), events, 0o644)
		if live != "" {
			os.WriteFile(filepath.Join(dir, ".live"), []byte(live), 0o644)
		}
		return dir
	}
	orphan := mk("orphan", "running", "999999999\n")
	alive := mk("alive", "running", "1\n") // pid 1 always exists
	done := mk("done", "passed", "")
	r := &run.Runner{DataDir: data}
	got, err := r.RecoverOrphans("the server stopped")
	if err != nil || len(got) != 1 || got[0] != orphan {
		t.Fatalf("recovered %v, %v", got, err)
	}
	b, err := bundle.ReadRun(orphan, bundle.DefaultLimits())
	if err != nil || b.Receipt.Status != bundle.StatusInterrupted || b.Receipt.EndedAt == nil {
		t.Fatalf("orphan receipt %+v %v", b, err)
	}
	events, _, _ := bundle.ReadEvents(orphan, bundle.DefaultLimits())
	last := events[len(events)-1]
	if last.Type != "run.interrupted" || !strings.Contains(string(last.Data), "the server stopped") {
		t.Fatalf("last event %+v", last)
	}
	for _, d := range []string{alive, done} {
		b, _ := bundle.ReadRun(d, bundle.DefaultLimits())
		if b.Receipt.Status == bundle.StatusInterrupted {
			t.Fatalf("%s was marked interrupted", d)
		}
	}
}
