package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// slowSpec is a run that waits in a command until stopped.
func slowSpec(t *testing.T) run.Spec {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	demo.WriteFixture(src)
	s, err := script.Parse("slow.yaml", []byte("steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: sleep 30}}]}\n  - reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return run.Spec{SourceDir: src, Task: "wait", Model: run.ModelChoice{Script: s}, Bounds: bounds.Defaults(), Approver: alwaysYes{}}
}

type alwaysYes struct{}

func (alwaysYes) Approve(context.Context, agent.ApprovalRequest) (agent.Decision, error) {
	return agent.Decision{Approved: true, By: "test"}, nil
}

func TestQueueLimitsStopsAndCancels(t *testing.T) {
	r := &run.Runner{DataDir: t.TempDir()}
	q := jobs.New(r, 1)
	defer q.Close()
	first := q.Submit(slowSpec(t), "first")
	second := q.Submit(slowSpec(t), "second")
	waitState(t, q, first, jobs.Running)
	if j, _ := q.Get(second); j.State != jobs.Queued || j.Place != 1 {
		t.Fatalf("second: %+v", j)
	}
	// Cancel the queued one; stop the running one.
	if err := q.Stop(second); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(first); err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Get(second); j.State != jobs.Cancelled {
		t.Fatalf("second: %+v", j)
	}
	b, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", first), bundle.DefaultLimits())
	if err != nil || b.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("first: %v %+v", err, b)
	}
	if err := q.Stop(first); !errors.Is(err, jobs.ErrEnded) {
		t.Fatalf("stop an ended run: %v", err)
	}
	if err := q.Stop("nope"); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("stop unknown: %v", err)
	}
}

// Close is a server stopping: the running run ends interrupted, the one
// waiting is not started and not dropped (its launcher launches it again
// next time), and nothing submitted after it starts.
func TestCloseStopsTheRunningAndKeepsTheWaiting(t *testing.T) {
	r := &run.Runner{DataDir: t.TempDir()}
	q := jobs.New(r, 1)
	dropped := 0
	first := q.Submit(slowSpec(t), "first")
	waiting := slowSpec(t)
	waiting.Dropped = func() { dropped++ }
	second := q.Submit(waiting, "second")
	waitState(t, q, first, jobs.Running)
	q.Close()
	late := q.Submit(waiting, "late")
	if err := q.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{second, late} {
		if j, _ := q.Get(id); j.State != jobs.Cancelled {
			t.Errorf("%s: %+v", id, j)
		}
	}
	if dropped != 0 {
		t.Errorf("a waiting run was dropped %d times: a stopping server keeps its queue", dropped)
	}
	b, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", first), bundle.DefaultLimits())
	if err != nil || b.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("first: %v %+v", err, b)
	}
}

func waitState(t *testing.T, q *jobs.Queue, id string, s jobs.State) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%s becoming %s", id, s), func() bool {
		j, _ := q.Get(id)
		return j.State == s
	})
}

// A server that runs for months does not keep every job it ran: the latest
// ended jobs stay known (a run cancelled before it began has no bundle, and
// its page says so from the queue), older ones are forgotten.
func TestEndedJobsAreForgottenPastTheLatest(t *testing.T) {
	q := jobs.New(&run.Runner{DataDir: t.TempDir()}, 1)
	defer q.Close()
	busy := q.Submit(slowSpec(t), "busy")
	testutil.Eventually(t, 10*time.Second, "the busy run to start", func() bool {
		j, _ := q.Get(busy)
		return j.State == jobs.Running
	})
	var ids []string
	for i := range 1100 {
		id := q.Submit(run.Spec{RunID: fmt.Sprintf("20261206-000000-q%05d", i)}, "queued")
		ids = append(ids, id)
		fin, _ := q.Finished(id)
		if err := q.Stop(id); err != nil {
			t.Fatal(err)
		}
		<-fin // ended in order
	}
	if _, ok := q.Get(ids[0]); ok {
		t.Error("the oldest ended job is still kept")
	}
	if j, ok := q.Get(ids[len(ids)-1]); !ok || j.State != jobs.Cancelled {
		t.Errorf("the latest ended job: %+v %v", j, ok)
	}
	q.Stop(busy)
	q.Wait(context.Background())
}

// Slots go in the order runs were submitted, whatever the order their
// goroutines happen to start in; a run cancelled while it waits gives up
// its place, not a slot.
func TestRunsStartInTheOrderSubmitted(t *testing.T) {
	r := &run.Runner{DataDir: t.TempDir()}
	q := jobs.New(r, 1)
	defer q.Close()
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = q.Submit(slowSpec(t), fmt.Sprint("run ", i))
	}
	waitState(t, q, ids[0], jobs.Running)
	if err := q.Stop(ids[2]); err != nil { // cancelled while it waits
		t.Fatal(err)
	}
	for _, next := range []int{1, 3, 4} {
		for i, j := range q.Queued() {
			if j.Place != i+1 {
				t.Fatalf("place of %s: %d, want %d", j.Title, j.Place, i+1)
			}
		}
		if got := q.Queued()[0].RunID; got != ids[next] {
			t.Fatalf("first in the queue: %s, want %s", got, ids[next])
		}
		running := runningOne(t, q, ids)
		if err := q.Stop(running); err != nil {
			t.Fatal(err)
		}
		waitState(t, q, ids[next], jobs.Running)
	}
	if err := q.Stop(ids[4]); err != nil {
		t.Fatal(err)
	}
	if err := q.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Get(ids[2]); j.State != jobs.Cancelled {
		t.Fatalf("the cancelled run: %+v", j)
	}
}

// runningOne returns the one run of ids that is running.
func runningOne(t *testing.T, q *jobs.Queue, ids []string) string {
	t.Helper()
	var running []string
	for _, id := range ids {
		if j, _ := q.Get(id); j.State == jobs.Running {
			running = append(running, id)
		}
	}
	if len(running) != 1 {
		t.Fatalf("running: %v, want one", running)
	}
	return running[0]
}
