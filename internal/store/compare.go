package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// A comparison's classes: what became of a scenario from the base suite to
// the head suite, by the state of its repeats on each side — passing (every
// repeat passed), flaky (some did), failing (none did). This is their one
// definition; the SQL below computes it.
const (
	Regressed    = "regressed"     // passing or flaky → failing
	NewlyFlaky   = "newly-flaky"   // passing → flaky
	StillFailing = "still-failing" // failing → failing, flaky → flaky
	Removed      = "removed"       // in the base only
	Pending      = "pending"       // a run of a side has no verdict (yet: it runs, or it stopped before its checks)
	Fixed        = "fixed"         // failing or flaky → passing, failing → flaky
	Added        = "added"         // in the head only
	Unchanged    = "unchanged"     // passing → passing
)

// CompareClasses are the classes in the order a comparison lists them:
// what needs a look first.
func CompareClasses() []string {
	return []string{Regressed, NewlyFlaky, StillFailing, Removed, Pending, Fixed, Added, Unchanged}
}

// CompareSide is a scenario's runs in one of the two suites, counted by
// SQL. Count is 0 when the suite did not run it.
type CompareSide struct {
	Count     int // runs
	Runs      int // runs with a verdict
	Passed    int
	Tokens    int64 // over every run
	Cost      float64
	Priced    int   // runs with a cost (a run whose model has no price has none)
	Millis    int64 // wall time of the runs that ended
	Ended     int
	FailRun   string // the failing run of the lowest repeat
	FailCheck string // its first failing check
	PassRun   string // the passing run of the lowest repeat
	AnyRun    string // the run of the lowest repeat
}

// CompareRow is one scenario (by agent and model when the two suites ran
// the same ones) in a comparison.
type CompareRow struct {
	Scenario, Agent, Model string
	Class                  string
	Base, Head             CompareSide
}

// SuiteTotals are one side's totals in a comparison.
type SuiteTotals struct {
	Rows    int // scenarios (by agent and model)
	AllPass int // rows whose every repeat passed
	CompareSide
}

// CompareQuery asks for a page of a comparison.
type CompareQuery struct {
	Base, Head string
	Class      string // "" every class
	Offset     int
	Limit      int
}

// Comparison is a page of two suites compared, with the totals of all of
// it.
type Comparison struct {
	// ByModel: the two suites ran the same agents and models, so a row is a
	// scenario with one agent and one model; else a row is a scenario, its
	// runs by every agent and model pooled.
	ByModel    bool
	Classes    map[string]int // rows by class
	Base, Head SuiteTotals
	Rows       []CompareRow // the page, what needs a look first
}

// sideColumns aggregate one suite's runs of a row.
const sideColumns = `count(*) AS n, count(v.run_id) AS runs, coalesce(sum(v.passed), 0) AS passed,
	coalesce(sum(r.total_tokens), 0) AS tokens,
	coalesce(sum(r.cost_usd), 0) AS cost, count(r.cost_usd) AS priced,
	coalesce(sum(r.ended_at - r.started_at), 0) AS millis, count(r.ended_at) AS ended`

// sideNames name side's columns, prefixed by b (base) or h (head).
func sideNames(p string) string {
	return strings.NewReplacer("_", p).Replace(`_n, _runs, _passed, _tokens, _cost, _priced, _millis, _ended`)
}

// compareCTE counts each suite's runs by row (by scenario, agent and model
// when byModel, else by scenario: in the order of the runs_suite_rows index,
// so that no run is sorted), pairs the rows of the two, and classes each
// pair. Its parameters are base and head.
func compareCTE(byModel bool) string {
	key := `r.scenario_id, '', ''`
	group := `r.scenario_id`
	if byModel {
		key = `r.scenario_id, r.agent, r.model_name`
		group = key
	}
	side := func(h, param string) string {
		return `SELECT ` + h + `, ` + key + `, ` + sideColumns + ` FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id
		WHERE r.suite = ` + param + ` GROUP BY ` + group
	}
	pick := func(h, p string) string {
		return strings.NewReplacer("$H", h).Replace(strings.NewReplacer("_", p).Replace(`sum(CASE WHEN h = $H THEN n ELSE 0 END) AS _n,
		sum(CASE WHEN h = $H THEN runs ELSE 0 END) AS _runs, sum(CASE WHEN h = $H THEN passed ELSE 0 END) AS _passed,
		sum(CASE WHEN h = $H THEN tokens ELSE 0 END) AS _tokens,
		sum(CASE WHEN h = $H THEN cost ELSE 0 END) AS _cost, sum(CASE WHEN h = $H THEN priced ELSE 0 END) AS _priced,
		sum(CASE WHEN h = $H THEN millis ELSE 0 END) AS _millis, sum(CASE WHEN h = $H THEN ended ELSE 0 END) AS _ended`))
	}
	return `WITH sides (h, scenario, agent, model, n, runs, passed, tokens, cost, priced, millis, ended) AS (
	` + side("0", "?1") + `
	UNION ALL
	` + side("1", "?2") + `
), named AS (
	SELECT scenario, agent, model, ` + pick("0", "b") + `, ` + pick("1", "h") + `
	FROM sides GROUP BY scenario, agent, model
), st AS (
	SELECT *, CASE WHEN bn = 0 THEN 'none' WHEN bruns < bn THEN 'pending' WHEN bpassed = bruns THEN 'pass' WHEN bpassed = 0 THEN 'fail' ELSE 'flaky' END AS bs,
		CASE WHEN hn = 0 THEN 'none' WHEN hruns < hn THEN 'pending' WHEN hpassed = hruns THEN 'pass' WHEN hpassed = 0 THEN 'fail' ELSE 'flaky' END AS hs
	FROM named
), classed AS MATERIALIZED (
	SELECT *, CASE
		WHEN hs = 'none' THEN 0
		WHEN bs = 'none' THEN 1
		WHEN bs = 'pending' OR hs = 'pending' THEN 2
		WHEN hs = 'fail' AND bs IN ('pass', 'flaky') THEN 3
		WHEN hs = 'flaky' AND bs = 'pass' THEN 4
		WHEN hs = bs AND hs != 'pass' THEN 5
		WHEN hs = 'pass' AND bs = 'pass' THEN 7
		ELSE 6 END AS c
	FROM st
) `
}

// classOf maps classed.c to a class.
var classOf = [...]string{Removed, Added, Pending, Regressed, NewlyFlaky, StillFailing, Fixed, Unchanged}

// classRank orders classed.c as CompareClasses lists the classes.
const classRank = `CASE c WHEN 3 THEN 0 WHEN 4 THEN 1 WHEN 5 THEN 2 WHEN 0 THEN 3 WHEN 2 THEN 4 WHEN 6 THEN 5 WHEN 1 THEN 6 ELSE 7 END`

// sideTotals sum a side's columns over a class's rows, with the rows it
// ran and those it passed on every repeat.
func sideTotals(p string) string {
	return strings.NewReplacer("_", p).Replace(`count(CASE WHEN _n > 0 THEN 1 END), count(CASE WHEN _s = 'pass' THEN 1 END),
		sum(_n), sum(_runs), sum(_passed), sum(_tokens), sum(_cost), sum(_priced), sum(_millis), sum(_ended)`)
}

// CompareSuites compares suite q.Head with suite q.Base: the totals of
// each, the rows by class, and the page of rows q asks for, what needs a
// look first (as CompareClasses), then by scenario, agent and model, with
// the runs each row links to. It counts every row in one pass of SQL and
// reads only the page's. A suite with no indexed run is ErrNotFound.
func (s *Store) CompareSuites(ctx context.Context, q CompareQuery) (*Comparison, error) {
	what := fmt.Sprintf("compare suite %s with %s", q.Head, q.Base)
	c := -1 // every class
	if q.Class != "" {
		if c = slices.Index(classOf[:], q.Class); c < 0 {
			return nil, fmt.Errorf("%s: class %q: want one of %s", what, q.Class, strings.Join(CompareClasses(), ", "))
		}
	}
	if q.Limit <= 0 {
		q.Limit = -1 // every row
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for every count
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	byModel, err := sameModels(ctx, tx, q.Base, q.Head)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cmp := &Comparison{ByModel: byModel, Classes: map[string]int{}}
	// One statement: the totals by class (kind 0), then the page (kind 1).
	rows, err := tx.QueryContext(ctx, compareCTE(byModel)+`SELECT 0, c, count(*), `+sideTotals("b")+`, `+sideTotals("h")+`, '', '', ''
		FROM classed GROUP BY c
		UNION ALL SELECT * FROM (SELECT 1, c, 0, 0, 0, `+sideNames("b")+`, 0, 0, `+sideNames("h")+`, scenario, agent, model
		FROM classed WHERE ?3 < 0 OR c = ?3 ORDER BY `+classRank+`, scenario, agent, model LIMIT ?4 OFFSET ?5)`,
		q.Base, q.Head, c, q.Limit, max(q.Offset, 0))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, c, count int
		var b, h SuiteTotals
		var r CompareRow
		if err := rows.Scan(&kind, &c, &count, &b.Rows, &b.AllPass, &b.Count, &b.Runs, &b.Passed, &b.Tokens, &b.Cost, &b.Priced, &b.Millis, &b.Ended,
			&h.Rows, &h.AllPass, &h.Count, &h.Runs, &h.Passed, &h.Tokens, &h.Cost, &h.Priced, &h.Millis, &h.Ended,
			&r.Scenario, &r.Agent, &r.Model); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if kind == 0 {
			cmp.Classes[classOf[c]] = count
			cmp.Base.add(b)
			cmp.Head.add(h)
			continue
		}
		r.Class, r.Base, r.Head = classOf[c], b.CompareSide, h.CompareSide
		cmp.Rows = append(cmp.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for suite, t := range map[string]SuiteTotals{q.Base: cmp.Base, q.Head: cmp.Head} {
		if t.Count == 0 {
			return nil, fmt.Errorf("%s: no run of suite %s is indexed: %w", what, suite, ErrNotFound)
		}
	}
	if err := links(ctx, tx, q, byModel, cmp.Rows); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return cmp, nil
}

// add adds a class's totals.
func (t *SuiteTotals) add(o SuiteTotals) {
	t.Rows, t.AllPass = t.Rows+o.Rows, t.AllPass+o.AllPass
	t.Count, t.Runs, t.Passed = t.Count+o.Count, t.Runs+o.Runs, t.Passed+o.Passed
	t.Tokens, t.Cost, t.Priced = t.Tokens+o.Tokens, t.Cost+o.Cost, t.Priced+o.Priced
	t.Millis, t.Ended = t.Millis+o.Millis, t.Ended+o.Ended
}

// links sets the runs each of rows links to, read for those rows' scenarios
// only: on each side, the failing and the passing run of the lowest repeat,
// and the run of the lowest repeat.
func links(ctx context.Context, tx *sql.Tx, q CompareQuery, byModel bool, rows []CompareRow) error {
	if len(rows) == 0 {
		return nil
	}
	type key struct{ scenario, agent, model string }
	at := make(map[key]int, len(rows))
	args := []any{q.Base, q.Head}
	for i, r := range rows {
		at[key{r.Scenario, r.Agent, r.Model}] = i
		args = append(args, r.Scenario)
	}
	res, err := tx.QueryContext(ctx, `SELECT r.suite = ?2, r.scenario_id, r.agent, r.model_name, r.run_id, v.run_id IS NOT NULL, coalesce(v.passed, 0), coalesce(v.first_failure, '')
		FROM runs r LEFT JOIN verdicts v ON v.run_id = r.run_id
		WHERE r.suite IN (?1, ?2) AND r.scenario_id IN (?`+strings.Repeat(`, ?`, len(rows)-1)+`)
		ORDER BY r.scenario_repeat, r.run_id`, args...)
	if err != nil {
		return fmt.Errorf("runs of the page: %w", err)
	}
	defer res.Close()
	for res.Next() {
		var head, judged, passed bool
		var k key
		var id, failed string
		if err := res.Scan(&head, &k.scenario, &k.agent, &k.model, &id, &judged, &passed, &failed); err != nil {
			return fmt.Errorf("runs of the page: %w", err)
		}
		if !byModel {
			k.agent, k.model = "", ""
		}
		i, ok := at[k]
		if !ok {
			continue
		}
		sd := &rows[i].Base
		if head {
			sd = &rows[i].Head
		}
		switch {
		case sd.AnyRun == "":
			sd.AnyRun = id
			fallthrough
		default:
			if judged && passed && sd.PassRun == "" {
				sd.PassRun = id
			}
			if judged && !passed && sd.FailRun == "" {
				sd.FailRun, sd.FailCheck = id, failed
			}
		}
	}
	return res.Err()
}

// sameModels reports whether suites base and head ran the same agents and
// models.
func sameModels(ctx context.Context, tx *sql.Tx, base, head string) (bool, error) {
	var unmatched int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT agent, model_name FROM runs WHERE suite IN (?1, ?2)
		GROUP BY agent, model_name HAVING count(DISTINCT suite) < 2)`, base, head).Scan(&unmatched)
	return unmatched == 0, err
}
