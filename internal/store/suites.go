package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// SuiteSummary is one suite run in the suites list.
type SuiteSummary struct {
	Suite   string
	Started time.Time
	Runs    int
	Passed  int
	Broken  int
	Models  int
	CostUSD *float64 // nil when a run has no price
}

// ListSuites returns the most recent suite runs, newest first.
func (s *Store) ListSuites(ctx context.Context, limit int) ([]SuiteSummary, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.suite, min(r.started_at), count(*),
		sum(CASE WHEN v.passed THEN 1 ELSE 0 END), sum(CASE WHEN v.checks_broken > 0 THEN 1 ELSE 0 END), count(DISTINCT r.model_name),
		coalesce(sum(r.cost_usd), 0), count(r.cost_usd)
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
		var cost float64
		var priced int
		if err := rows.Scan(&ss.Suite, &started, &ss.Runs, &passed, &broken, &ss.Models, &cost, &priced); err != nil {
			return nil, fmt.Errorf("list suites: %w", err)
		}
		if priced == ss.Runs {
			ss.CostUSD = &cost
		}
		ss.Started, ss.Passed, ss.Broken = time.UnixMilli(started).UTC(), int(passed.Int64), int(broken.Int64)
		out = append(out, ss)
	}
	return out, rows.Err()
}

// SuiteExists reports whether any run of suite id is indexed.
func (s *Store) SuiteExists(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM runs WHERE suite = ? LIMIT 1)`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("suite %s: %w", id, err)
	}
	return n > 0, nil
}

// RecentSuites returns the ids and first start of the most recent suite
// runs, newest first: ListSuites without counting their runs.
func (s *Store) RecentSuites(ctx context.Context, limit int) ([]SuiteSummary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT suite, min(started_at) FROM runs WHERE suite != '' GROUP BY suite ORDER BY 2 DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent suites: %w", err)
	}
	defer rows.Close()
	var out []SuiteSummary
	for rows.Next() {
		var ss SuiteSummary
		var started int64
		if err := rows.Scan(&ss.Suite, &started); err != nil {
			return nil, fmt.Errorf("recent suites: %w", err)
		}
		ss.Started = time.UnixMilli(started).UTC()
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
	Status     bundle.Status
	Stage      bundle.Stage // where a run still working is
	Started    time.Time
	HasVerdict bool
	Passed     bool
	Broken     bool
	Aborted    string
	Suite      string
	Tags       []string // the scenario's tags, from the receipt
}

const cellQuery = `SELECT r.run_id, r.scenario_id, r.scenario_repeat, r.model_name, r.agent, r.status, r.stage, r.started_at, r.suite,
	v.run_id IS NOT NULL, coalesce(v.passed, 0), coalesce(v.checks_broken, 0) > 0, coalesce(v.aborted, ''), r.scenario_tags
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
		if err := rows.Scan(&c.RunID, &c.Scenario, &c.Repeat, &c.Model, &c.Agent, &c.Status, &c.Stage, &started, &c.Suite, &c.HasVerdict, &c.Passed, &c.Broken, &c.Aborted, &tags); err != nil {
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

// SuiteCells returns the runs of a suite, by scenario, agent, model and
// repeat: every run, or those of the scenarios named.
func (s *Store) SuiteCells(ctx context.Context, suite string, scenarios ...string) ([]Cell, error) {
	where, args := `WHERE r.suite = ?`, []any{suite}
	if len(scenarios) > 0 {
		where += ` AND r.scenario_id IN (?` + strings.Repeat(`, ?`, len(scenarios)-1) + `)`
		for _, sc := range scenarios {
			args = append(args, sc)
		}
	}
	return s.cells(ctx, "runs of suite "+suite, where+` ORDER BY r.scenario_id, r.agent, r.model_name, r.scenario_repeat, r.started_at`, args...)
}

// SuiteRow is a suite's runs of one scenario by one agent with one model,
// counted by SQL.
type SuiteRow struct {
	Scenario string
	Agent    string
	Model    string
	Runs     int // runs with a verdict
	Passed   int
	Broken   int // runs with a broken check
	Running  int // runs without a verdict yet
	Repeats  int // the highest repeat number
	Tags     []string
	Cost     float64 // of the runs with a price
	Priced   int     // runs with a price
	Tokens   int64   // of every run
	Millis   int64   // wall time of the runs that ended
	Ended    int
}

// SuiteRows returns a suite's rows, by scenario, agent and model.
func (s *Store) SuiteRows(ctx context.Context, suite string) ([]SuiteRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.scenario_id, r.agent, r.model_name,
		count(v.run_id), coalesce(sum(v.passed), 0), count(CASE WHEN v.checks_broken > 0 THEN 1 END), count(*) - count(v.run_id),
		max(r.scenario_repeat), coalesce(group_concat(DISTINCT nullif(r.scenario_tags, '')), ''),
		coalesce(sum(r.cost_usd), 0), count(r.cost_usd), coalesce(sum(r.total_tokens), 0),
		coalesce(sum(r.ended_at - r.started_at), 0), count(r.ended_at)
		FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id
		WHERE r.suite = ? GROUP BY r.scenario_id, r.agent, r.model_name ORDER BY r.scenario_id, r.agent, r.model_name`, suite)
	if err != nil {
		return nil, fmt.Errorf("rows of suite %s: %w", suite, err)
	}
	defer rows.Close()
	var out []SuiteRow
	for rows.Next() {
		var r SuiteRow
		var tags string
		if err := rows.Scan(&r.Scenario, &r.Agent, &r.Model, &r.Runs, &r.Passed, &r.Broken, &r.Running, &r.Repeats, &tags, &r.Cost, &r.Priced, &r.Tokens, &r.Millis, &r.Ended); err != nil {
			return nil, fmt.Errorf("rows of suite %s: %w", suite, err)
		}
		if tags != "" { // the distinct tag lists of its runs, each a JSON array
			var lists [][]string
			if err := json.Unmarshal([]byte("["+tags+"]"), &lists); err != nil {
				return nil, fmt.Errorf("rows of suite %s: tags of scenario %s: %w", suite, r.Scenario, err)
			}
			for _, l := range lists {
				for _, t := range l {
					if !slices.Contains(r.Tags, t) {
						r.Tags = append(r.Tags, t)
					}
				}
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
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

// ScenarioSuite is a scenario's runs in one suite by one agent with one
// model.
type ScenarioSuite struct {
	Suite, Agent, Model string
	Started             time.Time
	Runs                int // with a verdict
	Passed              int
	Count               int
}

// ScenarioSuites returns a scenario's results in its most recent suites
// (by agent and model), newest first.
func (s *Store) ScenarioSuites(ctx context.Context, scenario string, limit int) ([]ScenarioSuite, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.suite, r.agent, r.model_name, min(r.started_at), count(v.run_id), coalesce(sum(v.passed), 0), count(*)
		FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id
		WHERE r.scenario_id = ? AND r.suite != ''
		GROUP BY r.suite, r.agent, r.model_name ORDER BY min(r.started_at) DESC, r.suite, r.agent, r.model_name LIMIT ?`, scenario, limit)
	if err != nil {
		return nil, fmt.Errorf("suites of scenario %s: %w", scenario, err)
	}
	defer rows.Close()
	var out []ScenarioSuite
	for rows.Next() {
		var ss ScenarioSuite
		var started int64
		if err := rows.Scan(&ss.Suite, &ss.Agent, &ss.Model, &started, &ss.Runs, &ss.Passed, &ss.Count); err != nil {
			return nil, fmt.Errorf("suites of scenario %s: %w", scenario, err)
		}
		ss.Started = time.UnixMilli(started).UTC()
		out = append(out, ss)
	}
	return out, rows.Err()
}
