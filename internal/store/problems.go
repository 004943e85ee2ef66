package store

import (
	"context"
	"fmt"
)

// ProblemRow is one thing the index could not read in a bundle.
type ProblemRow struct {
	BundlePath string
	RunID      string // the run the problem belongs to, when its receipt was readable
	File       string
	Field      string
	Message    string
}

// ListProblems returns every recorded problem, grouped by bundle path.
func (s *Store) ListProblems(ctx context.Context) ([]ProblemRow, error) {
	return s.problems(ctx, "")
}

func (s *Store) problems(ctx context.Context, where string, args ...any) ([]ProblemRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT bundle_path, run_id, file, field, message FROM problems `+where+` ORDER BY bundle_path, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list problems: %w", err)
	}
	defer rows.Close()
	var out []ProblemRow
	for rows.Next() {
		var p ProblemRow
		if err := rows.Scan(&p.BundlePath, &p.RunID, &p.File, &p.Field, &p.Message); err != nil {
			return nil, fmt.Errorf("list problems: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
