package store_test

import (
	"context"
	"math"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/store"
)

// A run is costed as it is indexed, by the model's price; a model without
// a price has no cost (not 0); a corrected price re-prices the runs
// indexed before it, once.
func TestRunsAreCostedAndRepricedWhenThePricesChange(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	priced, unknown := run(1, bundle.StatusPassed, bundle.KindTask, "gpt-4o-2024-08-06"), run(2, bundle.StatusPassed, bundle.KindTask, "my-local-model")
	for _, r := range []*bundle.Run{priced, unknown} {
		r.Receipt.Usage = bundle.Usage{PromptTokens: 1_000_000, CacheReadTokens: 400_000, CompletionTokens: 100_000}
	}
	apply(t, st, priced, unknown)
	cost := func(id string) *float64 {
		t.Helper()
		got, err := st.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.CostUSD
	}
	// gpt-4o: 600,000 × 2.50 + 400,000 × 1.25 + 100,000 × 10, per million.
	if c := cost(priced.Receipt.RunID); c == nil || math.Abs(*c-3.0) > 1e-9 {
		t.Fatalf("gpt-4o run cost %v, want 3.00", c)
	}
	if c := cost(unknown.Receipt.RunID); c != nil {
		t.Fatalf("a run of a model without a price cost %v, want no cost", *c)
	}
	file, err := pricing.Parse("prices.yaml", []byte("models:\n  gpt-4o: {input: 1, output: 4}\n  my-local-model: {input: 0, output: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.UsePrices(ctx, pricing.Builtin().With(file))
	if err != nil || n != 2 {
		t.Fatalf("re-priced %d runs, %v; want 2", n, err)
	}
	if c := cost(priced.Receipt.RunID); c == nil || math.Abs(*c-1.4) > 1e-9 {
		t.Fatalf("gpt-4o run re-priced to %v, want 1.40", c)
	}
	if c := cost(unknown.Receipt.RunID); c == nil || *c != 0 {
		t.Fatalf("the free model's run costs %v, want 0", c)
	}
	if n, err := st.UsePrices(ctx, pricing.Builtin().With(file)); err != nil || n != 0 {
		t.Fatalf("the same prices re-priced %d runs, %v; want none", n, err)
	}
	// A run indexed now is costed by the prices in use.
	later := run(3, bundle.StatusPassed, bundle.KindTask, "gpt-4o")
	later.Receipt.Usage = bundle.Usage{PromptTokens: 1_000_000}
	apply(t, st, later)
	if c := cost(later.Receipt.RunID); c == nil || *c != 1 {
		t.Fatalf("a run indexed after the change costs %v, want 1.00", c)
	}
	page, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil || len(page.Runs) != 3 || page.Runs[0].CostUSD == nil {
		t.Fatalf("the runs list: %+v %v", page.Runs, err)
	}
}
