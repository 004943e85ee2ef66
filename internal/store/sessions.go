package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// SessionSummary is one row of the sessions list.
type SessionSummary struct {
	SessionID string
	Title     string
	Workspace string
	CreatedAt time.Time
	UpdatedAt time.Time
	RunCount  int
}

// SessionPage is one page of the sessions list.
type SessionPage struct {
	Sessions []SessionSummary
	Next     string
}

// ListSessions returns a page of sessions, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, after string, limit int) (SessionPage, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	q := `SELECT session_id, title, workspace, created_at, updated_at, run_count FROM sessions`
	var args []any
	if after != "" {
		c, err := parseCursor(after)
		if err != nil {
			return SessionPage{}, err
		}
		q += ` WHERE (updated_at, session_id) < (?, ?)`
		args = append(args, c.ms, c.id)
	}
	q += ` ORDER BY updated_at DESC, session_id DESC LIMIT ?`
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return SessionPage{}, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var page SessionPage
	for rows.Next() {
		var ss SessionSummary
		var created, updated int64
		if err := rows.Scan(&ss.SessionID, &ss.Title, &ss.Workspace, &created, &updated, &ss.RunCount); err != nil {
			return SessionPage{}, fmt.Errorf("list sessions: %w", err)
		}
		ss.CreatedAt, ss.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
		page.Sessions = append(page.Sessions, ss)
	}
	if err := rows.Err(); err != nil {
		return SessionPage{}, fmt.Errorf("list sessions: %w", err)
	}
	if len(page.Sessions) > limit {
		page.Sessions = page.Sessions[:limit]
		last := page.Sessions[limit-1]
		page.Next = cursor{ms: last.UpdatedAt.UnixMilli(), id: last.SessionID}.String()
	}
	return page, nil
}

// SessionRun is one run of a session, in session order. Run is nil when the
// session names a run that is not indexed.
type SessionRun struct {
	RunID string
	Run   *RunSummary
}

// SessionDetail is a session with its runs.
type SessionDetail struct {
	SessionSummary
	BundlePath string
	Bounds     bundle.Bounds
	Runs       []SessionRun
}

// GetSession returns one session with its runs, or ErrNotFound.
func (s *Store) GetSession(ctx context.Context, sessionID string) (*SessionDetail, error) {
	var d SessionDetail
	var created, updated int64
	var bounds string
	err := s.db.QueryRowContext(ctx, `SELECT session_id, title, workspace, created_at, updated_at, run_count, bundle_path, bounds FROM sessions WHERE session_id = ?`, sessionID).
		Scan(&d.SessionID, &d.Title, &d.Workspace, &created, &updated, &d.RunCount, &d.BundlePath, &bounds)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", sessionID, err)
	}
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	if err := json.Unmarshal([]byte(bounds), &d.Bounds); err != nil {
		return nil, fmt.Errorf("get session %s: decode bounds: %w", sessionID, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT sr.run_id, r.run_id IS NOT NULL, `+runSummaryColumnsNullable+`
		FROM session_runs sr LEFT JOIN runs r ON r.run_id = sr.run_id
		WHERE sr.session_id = ? ORDER BY sr.ord`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("get runs of session %s: %w", sessionID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var sr SessionRun
		var found bool
		var n nullableSummary
		if err := rows.Scan(append([]any{&sr.RunID, &found}, n.dest()...)...); err != nil {
			return nil, fmt.Errorf("get runs of session %s: %w", sessionID, err)
		}
		if found {
			sum := n.summary()
			sr.Run = &sum
		}
		d.Runs = append(d.Runs, sr)
	}
	return &d, rows.Err()
}

const runSummaryColumnsNullable = `r.session_id, r.kind, r.status, r.stage, r.task, r.model_name, r.started_at, r.ended_at, r.total_tokens, r.review_state, r.cost_usd`

type nullableSummary struct {
	sessionID, kind, status, stage, task, model, review sql.NullString
	started, ended, tokens                              sql.NullInt64
	cost                                                sql.NullFloat64
}

func (n *nullableSummary) dest() []any {
	return []any{&n.sessionID, &n.kind, &n.status, &n.stage, &n.task, &n.model, &n.started, &n.ended, &n.tokens, &n.review, &n.cost}
}

func (n *nullableSummary) summary() RunSummary {
	r := RunSummary{SessionID: n.sessionID.String, Kind: bundle.Kind(n.kind.String), Status: bundle.Status(n.status.String), Stage: bundle.Stage(n.stage.String),
		Task: n.task.String, ModelName: n.model.String, TotalTokens: n.tokens.Int64, ReviewState: n.review.String,
		StartedAt: time.UnixMilli(n.started.Int64).UTC()}
	if n.ended.Valid {
		t := time.UnixMilli(n.ended.Int64).UTC()
		r.EndedAt = &t
	}
	if n.cost.Valid {
		r.CostUSD = &n.cost.Float64
	}
	return r
}
