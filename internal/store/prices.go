package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/proctor-dev/proctor/internal/pricing"
)

// Prices is the price table the index costs runs by.
func (s *Store) Prices() pricing.Table {
	s.pricesMu.RLock()
	defer s.pricesMu.RUnlock()
	return s.prices
}

// UsePrices makes t the table the index costs runs by, and re-prices every
// indexed run when t's prices differ from those the runs were priced by
// (a corrected price re-prices old runs). It returns how many runs were
// re-priced.
func (s *Store) UsePrices(ctx context.Context, t pricing.Table) (int, error) {
	s.pricesMu.Lock()
	defer s.pricesMu.Unlock()
	s.prices = t
	var was string
	err := s.db.QueryRowContext(ctx, `SELECT fingerprint FROM run_prices WHERE id = 1`).Scan(&was)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read the prices the runs were costed by: %w", err)
	}
	if was == t.Fingerprint() {
		return 0, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT run_id, model_name, prompt_tokens, cache_read_tokens, cache_write_tokens, completion_tokens FROM runs`)
	if err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	type costed struct {
		id   string
		cost any
	}
	var all []costed
	for rows.Next() {
		var id, model string
		var u pricing.Usage
		if err := rows.Scan(&id, &model, &u.Prompt, &u.CacheRead, &u.CacheWrite, &u.Completion); err != nil {
			rows.Close()
			return 0, fmt.Errorf("re-price runs: %w", err)
		}
		all = append(all, costed{id, costOrNil(t, model, u)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	update, err := tx.PrepareContext(ctx, `UPDATE runs SET cost_usd = ? WHERE run_id = ?`)
	if err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	defer update.Close()
	for _, c := range all {
		if _, err := update.ExecContext(ctx, c.cost, c.id); err != nil {
			return 0, fmt.Errorf("re-price run %s: %w", c.id, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_prices (id, fingerprint) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET fingerprint = excluded.fingerprint`, t.Fingerprint()); err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("re-price runs: %w", err)
	}
	return len(all), nil
}
