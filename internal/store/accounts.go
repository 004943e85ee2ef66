package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// User is one account on a shared proctor host. Roles and password hashes are
// made and checked by package auth; the store keeps them.
type User struct {
	Name         string
	Role         string
	TokenScope   string // the API token's scope the request came with ("" its role; TokenPush)
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ErrUserExists is returned when adding a user whose name is taken.
var ErrUserExists = errors.New("user already exists")

// AddUser adds an account.
func (s *Store) AddUser(ctx context.Context, u User) error {
	now := time.Now().UnixMilli()
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (name, role, password_hash, disabled, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)`,
		u.Name, u.Role, u.PasswordHash, u.Disabled, now)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: users.name") {
			return fmt.Errorf("add user %s: %w", u.Name, ErrUserExists)
		}
		return fmt.Errorf("add user %s: %w", u.Name, err)
	}
	return nil
}

// GetUser returns the account name, or ErrNotFound.
func (s *Store) GetUser(ctx context.Context, name string) (User, error) {
	row := s.db.QueryRowContext(ctx, `SELECT name, role, password_hash, disabled, created_at, updated_at FROM users WHERE name = ?1`, name)
	u, err := scanUser(row)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("user %s: %w", name, err)
	}
	return u, nil
}

// ListUsers returns every account by name.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, role, password_hash, disabled, created_at, updated_at FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// scanWith scans a row's user columns, then more.
type scanWith struct {
	row  interface{ Scan(...any) error }
	more any
}

func (s scanWith) Scan(dest ...any) error { return s.row.Scan(append(dest, s.more)...) }

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var created, updated int64
	err := row.Scan(&u.Name, &u.Role, &u.PasswordHash, &u.Disabled, &created, &updated)
	u.CreatedAt, u.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return u, err
}

// CountUsers returns how many accounts there are and how many of them are
// enabled admins.
func (s *Store) CountUsers(ctx context.Context) (users, admins int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE role = 'admin' AND disabled = 0) FROM users`).Scan(&users, &admins)
	if err != nil {
		return 0, 0, fmt.Errorf("count users: %w", err)
	}
	return users, admins, nil
}

// UpdateUser changes an account's role, password hash and disabled flag, and,
// when its password changes or it is disabled, signs it out everywhere.
func (s *Store) UpdateUser(ctx context.Context, u User) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	defer tx.Rollback()
	var oldHash string
	var oldDisabled bool
	if err := tx.QueryRowContext(ctx, `SELECT password_hash, disabled FROM users WHERE name = ?1`, u.Name).Scan(&oldHash, &oldDisabled); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("update user %s: %w", u.Name, ErrNotFound)
		}
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ?2, password_hash = ?3, disabled = ?4, updated_at = ?5 WHERE name = ?1`,
		u.Name, u.Role, u.PasswordHash, u.Disabled, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	if oldHash != u.PasswordHash || (u.Disabled && !oldDisabled) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_name = ?1`, u.Name); err != nil {
			return fmt.Errorf("update user %s: sign out: %w", u.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	return nil
}

// RemoveUser deletes an account with its web sessions and API tokens.
func (s *Store) RemoveUser(ctx context.Context, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM users WHERE name = ?1`, name)
	if err != nil {
		return fmt.Errorf("remove user %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("remove user %s: %w", name, ErrNotFound)
	}
	return nil
}

// WebSession is a signed-in browser.
type WebSession struct {
	User      User
	CreatedAt time.Time
	ExpiresAt time.Time
}

// AddWebSession records a sign-in: idHash is the hash of the cookie's secret.
func (s *Store) AddWebSession(ctx context.Context, idHash, user, address string, expires time.Time) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO web_sessions (id_hash, user_name, created_at, expires_at, address) VALUES (?1, ?2, ?3, ?4, ?5)`,
		idHash, user, time.Now().UnixMilli(), expires.UnixMilli(), address); err != nil {
		return fmt.Errorf("sign in %s: %w", user, err)
	}
	return nil
}

// LookupWebSession returns the live session with idHash and its enabled
// user, or ErrNotFound when there is none, it expired or the user is
// disabled.
func (s *Store) LookupWebSession(ctx context.Context, idHash string, now time.Time) (WebSession, error) {
	row := s.db.QueryRowContext(ctx, `SELECT u.name, u.role, u.password_hash, u.disabled, u.created_at, u.updated_at, w.created_at, w.expires_at
		FROM web_sessions w JOIN users u ON u.name = w.user_name
		WHERE w.id_hash = ?1 AND w.expires_at > ?2 AND u.disabled = 0`, idHash, now.UnixMilli())
	var ws WebSession
	var created, updated, wc, we int64
	err := row.Scan(&ws.User.Name, &ws.User.Role, &ws.User.PasswordHash, &ws.User.Disabled, &created, &updated, &wc, &we)
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, fmt.Errorf("web session: %w", ErrNotFound)
	}
	if err != nil {
		return WebSession{}, fmt.Errorf("web session: %w", err)
	}
	ws.User.CreatedAt, ws.User.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	ws.CreatedAt, ws.ExpiresAt = time.UnixMilli(wc).UTC(), time.UnixMilli(we).UTC()
	return ws, nil
}

// DeleteWebSession signs a browser out.
func (s *Store) DeleteWebSession(ctx context.Context, idHash string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE id_hash = ?1`, idHash); err != nil {
		return fmt.Errorf("sign out: %w", err)
	}
	return nil
}

// PurgeWebSessions deletes sessions that expired before now.
func (s *Store) PurgeWebSessions(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= ?1`, now.UnixMilli()); err != nil {
		return fmt.Errorf("purge expired web sessions: %w", err)
	}
	return nil
}

// TokenPush is the scope of a token that may only push bundles.
const TokenPush = "push"

// APIToken is one named token of a user; the secret itself is never stored.
type APIToken struct {
	ID        int64
	User      string
	Name      string
	Scope     string // "" the user's role; TokenPush
	CreatedAt time.Time
	LastUsed  time.Time // zero: never used
}

// ErrTokenExists is returned when a user already has a token of that name.
var ErrTokenExists = errors.New("the user already has a token of that name")

// AddAPIToken records a token of scope ("" or TokenPush) by the hash of
// its secret.
func (s *Store) AddAPIToken(ctx context.Context, user, name, hash, scope string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO api_tokens (user_name, name, token_hash, created_at, scope) VALUES (?1, ?2, ?3, ?4, ?5)`, user, name, hash, time.Now().UnixMilli(), scope)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: api_tokens.user_name, api_tokens.name") {
			return fmt.Errorf("create token %s for %s: %w", name, user, ErrTokenExists)
		}
		if strings.Contains(err.Error(), "FOREIGN KEY") {
			return fmt.Errorf("create token %s for %s: user %w", name, user, ErrNotFound)
		}
		return fmt.Errorf("create token %s for %s: %w", name, user, err)
	}
	return nil
}

// ListAPITokens returns the tokens of user ("" for everyone's).
func (s *Store) ListAPITokens(ctx context.Context, user string) ([]APIToken, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_name, name, created_at, last_used_at, scope FROM api_tokens WHERE ?1 = '' OR user_name = ?1 ORDER BY user_name, name`, user)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []APIToken
	for rows.Next() {
		var t APIToken
		var created, used int64
		if err := rows.Scan(&t.ID, &t.User, &t.Name, &created, &used, &t.Scope); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		t.CreatedAt = time.UnixMilli(created).UTC()
		if used > 0 {
			t.LastUsed = time.UnixMilli(used).UTC()
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeAPIToken deletes user's token name.
func (s *Store) RevokeAPIToken(ctx context.Context, user, name string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM api_tokens WHERE user_name = ?1 AND name = ?2`, user, name)
	if err != nil {
		return fmt.Errorf("revoke token %s of %s: %w", name, user, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("revoke token %s of %s: %w", name, user, ErrNotFound)
	}
	return nil
}

// LookupAPIToken returns the enabled user whose token has hash, and marks the
// token used; ErrNotFound when there is none.
func (s *Store) LookupAPIToken(ctx context.Context, hash string, now time.Time) (User, error) {
	var scope string
	row := s.db.QueryRowContext(ctx, `SELECT u.name, u.role, u.password_hash, u.disabled, u.created_at, u.updated_at, t.scope
		FROM api_tokens t JOIN users u ON u.name = t.user_name WHERE t.token_hash = ?1 AND u.disabled = 0`, hash)
	u, err := scanUser(scanWith{row, &scope})
	u.TokenScope = scope
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("api token: %w", ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("api token: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ?2 WHERE token_hash = ?1`, hash, now.UnixMilli()); err != nil {
		return User{}, fmt.Errorf("api token: mark used: %w", err)
	}
	return u, nil
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string // user name, or "cli:<os user>" for terminal commands
	Action  string // signin, signin-failed, signout, launch, stop, approve, reject, approval, user-add, ...
	Object  string // run id, user name, ...
	Detail  string
	Address string
	// Op is the id of the journaled operation the entry records, or "": an
	// entry with an op is written at most once.
	Op string
}

// Audit appends an entry to the audit log; an entry whose Op is already in
// the log adds nothing.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	var op any
	if e.Op != "" {
		op = e.Op
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO audit (at, actor, action, object, detail, address, op) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING`,
		at.UnixMilli(), e.Actor, e.Action, e.Object, e.Detail, e.Address, op); err != nil {
		return fmt.Errorf("audit %s %s: %w", e.Action, e.Object, err)
	}
	return nil
}

// ListAudit returns up to limit entries older than before (0: the newest),
// newest first, and the id to pass for the next page (0: no more).
func (s *Store) ListAudit(ctx context.Context, before int64, limit int) ([]AuditEntry, int64, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 500)
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, actor, action, object, detail, address FROM audit WHERE ?1 = 0 OR id < ?1 ORDER BY id DESC LIMIT ?2`, before, limit+1)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Object, &e.Detail, &e.Address); err != nil {
			return nil, 0, fmt.Errorf("list audit: %w", err)
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list audit: %w", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}
