package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
)

// A working run holds an exclusive flock on its events.jsonl from the moment
// the file is created until its final receipt is written. The kernel drops
// the lock when the process ends, however it ends, so a run whose receipt
// says it works but whose log nobody locks was left by a stopped process.

// LockLive marks f, the run's open events log, as held by a working run.
func LockLive(f *os.File) error {
	return flock.TryFile(f)
}

// heldByLiveRun reports whether a working run holds dir's events log.
func heldByLiveRun(dir string) bool {
	return flock.Held(filepath.Join(dir, EventsFile))
}

// Orphaned reports whether the run in dir says it is working but no live
// process is running it (the process that ran it stopped without finishing).
func Orphaned(dir string) bool {
	data, err := ReadFile(dir, ReceiptFile, 4<<20)
	if err != nil {
		return false
	}
	var rc struct {
		Status Status `json:"status"`
	}
	if json.Unmarshal(data, &rc) != nil {
		return false
	}
	switch rc.Status {
	case StatusRunning, StatusQueued, StatusAwaitingApproval:
		return !heldByLiveRun(dir)
	}
	return false
}

// MarkInterrupted ends an orphaned run: status interrupted, ended at its
// last event, with a run.interrupted event saying why. Its files are kept.
func MarkInterrupted(dir, reason string, now time.Time) error {
	b, err := ReadRun(dir, DefaultLimits())
	if err != nil {
		return fmt.Errorf("mark %s interrupted: %w", dir, err)
	}
	rc := b.Receipt
	events, _, _ := ReadEvents(dir, DefaultLimits())
	end := now.UTC()
	var seq int64 = 1
	if n := len(events); n > 0 {
		end, seq = events[n-1].Time, events[n-1].Seq+1
	}
	if end.Before(rc.StartedAt) {
		end = rc.StartedAt
	}
	if err := AppendEvent(dir, seq, now, RunInterruptedEvent{Reason: reason}); err != nil {
		return err
	}
	rc.Status, rc.EndedAt = StatusInterrupted, &end
	if err := WriteReceipt(dir, &rc); err != nil {
		return err
	}
	return nil
}
