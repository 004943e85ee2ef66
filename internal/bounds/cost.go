package bounds

import (
	"fmt"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
)

// PriceFor is the price of modelName that a run held to b's max_cost_usd
// is costed at. A run under the bound whose model has no price cannot
// start: its cost could not be known, and an unknown cost is not $0.
func PriceFor(b bundle.Bounds, prices pricing.Table, modelName string) (pricing.Price, error) {
	if b.MaxCostUSD == 0 {
		return pricing.Price{}, nil
	}
	p, ok := prices.Lookup(modelName)
	if !ok {
		return pricing.Price{}, fmt.Errorf("max_cost_usd=%g: model %q has no price, so what the run spends cannot be known; give it one in a prices file (docs/models.md#prices), or remove the bound", b.MaxCostUSD, modelName)
	}
	return p, nil
}

// Cost is what a model's replies (their usage u) cost at price.
func Cost(price pricing.Price, u model.Usage) float64 {
	return price.Cost(pricing.Usage{Prompt: u.PromptTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Completion: u.CompletionTokens})
}
