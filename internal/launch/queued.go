package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// queuedRecord is a launched run that has not started yet, kept on disk so
// that a restart of the server launches it again.
type queuedRecord struct {
	RunID    string          `json:"run_id"`
	Kind     string          `json:"kind"` // demo, task or scenario
	Values   Task            `json:"values,omitempty"`
	Scenario *queuedScenario `json:"scenario,omitempty"`
	Queued   time.Time       `json:"queued"`
}

// queuedScenario is a run of a suite launched from the dashboard.
type queuedScenario struct {
	Dir    string `json:"dir"` // the scenario folder, under a scenario root
	Repeat int    `json:"repeat"`
	Suite  string `json:"suite"`
	Model  string `json:"model,omitempty"` // a profile instead of the scenario's own model
	Agent  string `json:"agent,omitempty"` // an agent instead of the scenario's own
}

func (l *Launcher) queueDir() string {
	if l.Runner == nil {
		return ""
	}
	return filepath.Join(l.Runner.DataDir, "queue")
}

// remember records a queued run and returns the hook that forgets it once
// the run has started.
func (l *Launcher) remember(rec queuedRecord) func() {
	dir := l.queueDir()
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, rec.RunID+".json")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		rec.Queued = time.Now().UTC()
		if err := bundle.WriteJSON(path, rec); err != nil {
			l.log().Warn("remember a queued run", "run", rec.RunID, "err", err)
		}
	}
	return func() { os.Remove(path) }
}

// Resume launches again the runs that were queued when the server
// stopped, in the order they were queued. It returns how many.
func (l *Launcher) Resume() (int, error) {
	dir := l.queueDir()
	if dir == "" || l.Queue == nil {
		return 0, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("read the queue %s: %w", dir, err)
	}
	n := 0
	for _, e := range entries { // ReadDir sorts by name, and run ids sort by time
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var rec queuedRecord
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err != nil || !bundle.ValidID(rec.RunID) {
			l.log().Warn("skip an unreadable queued run", "file", path, "err", err)
			continue
		}
		if _, err := os.Stat(filepath.Join(l.Runner.DataDir, "runs", rec.RunID, bundle.ReceiptFile)); err == nil {
			os.Remove(path) // it had started; recovery marks it interrupted
			continue
		}
		switch rec.Kind {
		case "demo":
			err = l.Demo(rec.RunID)
		case "scenario":
			err = l.resumeScenario(rec)
		default:
			_, err = l.LaunchAs(rec.RunID, rec.Values)
		}
		if err != nil {
			l.log().Warn("cannot launch a queued run again", "run", rec.RunID, "err", err)
			os.Remove(path)
			continue
		}
		n++
	}
	return n, nil
}
