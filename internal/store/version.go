package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Version returns a number that stays the same while nothing changes the
// database and differs once anything has committed to it, this process or
// another (SQLite's data_version, read on a connection of its own that never
// writes). What was built from the index may be kept while it stays the same.
func (s *Store) Version(ctx context.Context) (int64, error) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	if s.watch == nil {
		db, err := sql.Open("sqlite", dsn(s.path, true))
		if err != nil {
			return 0, fmt.Errorf("watch database %s: %w", s.path, err)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			db.Close()
			return 0, fmt.Errorf("watch database %s: %w", s.path, err)
		}
		s.watchDB, s.watch = db, conn
	}
	var v int64
	if err := s.watch.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("watch database %s: %w", s.path, err)
	}
	return v, nil
}
