// Package jobs owns the queue of runs launched from the dashboard: a limit
// on how many run at once, the place of each queued run, cancelling a queued
// run and stopping a running one (it ends interrupted, its bundle kept).
package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/proctor-dev/proctor/internal/run"
)

// State is where a launched run is.
type State string

// States of a job.
const (
	Queued    State = "queued"
	Running   State = "running"
	Done      State = "done"
	Cancelled State = "cancelled"
)

// Job is a run launched through the queue.
type Job struct {
	RunID    string
	Title    string
	Suite    string // the suite a scenario run belongs to
	Scenario string // and its scenario, and which repeat of it
	Repeat   int
	State    State
	Place    int // 1-based place in the queue while queued
	Err      error
	Queued   time.Time
	cancel   context.CancelFunc
	finished chan struct{}
	first    chan struct{} // closed when the job is first in the queue
}

// Queue runs specs in the background, at most Workers at a time.
type Queue struct {
	runner *run.Runner
	slots  *semaphore.Weighted // one a running job; waiters are served first in, first out

	mu     sync.Mutex
	jobs   map[string]*Job
	order  []string // queued run ids, first in first out
	ended  []string // ended run ids, oldest first: the latest keepEnded stay known
	closed bool     // Close was called: nothing more starts, what runs is stopped
	wg     sync.WaitGroup
}

// keepEnded is how many ended jobs the queue still answers for (a run
// cancelled before it began has no bundle; its page says so from here),
// so that a server that runs for months does not keep every job it ran.
const keepEnded = 1024

// New returns a queue that runs with r, workers at a time, in the order
// runs were submitted, until Close.
func New(r *run.Runner, workers int) *Queue {
	return &Queue{runner: r, slots: semaphore.NewWeighted(int64(max(workers, 1))), jobs: map[string]*Job{}}
}

// Close stops the queue, as a server that stops does: the runs waiting
// are not started (a launcher that remembers them launches them again
// next time: they are not dropped), and the running ones are stopped (they
// end interrupted, their bundles kept). Wait waits for them to end.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, j := range q.jobs {
		j.cancel()
	}
}

// ErrNotFound is returned for a run the queue does not know.
var ErrNotFound = errors.New("no such job")

// ErrEnded is returned when stopping a run that has already ended.
var ErrEnded = errors.New("the run has ended")

// Submit queues spec and returns its run id at once.
func (q *Queue) Submit(spec run.Spec, title string) string {
	if spec.RunID == "" {
		spec.RunID = run.NewRunID(time.Now())
	}
	ctx, cancel := context.WithCancel(context.Background()) // the job's own: Stop and Close end it
	j := &Job{RunID: spec.RunID, Title: title, State: Queued, Queued: time.Now(), cancel: cancel, finished: make(chan struct{}), first: make(chan struct{})}
	if spec.Scenario != nil {
		j.Suite, j.Scenario, j.Repeat = spec.Scenario.Suite, spec.Scenario.ID, spec.Scenario.Repeat
	}
	q.mu.Lock()
	q.jobs[j.RunID] = j
	q.order = append(q.order, j.RunID)
	q.renumber()
	q.mu.Unlock()
	q.wg.Go(func() {
		defer close(j.finished)
		defer cancel()
		// Wait for this job's turn: first in the queue (so slots go in the
		// order jobs were submitted), then a free slot.
		var err error
		select {
		case <-j.first:
			err = q.slots.Acquire(ctx, 1)
		case <-ctx.Done():
			err = ctx.Err()
		}
		q.mu.Lock()
		if err != nil || j.State != Queued || q.closed {
			stopped := j.State == Cancelled // by Stop; a server that stops keeps its queue
			j.State = Cancelled
			q.dequeue(j.RunID)
			q.forget(j.RunID)
			q.mu.Unlock()
			if err == nil {
				q.slots.Release(1)
			}
			if stopped && spec.Dropped != nil {
				spec.Dropped()
			}
			return
		}
		j.State = Running
		q.dequeue(j.RunID)
		q.mu.Unlock()
		_, err = q.runner.Run(ctx, spec)
		q.slots.Release(1)
		q.finish(j, Done, err)
	})
	return j.RunID
}

func (q *Queue) finish(j *Job, s State, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.State != Cancelled {
		j.State = s
	}
	j.Err = err
	q.dequeue(j.RunID)
	q.forget(j.RunID)
}

// forget notes that the job id has ended, and drops the oldest ended job
// past keepEnded; q.mu is held.
func (q *Queue) forget(id string) {
	q.ended = append(q.ended, id)
	if len(q.ended) > keepEnded {
		delete(q.jobs, q.ended[0])
		q.ended = q.ended[1:]
	}
}

// dequeue removes id from the queue order; q.mu is held.
func (q *Queue) dequeue(id string) {
	for i, o := range q.order {
		if o == id {
			q.order = append(q.order[:i], q.order[i+1:]...)
			break
		}
	}
	q.renumber()
}

// renumber gives each queued job its place and tells the first that it
// is first; q.mu is held.
func (q *Queue) renumber() {
	for i, id := range q.order {
		j := q.jobs[id]
		j.Place = i + 1
		if i == 0 {
			select {
			case <-j.first:
			default:
				close(j.first)
			}
		}
	}
}

// Queued returns copies of the jobs waiting for their turn, first first.
func (q *Queue) Queued() []Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Job, 0, len(q.order))
	for _, id := range q.order {
		if j := q.jobs[id]; j.State == Queued {
			out = append(out, *j)
		}
	}
	return out
}

// Get returns a copy of the job for a run id.
func (q *Queue) Get(id string) (Job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// Stop cancels a queued run, or stops a running one (it ends interrupted).
func (q *Queue) Stop(id string) error {
	q.mu.Lock()
	j, ok := q.jobs[id]
	if !ok {
		q.mu.Unlock()
		return fmt.Errorf("stop %s: %w", id, ErrNotFound)
	}
	switch j.State {
	case Done, Cancelled:
		q.mu.Unlock()
		return fmt.Errorf("stop %s: %w", id, ErrEnded)
	case Queued:
		j.State = Cancelled
		q.dequeue(id)
	}
	q.mu.Unlock()
	j.cancel()
	return nil
}

// Wait blocks until every job has ended, or ctx ends.
func (q *Queue) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Finished returns a channel closed when the run's job has ended.
func (q *Queue) Finished(id string) (<-chan struct{}, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return nil, false
	}
	return j.finished, true
}
