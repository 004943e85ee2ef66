// Package approval owns approval requests that wait for a person: a board
// of pending requests, each with a number the board gives it, answered once
// from elsewhere (the dashboard), or denied when no answer comes in time.
// The model's own tool-call id is shown, never used to address a request:
// it is the model's text, and may hold anything.
package approval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
)

// Request is a gated tool call waiting for a decision.
type Request struct {
	// ID is the board's own number for the request, unique for the
	// board's life; pages and the API address a request by it.
	ID     int64
	RunID  string
	CallID string
	Tool   string
	Args   string
	Asked  time.Time
	answer chan agent.Decision
}

// Command is the command of a run_command request.
func (r Request) Command() string {
	return agent.ApprovalRequest{Tool: r.Tool, Args: r.Args}.Command()
}

// Board holds the pending requests of every run.
type Board struct {
	timeout time.Duration
	mu      sync.Mutex
	last    int64              // the ID given to the latest request
	pending map[int64]*Request // by ID
	notify  func(runID string)
}

// NewBoard returns a board that denies a request nobody answers within
// timeout. notify, if set, is called when a request arrives.
func NewBoard(timeout time.Duration, notify func(runID string)) *Board {
	return &Board{timeout: timeout, pending: map[int64]*Request{}, notify: notify}
}

// ErrNotPending is returned when a decision names no waiting request (it was
// answered already, or timed out).
var ErrNotPending = errors.New("no such request is waiting")

// For returns the approver of one run: each gated call waits on the board.
func (b *Board) For(runID string) agent.Approver { return runApprover{b: b, runID: runID} }

type runApprover struct {
	b     *Board
	runID string
}

// Waits marks approvers that wait for a person.
func (runApprover) Waits() bool { return true }

func (a runApprover) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	r := &Request{RunID: a.runID, CallID: req.CallID, Tool: req.Tool, Args: req.Args, Asked: time.Now(), answer: make(chan agent.Decision, 1)}
	a.b.mu.Lock()
	a.b.last++
	r.ID = a.b.last
	a.b.pending[r.ID] = r
	a.b.mu.Unlock()
	defer func() {
		a.b.mu.Lock()
		delete(a.b.pending, r.ID)
		a.b.mu.Unlock()
	}()
	if a.b.notify != nil {
		a.b.notify(a.runID)
	}
	timer := time.NewTimer(a.b.timeout)
	defer timer.Stop()
	select {
	case d := <-r.answer:
		return d, nil
	case <-timer.C:
		return agent.Decision{By: "timeout", Reason: fmt.Sprintf("no decision within %s (--approval-timeout): denied", a.b.timeout)}, nil
	case <-ctx.Done():
		return agent.Decision{}, ctx.Err()
	}
}

// Pending lists the waiting requests of a run, oldest first.
func (b *Board) Pending(runID string) []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Request
	for _, r := range b.pending {
		if r.RunID == runID {
			out = append(out, *r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Decide answers the waiting request number id of a run, once. A request of
// another run is not pending for this one.
func (b *Board) Decide(runID string, id int64, d agent.Decision) error {
	b.mu.Lock()
	r, ok := b.pending[id]
	if ok && r.RunID == runID {
		delete(b.pending, id)
	}
	b.mu.Unlock()
	if !ok || r.RunID != runID {
		return fmt.Errorf("decide request %d of run %s: %w", id, runID, ErrNotPending)
	}
	r.answer <- d
	return nil
}
