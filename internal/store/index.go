package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/pricing"
)

// BundleKind says what a bundle path holds.
type BundleKind string

// Bundle kinds.
const (
	BundleRun     BundleKind = "run"
	BundleSession BundleKind = "session"
)

// BundleUpdate is what one pass of the index learned about one bundle: its
// fingerprint and either what was read from it or the problems that stopped
// it from being read (or both, for problems that did not stop it).
type BundleUpdate struct {
	Path        string
	Kind        BundleKind
	Fingerprint string
	Run         *bundle.Run     // a readable run bundle
	Session     *bundle.Session // a readable session file
	Problems    bundle.Problems
}

// Fingerprints returns the stored fingerprint of every bundle whose path is
// root or lies under it, or is a run inside the pack root (root#RUN_ID).
func (s *Store) Fingerprints(ctx context.Context, root string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, fingerprint FROM bundles WHERE path = ? OR (path >= ? AND path < ?) OR (path >= ? AND path < ?)`,
		root, root+"/", root+"0", root+"#", root+"$") // '0' sorts right after '/', '$' after '#'
	if err != nil {
		return nil, fmt.Errorf("list fingerprints under %s: %w", root, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var p, fp string
		if err := rows.Scan(&p, &fp); err != nil {
			return nil, fmt.Errorf("list fingerprints under %s: %w", root, err)
		}
		out[p] = fp
	}
	return out, rows.Err()
}

// LiveRunPaths returns the bundle paths under root of runs indexed as still
// working (queued, running or awaiting an approval).
func (s *Store) LiveRunPaths(ctx context.Context, root string) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT bundle_path FROM runs WHERE status IN ('queued', 'running', 'awaiting_approval') AND (bundle_path >= ? AND bundle_path < ?)`,
		root+"/", root+"0")
	if err != nil {
		return nil, fmt.Errorf("list working runs under %s: %w", root, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("list working runs under %s: %w", root, err)
		}
		out[p] = true
	}
	return out, rows.Err()
}

// RunBundlePath returns the bundle path a run id is indexed from, or "" when
// the run is not indexed.
func (s *Store) RunBundlePath(ctx context.Context, runID string) (string, error) {
	var p string
	err := s.db.QueryRowContext(ctx, `SELECT bundle_path FROM runs WHERE run_id = ?`, runID).Scan(&p)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up run %s: %w", runID, err)
	}
	return p, nil
}

// SessionBundlePath returns the file a session id is indexed from, or "".
func (s *Store) SessionBundlePath(ctx context.Context, sessionID string) (string, error) {
	var p string
	err := s.db.QueryRowContext(ctx, `SELECT bundle_path FROM sessions WHERE session_id = ?`, sessionID).Scan(&p)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up session %s: %w", sessionID, err)
	}
	return p, nil
}

// ApplyBundles writes a batch of bundle updates and removals in one
// transaction. Applying the same updates twice leaves the same rows, so a
// batch that found the database locked past the busy timeout (many
// indexers writing at once on a busy machine: SQLite's lock is not handed
// out in turn) is written again, a while later, for up to two minutes.
func (s *Store) ApplyBundles(ctx context.Context, updates []BundleUpdate, removed []string) error {
	wait, giveUp := 50*time.Millisecond, time.Now().Add(2*time.Minute)
	for {
		err := s.applyBundles(ctx, updates, removed)
		if !busy(err) || time.Now().After(giveUp) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// busy reports whether err is SQLite's "database is locked": another
// connection held the write lock past the busy timeout.
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

func (s *Store) applyBundles(ctx context.Context, updates []BundleUpdate, removed []string) error {
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("apply index batch: %w", err)
	}
	tx := newBatchTx(sqlTx)
	defer tx.close()
	now := time.Now().UnixMilli()
	for _, path := range removed {
		if err := forgetBundle(ctx, tx, path); err != nil {
			return err
		}
	}
	prices := s.Prices()
	for _, u := range updates {
		if err := applyBundle(ctx, tx, u, now, prices); err != nil {
			return err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("apply index batch: %w", err)
	}
	return nil
}

// batchTx is a transaction that prepares each statement once, since a batch
// runs the same few statements for hundreds of bundles.
type batchTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func newBatchTx(tx *sql.Tx) *batchTx { return &batchTx{tx: tx, stmts: map[string]*sql.Stmt{}} }

// insert adds one row to table ("name (columns)").
func (b *batchTx) insert(ctx context.Context, table string, args ...any) error {
	q := "INSERT INTO " + table + " VALUES (" + strings.Repeat("?, ", len(args)-1) + "?)"
	if _, err := b.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("index into %s: %w", table, err)
	}
	return nil
}

func (b *batchTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := b.stmts[query]; ok {
		return st, nil
	}
	st, err := b.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	b.stmts[query] = st
	return st, nil
}

func (b *batchTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := b.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (b *batchTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := b.stmt(ctx, query)
	if err != nil {
		// Let the caller see the error through Row.Scan.
		return b.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (b *batchTx) close() {
	for _, st := range b.stmts {
		st.Close()
	}
	b.tx.Rollback()
}

func forgetBundle(ctx context.Context, tx *batchTx, path string) error {
	stmts := []string{
		`DELETE FROM transcripts WHERE rowid IN (SELECT id FROM runs WHERE bundle_path = ?1)`,
		`DELETE FROM runs WHERE bundle_path = ?1`,
		`DELETE FROM sessions WHERE bundle_path = ?1`,
		`DELETE FROM problems WHERE bundle_path = ?1`,
		`DELETE FROM bundles WHERE path = ?1`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, path); err != nil {
			return fmt.Errorf("forget bundle %s: %w", path, err)
		}
	}
	return nil
}

func applyBundle(ctx context.Context, tx *batchTx, u BundleUpdate, now int64, prices pricing.Table) error {
	// Start from a clean slate for this path, so a bundle whose run id
	// changed or that became unreadable leaves nothing stale behind. Whether
	// the path is known is decided here, inside the write transaction:
	// another indexer may have written it since this one looked.
	var known bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM bundles WHERE path = ?)`, u.Path).Scan(&known); err != nil {
		return fmt.Errorf("index bundle %s: %w", u.Path, err)
	}
	if known {
		if err := forgetBundle(ctx, tx, u.Path); err != nil {
			return err
		}
	}
	ok := u.Run != nil || u.Session != nil
	if err := tx.insert(ctx, "bundles (path, kind, fingerprint, ok, indexed_at)", u.Path, string(u.Kind), u.Fingerprint, ok, now); err != nil {
		return err
	}
	runID := ""
	switch {
	case u.Run != nil:
		runID = u.Run.Receipt.RunID
		if err := insertRun(ctx, tx, u.Path, u.Run, prices); err != nil {
			return err
		}
	case u.Session != nil:
		if err := insertSession(ctx, tx, u.Path, u.Session); err != nil {
			return err
		}
	}
	for _, p := range u.Problems {
		if _, err := tx.ExecContext(ctx, `INSERT INTO problems (bundle_path, run_id, file, field, message) VALUES (?, ?, ?, ?, ?)`,
			u.Path, runID, p.File, p.Field, p.Message); err != nil {
			return fmt.Errorf("record problem for %s: %w", u.Path, err)
		}
	}
	return nil
}

// ReviewStates are the values a run's review state takes (the runs list's
// review filter).
func ReviewStates() []string { return []string{"pending", "approved", "rejected", "none"} }

// reviewState summarises a receipt's review for filtering.
func reviewState(r *bundle.Receipt) string {
	switch {
	case r.Review != nil && r.Review.Approved:
		return "approved"
	case r.Review != nil:
		return "rejected"
	case r.Status == bundle.StatusAwaitingReview:
		return "pending"
	}
	return "none"
}

func sourceLocation(src bundle.Source) string {
	if src.Repository != "" {
		if src.Ref != "" {
			return src.Repository + "@" + src.Ref
		}
		return src.Repository
	}
	return src.Path
}

func msOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

const insertRunSQL = `INSERT INTO runs (
	run_id, bundle_path, session_id, kind, status, stage, task, model_profile, model_name,
	source_kind, source_location, source_commit, scenario_id, scenario_repeat,
	failure_domain, failure_code, failure_message, started_at, ended_at,
	prompt_tokens, completion_tokens, total_tokens, model_calls, changed_count, diff_bytes,
	verify_verdict, review_state, receipt, suite, agent, scenario_tags,
	cache_read_tokens, cache_write_tokens, cost_usd)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func runArgs(path string, run *bundle.Run, prices pricing.Table) ([]any, error) {
	r := &run.Receipt
	receipt, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode receipt of run %s: %w", r.RunID, err)
	}
	var fdomain, fcode, fmsg, scenario, verdict, suite, tags string
	var repeat int
	if r.Failure != nil {
		fdomain, fcode, fmsg = string(r.Failure.Domain), r.Failure.Code, r.Failure.Message
	}
	if r.Scenario != nil {
		scenario, repeat, suite = r.Scenario.ID, r.Scenario.Repeat, r.Scenario.Suite
		if len(r.Scenario.Tags) > 0 {
			b, err := json.Marshal(r.Scenario.Tags)
			if err != nil {
				return nil, fmt.Errorf("encode tags of run %s: %w", r.RunID, err)
			}
			tags = string(b)
		}
	}
	if r.Verify != nil {
		verdict = r.Verify.Verdict
	}
	return []any{
		r.RunID, path, r.SessionID, string(r.Kind), string(r.Status), string(r.Stage), r.Task, r.Model.Profile, r.Model.Name,
		r.Source.Kind, sourceLocation(r.Source), r.Source.CommitSHA, scenario, repeat,
		fdomain, fcode, fmsg, r.StartedAt.UnixMilli(), msOrNil(r.EndedAt),
		r.Usage.PromptTokens, r.Usage.CompletionTokens, r.Usage.TotalTokens, r.Usage.ModelCalls, len(r.Changed), run.DiffBytes,
		verdict, reviewState(r), string(receipt), suite, agentName(r), tags,
		r.Usage.CacheReadTokens, r.Usage.CacheWriteTokens, costOrNil(prices, r.Model.Name, usageOf(r.Usage)),
	}, nil
}

func usageOf(u bundle.Usage) pricing.Usage {
	return pricing.Usage{Prompt: u.PromptTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Completion: u.CompletionTokens}
}

// costOrNil is a run's cost for the runs table: NULL when the table has no
// price for its model.
func costOrNil(prices pricing.Table, model string, u pricing.Usage) any {
	if usd, ok := prices.Cost(model, u); ok {
		return usd
	}
	return nil
}

// agentName is how the index names a run's agent: native for proctor's own.
func agentName(r *bundle.Receipt) string {
	if r.Agent == nil || r.Agent.Name == "" {
		return "native"
	}
	return r.Agent.Name
}

func insertRun(ctx context.Context, tx *batchTx, path string, run *bundle.Run, prices pricing.Table) error {
	r := &run.Receipt
	args, err := runArgs(path, run, prices)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, insertRunSQL, args...)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: runs.run_id") {
			return fmt.Errorf("index run %s from %s: %w", r.RunID, path, ErrDuplicateRun)
		}
		return fmt.Errorf("index run %s: %w", r.RunID, err)
	}
	id, err := res.LastInsertId() // the row id, which the transcript shares
	if err != nil {
		return fmt.Errorf("index run %s: %w", r.RunID, err)
	}
	if run.Transcript != "" {
		if err := tx.insert(ctx, "transcripts (rowid, body)", id, run.Transcript); err != nil {
			return err
		}
	}
	if rv := r.Review; rv != nil {
		changed, _ := json.Marshal(nonNil(rv.Changed))
		if _, err := tx.ExecContext(ctx, `INSERT INTO reviews (run_id, approved, reason, reviewed_by, reviewed_at, has_diff, applied, changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.RunID, rv.Approved, rv.Reason, rv.ReviewedBy, rv.ReviewedAt.UnixMilli(), rv.HasDiff, rv.Applied, string(changed)); err != nil {
			return fmt.Errorf("index review of run %s: %w", r.RunID, err)
		}
	}
	if v := run.Verdict; v != nil {
		var passed, failed, broken int
		for _, c := range v.Results {
			switch {
			case c.Broken:
				broken++
			case c.Passed:
				passed++
			default:
				failed++
			}
		}
		if err := tx.insert(ctx, "verdicts (run_id, scenario, passed, first_failure, aborted, exchanges, checks_passed, checks_failed, checks_broken)",
			r.RunID, v.Scenario, v.Passed, v.FirstFailure, v.Aborted, v.Exchanges, passed, failed, broken); err != nil {
			return err
		}
		for i, c := range v.Results {
			if err := tx.insert(ctx, "check_results (run_id, ord, phase, name, passed, broken, detail)", r.RunID, i, c.Phase, c.Name, c.Passed, c.Broken, c.Detail); err != nil {
				return err
			}
		}
	}
	return nil
}

func insertSession(ctx context.Context, tx *batchTx, path string, s *bundle.Session) error {
	bounds, err := json.Marshal(s.Bounds)
	if err != nil {
		return fmt.Errorf("encode bounds of session %s: %w", s.SessionID, err)
	}
	updated := s.UpdatedAt
	if updated.IsZero() {
		updated = s.CreatedAt
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (session_id, bundle_path, title, workspace, created_at, updated_at, run_count, bounds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		s.SessionID, path, s.Title, s.Workspace, s.CreatedAt.UnixMilli(), updated.UnixMilli(), len(s.Runs), string(bounds)); err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: sessions.session_id") {
			return fmt.Errorf("index session %s from %s: %w", s.SessionID, path, ErrDuplicateSession)
		}
		return fmt.Errorf("index session %s: %w", s.SessionID, err)
	}
	for i, id := range s.Runs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_runs (session_id, ord, run_id) VALUES (?, ?, ?)`, s.SessionID, i, id); err != nil {
			return fmt.Errorf("index session %s run %s: %w", s.SessionID, id, err)
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
