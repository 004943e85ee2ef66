package store

import (
	"context"
	"fmt"

	"github.com/proctor-dev/proctor/internal/bundle"
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

// BundleOutcome is what the index made of the pack at path: its indexed
// runs, and every problem found in it (a run refused, an entry skipped),
// with the reason.
func (s *Store) BundleOutcome(ctx context.Context, pack string) (runs int, problems []bundle.Problem, err error) {
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE bundle_path >= ?1 || '#' AND bundle_path < ?1 || '$'`, pack).Scan(&runs); err != nil {
		return 0, nil, fmt.Errorf("outcome of %s: %w", pack, err)
	}
	rows, err := s.problems(ctx, `WHERE bundle_path = ?1 OR (bundle_path >= ?1 || '#' AND bundle_path < ?1 || '$')`, pack)
	if err != nil {
		return 0, nil, fmt.Errorf("outcome of %s: %w", pack, err)
	}
	for _, p := range rows {
		problems = append(problems, bundle.Problem{File: p.File, Field: p.Field, Message: p.Message})
	}
	return runs, problems, nil
}
