package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// SuiteSummary is one suite run in the suites list.
type SuiteSummary struct {
	Suite   string
	Started time.Time
	Runs    int
	Passed  int
	Broken  int
	Models  int
}

// ListSuites returns the most recent suite runs, newest first.
func (s *Store) ListSuites(ctx context.Context, limit int) ([]SuiteSummary, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.suite, min(r.started_at), count(*),
		sum(CASE WHEN v.passed THEN 1 ELSE 0 END), sum(CASE WHEN v.checks_broken > 0 THEN 1 ELSE 0 END), count(DISTINCT r.model_name)
		FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id
		WHERE r.suite != '' GROUP BY r.suite ORDER BY min(r.started_at) DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list suites: %w", err)
	}
	defer rows.Close()
	var out []SuiteSummary
	for rows.Next() {
		var ss SuiteSummary
		var started int64
		var passed, broken sql.NullInt64
		if err := rows.Scan(&ss.Suite, &started, &ss.Runs, &passed, &broken, &ss.Models); err != nil {
			return nil, fmt.Errorf("list suites: %w", err)
		}
		ss.Started, ss.Passed, ss.Broken = time.UnixMilli(started).UTC(), int(passed.Int64), int(broken.Int64)
		out = append(out, ss)
	}
	return out, rows.Err()
}

// Cell is one scenario run of a suite or of a scenario's history.
type Cell struct {
	RunID      string
	Scenario   string
	Repeat     int
	Model      string
	Agent      string
	Status     string
	Started    time.Time
	HasVerdict bool
	Passed     bool
	Broken     bool
	Aborted    string
	Suite      string
	Tags       []string // the scenario's tags, from the receipt
}

const cellQuery = `SELECT r.run_id, r.scenario_id, r.scenario_repeat, r.model_name, r.agent, r.status, r.started_at, r.suite,
	v.run_id IS NOT NULL, coalesce(v.passed, 0), coalesce(v.checks_broken, 0) > 0, coalesce(v.aborted, ''),
	coalesce(json_extract(r.receipt, '$.scenario.tags'), '')
	FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id `

func (s *Store) cells(ctx context.Context, what, where string, args ...any) ([]Cell, error) {
	rows, err := s.db.QueryContext(ctx, cellQuery+where, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []Cell
	for rows.Next() {
		var c Cell
		var started int64
		var tags string
		if err := rows.Scan(&c.RunID, &c.Scenario, &c.Repeat, &c.Model, &c.Agent, &c.Status, &started, &c.Suite, &c.HasVerdict, &c.Passed, &c.Broken, &c.Aborted, &tags); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if tags != "" {
			if err := json.Unmarshal([]byte(tags), &c.Tags); err != nil {
				return nil, fmt.Errorf("%s: tags of run %s: %w", what, c.RunID, err)
			}
		}
		c.Started = time.UnixMilli(started).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

// SuiteCells returns every run of a suite, by scenario, agent, model and
// repeat.
func (s *Store) SuiteCells(ctx context.Context, suite string) ([]Cell, error) {
	return s.cells(ctx, "runs of suite "+suite, `WHERE r.suite = ? ORDER BY r.scenario_id, r.agent, r.model_name, r.scenario_repeat, r.started_at LIMIT 20000`, suite)
}

// ScenarioHistory returns a scenario's most recent runs, oldest first.
func (s *Store) ScenarioHistory(ctx context.Context, scenario string, limit int) ([]Cell, error) {
	if limit <= 0 {
		limit = 200
	}
	cells, err := s.cells(ctx, "history of scenario "+scenario, `WHERE r.scenario_id = ? ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?`, scenario, limit)
	for i, j := 0, len(cells)-1; i < j; i, j = i+1, j-1 {
		cells[i], cells[j] = cells[j], cells[i]
	}
	return cells, err
}
