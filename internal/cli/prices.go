package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/store"
)

// pricesPath is the prices file: $PROCTOR_PRICES, else prices.yaml beside
// models.yaml.
func pricesPath(getenv func(string) string) string {
	return configPath("", "PROCTOR_PRICES", "prices.yaml", getenv)
}

// loadPrices is the built-in price table with the prices file over it
// (none there: the built-in table).
func loadPrices(getenv func(string) string) (pricing.Table, error) {
	path := pricesPath(getenv)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pricing.Builtin(), nil
	}
	if err != nil {
		return pricing.Table{}, fmt.Errorf("prices file %s: %w", path, err)
	}
	file, err := pricing.Parse(path, data)
	if err != nil {
		return pricing.Table{}, fmt.Errorf("prices file: %w\n(fix it, or move it away to use the built-in prices of %s)", err, pricing.BuiltinAsOf)
	}
	return pricing.Builtin().With(file), nil
}

// openIndex opens the data folder dir's database to index runs into,
// costed by the price table (re-pricing the indexed runs when the prices
// changed since they were priced).
func openIndex(ctx context.Context, getenv func(string) string, dir string) (*store.Store, error) {
	prices, err := loadPrices(getenv)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dbPath(dir))
	if err != nil {
		return nil, err
	}
	if _, err := st.UsePrices(ctx, prices); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}
