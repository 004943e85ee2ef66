package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
)

func TestRecoverOrphans(t *testing.T) {
	data := t.TempDir()
	src := "../../testdata/bundles/runs/20261201-093012-k3f9qa"
	mk := func(id, status string, live bool) string {
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
		if live {
			// A working run holds a lock on its events log (here: this
			// test, on its own open file).
			f, err := os.Open(filepath.Join(dir, bundle.EventsFile))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	orphan := mk("orphan", "running", false)
	alive := mk("alive", "running", true)
	done := mk("done", "passed", false)
	// An old bundle's .live file with a dead pid changes nothing.
	os.WriteFile(filepath.Join(alive, ".live"), []byte("999999999\n"), 0o644)
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

// A run is never taken for an orphan while it works, and is not one once
// it has ended.
func TestWorkingRunIsNotOrphaned(t *testing.T) {
	r := newRunner(t)
	var during []bool
	r.OnEvent = func(id string, ev bundle.Event) {
		if ev.Type == "tool.call" {
			during = append(during, bundle.Orphaned(filepath.Join(r.DataDir, "runs", id)))
		}
	}
	res, err := r.Run(context.Background(), demoSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(during) == 0 {
		t.Fatal("no tool calls seen")
	}
	for i, o := range during {
		if o {
			t.Fatalf("tool call %d: the working run was taken for an orphan", i+1)
		}
	}
	if bundle.Orphaned(res.Dir) {
		t.Fatal("the finished run was taken for an orphan")
	}
	if _, err := os.Stat(filepath.Join(res.Dir, ".live")); err == nil {
		t.Fatal("a .live file was written")
	}
}
