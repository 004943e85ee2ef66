package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/web"
)

// queuedRecord is a launched run that has not started yet, kept on disk so
// that a restart of the server launches it again.
type queuedRecord struct {
	RunID    string           `json:"run_id"`
	Kind     string           `json:"kind"` // demo, task or scenario
	Values   web.LaunchValues `json:"values,omitempty"`
	Scenario *queuedScenario  `json:"scenario,omitempty"`
	Queued   time.Time        `json:"queued"`
}

// queuedScenario is a run of a suite launched from the dashboard.
type queuedScenario struct {
	Dir    string `json:"dir"` // the scenario folder, under a scenario root
	Repeat int    `json:"repeat"`
	Suite  string `json:"suite"`
	Model  string `json:"model,omitempty"` // a profile instead of the scenario's own model
}

func (s *Server) queueDir() string {
	if s.cfg.Runner == nil {
		return ""
	}
	return filepath.Join(s.cfg.Runner.DataDir, "queue")
}

// remember records a queued run and returns the hook that forgets it once
// the run has started.
func (s *Server) remember(rec queuedRecord) func() {
	dir := s.queueDir()
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, rec.RunID+".json")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		rec.Queued = time.Now().UTC()
		if err := bundle.WriteJSON(path, rec); err != nil {
			s.log.Warn("remember a queued run", "run", rec.RunID, "err", err)
		}
	}
	return func() { os.Remove(path) }
}

// ResumeQueued launches again the runs that were queued when the server
// stopped, in the order they were queued. It returns how many.
func (s *Server) ResumeQueued() (int, error) {
	dir := s.queueDir()
	if dir == "" || s.cfg.Queue == nil {
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
			s.log.Warn("skip an unreadable queued run", "file", path, "err", err)
			continue
		}
		if _, err := os.Stat(filepath.Join(s.cfg.Runner.DataDir, "runs", rec.RunID, bundle.ReceiptFile)); err == nil {
			os.Remove(path) // it had started; recovery marks it interrupted
			continue
		}
		switch rec.Kind {
		case "demo":
			err = s.launchDemo(rec.RunID)
		case "scenario":
			if rec.Scenario == nil || !bundle.ValidID(rec.Scenario.Suite) || !s.underScenarioRoot(rec.Scenario.Dir) {
				err = errors.New("not a scenario of this server's scenario roots")
				break
			}
			s.cacheMu.Lock()
			s.started[rec.Scenario.Suite] = true
			s.cacheMu.Unlock()
			err = s.launchScenario(rec)
		default:
			if _, errs := s.launchAs(rec.RunID, rec.Values); len(errs) > 0 {
				err = fmt.Errorf("%v", errs)
			}
		}
		if err != nil {
			s.log.Warn("cannot launch a queued run again", "run", rec.RunID, "err", err)
			os.Remove(path)
			continue
		}
		n++
	}
	return n, nil
}

// underScenarioRoot reports whether dir is a folder inside one of the
// server's scenario roots (a queue file names it; it is not trusted).
func (s *Server) underScenarioRoot(dir string) bool {
	for _, root := range s.cfg.ScenarioRoots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(abs, dir); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}
