package store

import (
	"context"
	"fmt"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// InsertRunsBaseline inserts runs and their transcripts with plain batched
// INSERTs in one transaction: no fingerprints, no clean-up of earlier rows,
// no problems, no reviews or verdicts. It exists as the lower bound that the
// index benchmark measures a full rebuild against; proctor itself always
// indexes through ApplyBundles.
func (s *Store) InsertRunsBaseline(ctx context.Context, paths []string, runs []*bundle.Run) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("baseline insert: %w", err)
	}
	defer tx.Rollback()
	runStmt, err := tx.PrepareContext(ctx, insertRunSQL)
	if err != nil {
		return fmt.Errorf("baseline insert: %w", err)
	}
	defer runStmt.Close()
	ftsStmt, err := tx.PrepareContext(ctx, `INSERT INTO transcripts (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return fmt.Errorf("baseline insert: %w", err)
	}
	defer ftsStmt.Close()
	for i, run := range runs {
		args, err := runArgs(paths[i], run)
		if err != nil {
			return err
		}
		res, err := runStmt.ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("baseline insert run %s: %w", run.Receipt.RunID, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("baseline insert run %s: %w", run.Receipt.RunID, err)
		}
		if run.Transcript != "" {
			if _, err := ftsStmt.ExecContext(ctx, id, run.Transcript); err != nil {
				return fmt.Errorf("baseline insert transcript %s: %w", run.Receipt.RunID, err)
			}
		}
	}
	return tx.Commit()
}
