package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// liveFile marks a run folder whose run is working, with the pid of the
// process running it.
const liveFile = ".live"

func markLive(dir string) {
	os.WriteFile(filepath.Join(dir, liveFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func clearLive(dir string) { os.Remove(filepath.Join(dir, liveFile)) }

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
	pidText, err := os.ReadFile(filepath.Join(dir, liveFile))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil || pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return false
	}
	// Signal 0 tests whether the process exists.
	return syscall.Kill(pid, 0) != nil
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
	clearLive(dir)
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
