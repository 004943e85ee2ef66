package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// RunSummary is one row of the runs list.
type RunSummary struct {
	RunID          string
	SessionID      string
	Kind           bundle.Kind
	Status         bundle.Status
	Stage          bundle.Stage
	Task           string
	ModelProfile   string
	ModelName      string
	Agent          string // native, codex, or an agent command's name
	ScenarioID     string
	ScenarioRepeat int
	SourceLocation string
	FailureDomain  string
	FailureCode    string
	StartedAt      time.Time
	EndedAt        *time.Time
	TotalTokens    int64
	ModelCalls     int64
	CostUSD        *float64 // nil: the price table has no price for the model
	ChangedCount   int
	ReviewState    string
	Snippet        string // matched transcript text when the list was searched; «» mark the matches
}

// Duration is how long the run took, or 0 while it has not ended.
func (r RunSummary) Duration() time.Duration {
	if r.EndedAt == nil {
		return 0
	}
	return r.EndedAt.Sub(r.StartedAt)
}

// RunFilter selects and pages the runs list. Empty fields do not filter.
type RunFilter struct {
	Status   string
	Kind     string
	Scenario string
	Model    string
	Agent    string
	Review   string
	Session  string
	Suite    string
	Query    string    // full-text search over transcripts (FTS5 query syntax, words are ANDed)
	From     time.Time // runs started at or after this time
	To       time.Time // runs started before this time
	Oldest   bool      // oldest first (default newest first)
	After    string    // cursor from a previous page's Next
	Before   string    // cursor from a later page's Prev
	Limit    int       // default 50, at most 500
}

// RunPage is one page of the runs list.
// Narrows reports whether f keeps only some runs by what they are (kind,
// scenario, model, review, suite, words, dates) — not counting status,
// session, order or page.
func (f RunFilter) Narrows() bool {
	return f.Kind != "" || f.Scenario != "" || f.Model != "" || f.Review != "" || f.Suite != "" || f.Query != "" ||
		!f.From.IsZero() || !f.To.IsZero()
}

type RunPage struct {
	Runs []RunSummary
	Next string // cursor of the next page; "" on the last page
	Prev string // cursor of the page before; "" on the first page
}

// ErrBadCursor is returned for a cursor that this store did not make.
var ErrBadCursor = errors.New("bad page cursor")

// cursor is a keyset position: the sort time (unix ms) and id of the last
// row of a page.
type cursor struct {
	ms int64
	id string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.ms, 10) + "|" + c.id))
}

func parseCursor(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, ErrBadCursor
	}
	ms, id, ok := strings.Cut(string(raw), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !bundle.ValidID(id) {
		return cursor{}, ErrBadCursor
	}
	return cursor{ms: n, id: id}, nil
}

const runSummaryColumns = `r.run_id, r.session_id, r.kind, r.status, r.stage, r.task, r.model_profile, r.model_name, r.agent,
	r.scenario_id, r.scenario_repeat, r.source_location, r.failure_domain, r.failure_code,
	r.started_at, r.ended_at, r.total_tokens, r.model_calls, r.cost_usd, r.changed_count, r.review_state`

func scanRunSummary(sc interface{ Scan(...any) error }, extra ...any) (RunSummary, error) {
	var r RunSummary
	var started int64
	var ended sql.NullInt64
	var cost sql.NullFloat64
	dest := []any{&r.RunID, &r.SessionID, &r.Kind, &r.Status, &r.Stage, &r.Task, &r.ModelProfile, &r.ModelName, &r.Agent,
		&r.ScenarioID, &r.ScenarioRepeat, &r.SourceLocation, &r.FailureDomain, &r.FailureCode,
		&started, &ended, &r.TotalTokens, &r.ModelCalls, &cost, &r.ChangedCount, &r.ReviewState}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return r, err
	}
	r.StartedAt = time.UnixMilli(started).UTC()
	if cost.Valid {
		r.CostUSD = &cost.Float64
	}
	if ended.Valid {
		t := time.UnixMilli(ended.Int64).UTC()
		r.EndedAt = &t
	}
	return r, nil
}

// ListRuns returns one page of runs, newest first, matching the filter.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) (RunPage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	// A page before the cursor is read backwards from it, then turned
	// round.
	backwards := f.Before != "" && f.After == ""
	q, args, err := f.query(limit, backwards)
	if err != nil {
		return RunPage{}, err
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var page RunPage
	searching := ftsQuery(f.Query) != ""
	for rows.Next() {
		var r RunSummary
		var snippet string
		var err error
		if searching {
			r, err = scanRunSummary(rows, &snippet)
			r.Snippet = snippet
		} else {
			r, err = scanRunSummary(rows)
		}
		if err != nil {
			return RunPage{}, fmt.Errorf("list runs: %w", err)
		}
		page.Runs = append(page.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return RunPage{}, fmt.Errorf("list runs: %w", err)
	}
	more := len(page.Runs) > limit
	if more {
		page.Runs = page.Runs[:limit]
	}
	at := func(r RunSummary) string { return cursor{ms: r.StartedAt.UnixMilli(), id: r.RunID}.String() }
	switch {
	case backwards && !more:
		// Back at the start: the first page, whole.
		f.Before = ""
		return s.ListRuns(ctx, f)
	case backwards:
		slices.Reverse(page.Runs)
		page.Prev, page.Next = at(page.Runs[0]), at(page.Runs[len(page.Runs)-1])
	default:
		if more {
			page.Next = at(page.Runs[limit-1])
		}
		if f.After != "" && len(page.Runs) > 0 {
			page.Prev = at(page.Runs[0])
		}
	}
	return page, nil
}

// query is the SQL of a page of the runs list and its arguments: limit+1
// rows after (or, backwards, before) the filter's cursor.
func (f RunFilter) query(limit int, backwards bool) (string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.Status != "" {
		add("r.status = ?", f.Status)
	}
	if f.Kind != "" {
		add("r.kind = ?", f.Kind)
	}
	if f.Scenario != "" {
		add("r.scenario_id = ?", f.Scenario)
	}
	if f.Model != "" {
		add("r.model_name = ?", f.Model)
	}
	if f.Agent != "" {
		add("r.agent = ?", f.Agent)
	}
	if f.Review != "" {
		add("r.review_state = ?", f.Review)
	}
	if f.Session != "" {
		add("r.session_id = ?", f.Session)
	}
	if f.Suite != "" {
		add("r.suite = ?", f.Suite)
	}
	if !f.From.IsZero() {
		add("r.started_at >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("r.started_at < ?", f.To.UnixMilli())
	}
	if mark := f.After + f.Before; mark != "" && (f.After == "" || f.Before == "") {
		c, err := parseCursor(mark)
		if err != nil {
			return "", nil, err
		}
		// A row-value comparison lets SQLite start the index scan at the
		// cursor instead of filtering from the top.
		op := "<"
		if f.Oldest != backwards {
			op = ">"
		}
		where = append(where, "(r.started_at, r.run_id) "+op+" (?, ?)")
		args = append(args, c.ms, c.id)
	}
	q := "SELECT " + runSummaryColumns
	from := " FROM runs r"
	if query := ftsQuery(f.Query); query != "" {
		q += ", snippet(transcripts, 0, '«', '»', ' … ', 16)"
		from += " JOIN transcripts t ON t.rowid = r.id"
		where = append([]string{"transcripts MATCH ?"}, where...)
		args = append([]any{query}, args...)
	}
	q += from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Oldest != backwards {
		q += " ORDER BY r.started_at ASC, r.run_id ASC LIMIT ?"
	} else {
		q += " ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?"
	}
	return q, append(args, limit+1), nil
}

// ftsQuery turns what a person typed into an FTS5 query that cannot be a
// syntax error: each word becomes a quoted phrase, and the words are ANDed.
func ftsQuery(s string) string {
	var terms []string
	for _, w := range strings.Fields(s) {
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(terms, " ")
}

// RunDetail is everything the index knows about one run.
type RunDetail struct {
	RunSummary
	BundlePath string
	Receipt    bundle.Receipt
	Verdict    *VerdictRow
	Checks     []bundle.CheckResult
	Problems   []ProblemRow
}

// VerdictRow is a scenario run's verdict with its check counts.
type VerdictRow struct {
	Scenario     string
	Passed       bool
	FirstFailure string
	Aborted      string
	Exchanges    int
	ChecksPassed int
	ChecksFailed int
	ChecksBroken int
}

// GetRun returns one run, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, runID string) (*RunDetail, error) {
	row := s.db.QueryRowContext(ctx, "SELECT "+runSummaryColumns+", r.bundle_path, r.receipt FROM runs r WHERE r.run_id = ?", runID)
	var d RunDetail
	var receipt string
	sum, err := scanRunSummary(row, &d.BundlePath, &receipt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", runID, err)
	}
	d.RunSummary = sum
	if err := json.Unmarshal([]byte(receipt), &d.Receipt); err != nil {
		return nil, fmt.Errorf("get run %s: decode stored receipt: %w", runID, err)
	}
	var v VerdictRow
	err = s.db.QueryRowContext(ctx, `SELECT scenario, passed, first_failure, aborted, exchanges, checks_passed, checks_failed, checks_broken FROM verdicts WHERE run_id = ?`, runID).
		Scan(&v.Scenario, &v.Passed, &v.FirstFailure, &v.Aborted, &v.Exchanges, &v.ChecksPassed, &v.ChecksFailed, &v.ChecksBroken)
	switch {
	case err == nil:
		d.Verdict = &v
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("get verdict of run %s: %w", runID, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT phase, name, passed, broken, detail FROM check_results WHERE run_id = ? ORDER BY ord`, runID)
	if err != nil {
		return nil, fmt.Errorf("get checks of run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c bundle.CheckResult
		if err := rows.Scan(&c.Phase, &c.Name, &c.Passed, &c.Broken, &c.Detail); err != nil {
			return nil, fmt.Errorf("get checks of run %s: %w", runID, err)
		}
		d.Checks = append(d.Checks, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get checks of run %s: %w", runID, err)
	}
	if d.Problems, err = s.problems(ctx, "WHERE bundle_path = ?", d.BundlePath); err != nil {
		return nil, err
	}
	return &d, nil
}

// Facets lists the values the runs list can be filtered by.
type Facets struct {
	Models    []string
	Agents    []string
	Scenarios []string
}

// RunFacets returns the distinct models, agents and scenarios, at most 200
// of each.
// It walks the column indexes one value at a time, so its cost grows with the
// number of distinct values rather than the number of runs.
func (s *Store) RunFacets(ctx context.Context) (Facets, error) {
	var f Facets
	var err error
	if f.Models, err = s.distinct(ctx, "model_name"); err != nil {
		return f, err
	}
	if f.Agents, err = s.distinct(ctx, "agent"); err != nil {
		return f, err
	}
	if f.Scenarios, err = s.distinct(ctx, "scenario_id"); err != nil {
		return f, err
	}
	return f, nil
}

func (s *Store) distinct(ctx context.Context, column string) ([]string, error) {
	var out []string
	last := ""
	for len(out) < 200 {
		var v string
		err := s.db.QueryRowContext(ctx, "SELECT "+column+" FROM runs WHERE "+column+" > ? ORDER BY "+column+" LIMIT 1", last).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list distinct %s: %w", column, err)
		}
		out = append(out, v)
		last = v
	}
	return out, nil
}

// HasRuns reports whether any run is indexed.
func (s *Store) HasRuns(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs)`).Scan(&ok); err != nil {
		return false, fmt.Errorf("check for runs: %w", err)
	}
	return ok, nil
}

// BrokenBundles returns how many bundles have recorded problems.
func (s *Store) BrokenBundles(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT bundle_path) FROM problems`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count bundles with problems: %w", err)
	}
	return n, nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("ping database %s: %w", s.path, err)
	}
	return nil
}
