package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ShareLink is a read-only link to one run or one suite, opened without
// an account.
type ShareLink struct {
	ID         int64
	Kind       string // "run" or "suite"
	Object     string // the run's or the suite's id
	CreatedBy  string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RevokedAt  time.Time // zero: not revoked
	RevokedBy  string
	Opened     int
	LastOpened time.Time // zero: never opened
}

// Live reports whether the link still opens at now.
func (l ShareLink) Live(now time.Time) bool { return l.RevokedAt.IsZero() && now.Before(l.ExpiresAt) }

// AddShareLink records a link by the hash of its secret and returns its id.
func (s *Store) AddShareLink(ctx context.Context, hash string, l ShareLink) (int64, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO share_links (token_hash, kind, object, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		hash, l.Kind, l.Object, l.CreatedBy, l.CreatedAt.UnixMilli(), l.ExpiresAt.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("add share link to %s %s: %w", l.Kind, l.Object, err)
	}
	return res.LastInsertId()
}

const shareColumns = `id, kind, object, created_by, created_at, expires_at, revoked_at, revoked_by, opened, last_opened_at`

func scanShare(row interface{ Scan(...any) error }) (ShareLink, error) {
	var l ShareLink
	var created, expires, revoked, opened int64
	err := row.Scan(&l.ID, &l.Kind, &l.Object, &l.CreatedBy, &created, &expires, &revoked, &l.RevokedBy, &l.Opened, &opened)
	l.CreatedAt, l.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	if revoked > 0 {
		l.RevokedAt = time.UnixMilli(revoked).UTC()
	}
	if opened > 0 {
		l.LastOpened = time.UnixMilli(opened).UTC()
	}
	return l, err
}

// OpenShareLink returns the live link whose secret has hash, and counts
// the opening; ErrNotFound when there is none, or it is revoked or
// expired (the three are not told apart to whoever holds the URL).
func (s *Store) OpenShareLink(ctx context.Context, hash string, now time.Time) (ShareLink, error) {
	l, err := scanShare(s.db.QueryRowContext(ctx, `SELECT `+shareColumns+` FROM share_links WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) || err == nil && !l.Live(now) {
		return ShareLink{}, fmt.Errorf("share link: %w", ErrNotFound)
	}
	if err != nil {
		return ShareLink{}, fmt.Errorf("share link: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE share_links SET opened = opened + 1, last_opened_at = ? WHERE id = ?`, now.UnixMilli(), l.ID); err != nil {
		return ShareLink{}, fmt.Errorf("share link %d: %w", l.ID, err)
	}
	l.Opened++
	l.LastOpened = now
	return l, nil
}

// ListShareLinks returns every link, newest first.
func (s *Store) ListShareLinks(ctx context.Context) ([]ShareLink, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+shareColumns+` FROM share_links ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list share links: %w", err)
	}
	defer rows.Close()
	var out []ShareLink
	for rows.Next() {
		l, err := scanShare(rows)
		if err != nil {
			return nil, fmt.Errorf("list share links: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// RevokeShareLink ends link id at once; ErrNotFound when there is no such
// link, or it was revoked already.
func (s *Store) RevokeShareLink(ctx context.Context, id int64, by string, now time.Time) (ShareLink, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE share_links SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at = 0`, now.UnixMilli(), by, id)
	if err != nil {
		return ShareLink{}, fmt.Errorf("revoke share link %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ShareLink{}, fmt.Errorf("revoke share link %d: %w", id, ErrNotFound)
	}
	return scanShare(s.db.QueryRowContext(ctx, `SELECT `+shareColumns+` FROM share_links WHERE id = ?`, id))
}
