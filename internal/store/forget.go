package store

import (
	"context"
	"fmt"
)

// ForgetAll empties the index, ready for a rebuild from the bundles.
func (s *Store) ForgetAll(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("empty the index: %w", err)
	}
	defer tx.Rollback()
	for _, table := range []string{"transcripts", "check_results", "verdicts", "reviews", "runs", "session_runs", "sessions", "problems", "bundles"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			return fmt.Errorf("empty the index: table %s: %w", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("empty the index: %w", err)
	}
	return nil
}
