package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// A working run holds an exclusive flock on its events.jsonl from the moment
// the file is created until its final receipt is written. The kernel drops
// the lock when the process ends, however it ends, so a run whose receipt
// says it works but whose log nobody locks was left by a stopped process.
// (Earlier versions wrote a .live file with the pid instead; one file fewer
// per run matters to large suites.)

// lockLive marks f, the run's open events log, as held by a working run.
func lockLive(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return nil
}

// heldByLiveRun reports whether a working run holds dir's events log.
func heldByLiveRun(dir string) bool {
	f, err := os.Open(filepath.Join(dir, bundle.EventsFile))
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// Orphaned reports whether the run in dir says it is working but no live
// process is running it (the process that ran it stopped without finishing).
func Orphaned(dir string) bool {
	data, err := bundle.ReadFile(dir, bundle.ReceiptFile, 4<<20)
	if err != nil {
		return false
	}
	if !strings.Contains(string(data), `"status": "running"`) && !strings.Contains(string(data), `"status": "queued"`) && !strings.Contains(string(data), `"status": "awaiting_approval"`) {
		return false
	}
	return !heldByLiveRun(dir)
}

// MarkInterrupted ends an orphaned run: status interrupted, ended at its
// last event, with a run.interrupted event saying why. Its files are kept.
func MarkInterrupted(dir, reason string, now time.Time) error {
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		return fmt.Errorf("mark %s interrupted: %w", dir, err)
	}
	rc := b.Receipt
	events, _, _ := bundle.ReadEvents(dir, bundle.DefaultLimits())
	end := now.UTC()
	var seq int64 = 1
	if n := len(events); n > 0 {
		end, seq = events[n-1].Time, events[n-1].Seq+1
	}
	if end.Before(rc.StartedAt) {
		end = rc.StartedAt
	}
	if err := bundle.AppendEvent(dir, bundle.Event{Seq: seq, Time: now.UTC(), Type: "run.interrupted"}, map[string]string{"reason": reason}); err != nil {
		return err
	}
	rc.Status, rc.EndedAt = bundle.StatusInterrupted, &end
	if err := bundle.WriteReceipt(dir, &rc); err != nil {
		return err
	}
	return nil
}

// RecoverOrphans marks every orphaned run under the data folder's runs/ as
// interrupted and returns their folders.
func (r *Runner) RecoverOrphans(reason string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(r.DataDir, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(r.DataDir, "runs", e.Name())
		if !e.IsDir() || !Orphaned(dir) {
			continue
		}
		if err := MarkInterrupted(dir, reason, time.Now()); err != nil {
			return out, err
		}
		out = append(out, dir)
	}
	return out, nil
}
