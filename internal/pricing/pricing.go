// Package pricing says what a model's tokens cost: a price table (per
// model, US dollars per million input, output and cached-input tokens), a
// dated built-in default for common OpenAI, Anthropic and Gemini models,
// prices files that override it, and the cost of a run's recorded usage.
// A model the table does not know has no price: its cost is unknown, never
// zero.
package pricing

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Price is what one model's tokens cost, in US dollars per million.
// CachedInput is the price of a prompt token read from the provider's
// cache, CacheWrite of one written to it; 0 for either means the input
// price (no discount, no surcharge).
type Price struct {
	Input, Output, CachedInput, CacheWrite float64
}

// Table is a price table: the prices by model name, and the day they were
// taken (so that a reader knows how old they are) and where from.
type Table struct {
	AsOf   string
	Source string
	Prices map[string]Price
}

// BuiltinAsOf is the day the built-in prices were taken from the providers'
// price pages; override them with a prices file (docs/models.md).
const BuiltinAsOf = "2025-09-01"

// Builtin is the built-in price table.
func Builtin() Table {
	return Table{AsOf: BuiltinAsOf, Source: "built-in", Prices: map[string]Price{
		// OpenAI
		"gpt-5":        {Input: 1.25, Output: 10, CachedInput: 0.125},
		"gpt-5-mini":   {Input: 0.25, Output: 2, CachedInput: 0.025},
		"gpt-5-nano":   {Input: 0.05, Output: 0.40, CachedInput: 0.005},
		"gpt-4.1":      {Input: 2, Output: 8, CachedInput: 0.50},
		"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CachedInput: 0.10},
		"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CachedInput: 0.025},
		"gpt-4o":       {Input: 2.50, Output: 10, CachedInput: 1.25},
		"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CachedInput: 0.075},
		"o3":           {Input: 2, Output: 8, CachedInput: 0.50},
		"o4-mini":      {Input: 1.10, Output: 4.40, CachedInput: 0.275},
		// Anthropic (cache writes of 5 minutes)
		"claude-opus-4-1":   {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75},
		"claude-opus-4":     {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-3-5-haiku":  {Input: 0.80, Output: 4, CachedInput: 0.08, CacheWrite: 1},
		// Google (prompts up to 200,000 tokens)
		"gemini-2.5-pro":        {Input: 1.25, Output: 10, CachedInput: 0.31},
		"gemini-2.5-flash":      {Input: 0.30, Output: 2.50, CachedInput: 0.075},
		"gemini-2.5-flash-lite": {Input: 0.10, Output: 0.40, CachedInput: 0.025},
		"gemini-2.0-flash":      {Input: 0.10, Output: 0.40, CachedInput: 0.025},
	}}
}

// With is t with other's prices in place of its own for the models other
// names; its date and source are other's when it names any.
func (t Table) With(other Table) Table {
	out := Table{AsOf: t.AsOf, Source: t.Source, Prices: make(map[string]Price, len(t.Prices)+len(other.Prices))}
	for m, p := range t.Prices {
		out.Prices[m] = p
	}
	for m, p := range other.Prices {
		out.Prices[m] = p
	}
	if len(other.Prices) > 0 {
		out.AsOf, out.Source = other.AsOf, other.Source
	}
	return out
}

// Lookup is model's price: the entry of its exact name, else of the
// longest name it starts with followed by "-", "@" or ":" (a dated or
// tagged version: claude-sonnet-4-5-20250929, gpt-4o-2024-08-06). ok is
// false when the table has no price for it.
func (t Table) Lookup(model string) (Price, bool) {
	if p, ok := t.Prices[model]; ok {
		return p, true
	}
	best := ""
	for name := range t.Prices {
		if len(name) > len(best) && strings.HasPrefix(model, name) && strings.ContainsRune("-@:", rune(model[len(name)])) {
			best = name
		}
	}
	if best == "" {
		return Price{}, false
	}
	return t.Prices[best], true
}

// Usage is the tokens a run's model calls counted: the prompt tokens (of
// them, those read from the provider's cache and those written to it) and
// the completion tokens.
type Usage struct {
	Prompt, CacheRead, CacheWrite, Completion int64
}

// Cost is what usage cost at p, in US dollars: prompt tokens not from the
// cache at the input price, cached ones at the cached-input price, written
// ones at the cache-write price, completion tokens at the output price.
func (p Price) Cost(u Usage) float64 {
	cached, written := u.CacheRead, u.CacheWrite
	plain := max(u.Prompt-cached-written, 0)
	rate := func(r float64) float64 {
		if r == 0 {
			return p.Input
		}
		return r
	}
	return (float64(plain)*p.Input + float64(cached)*rate(p.CachedInput) + float64(written)*rate(p.CacheWrite) + float64(u.Completion)*p.Output) / 1e6
}

// Cost is what usage of model cost by the table; ok is false when the
// table has no price for the model (the cost is unknown, not zero).
func (t Table) Cost(model string, u Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// Fingerprint names the table's prices: two tables with the same prices
// have the same fingerprint (the index re-prices its runs when it changes).
func (t Table) Fingerprint() string {
	names := make([]string, 0, len(t.Prices))
	for m := range t.Prices {
		names = append(names, m)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, m := range names {
		p := t.Prices[m]
		fmt.Fprintf(&b, "%s=%g/%g/%g/%g;", m, p.Input, p.Output, p.CachedInput, p.CacheWrite)
	}
	return b.String()
}

// Parse reads a prices file:
//
//	as_of: 2026-12-01            # the day the prices were taken
//	models:
//	  gpt-4.1: {input: 2, output: 8, cached_input: 0.5}
//	  my-local-model: {input: 0, output: 0}   # free: cost 0, not unknown
//
// Prices are US dollars per million tokens, each a number from 0. Every
// problem is reported at once, as "file:line:col: field: problem".
func Parse(path string, data []byte) (Table, error) {
	t := Table{Source: path, Prices: map[string]Price{}}
	doc, err := yamldoc.Parse(path, data)
	if err != nil || doc == nil {
		return t, err
	}
	d := &yamldoc.Decoder{File: path}
	d.Fields(doc, "", []string{"as_of", "models"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "as_of":
			t.AsOf = d.Str(v, "as_of")
		case "models":
			if v.Kind != yaml.MappingNode {
				d.Add(v, "models", "want a mapping of model names to prices, got %s", yamldoc.KindName(v))
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, pv := v.Content[i], v.Content[i+1]
				field := yamldoc.Join("models", k.Value)
				if strings.TrimSpace(k.Value) == "" {
					d.Add(k, "models", "a model name is empty")
					continue
				}
				if _, dup := t.Prices[k.Value]; dup {
					d.Add(k, field, "given twice")
					continue
				}
				var p Price
				var hasIn, hasOut bool
				d.Fields(pv, field, []string{"input", "output", "cached_input", "cache_write"}, func(key string, _, n *yaml.Node) {
					f := yamldoc.Join(field, key)
					switch key {
					case "input":
						p.Input, hasIn = dollars(d, n, f), true
					case "output":
						p.Output, hasOut = dollars(d, n, f), true
					case "cached_input":
						p.CachedInput = dollars(d, n, f)
					case "cache_write":
						p.CacheWrite = dollars(d, n, f)
					}
				})
				if pv.Kind == yaml.MappingNode && (!hasIn || !hasOut) {
					d.Add(pv, field, "give both input and output (US dollars per million tokens)")
				}
				t.Prices[k.Value] = p
			}
		}
	})
	if err := d.Err(); err != nil {
		return Table{}, err
	}
	return t, nil
}

// dollars is a price: a number from 0, US dollars per million tokens.
func dollars(d *yamldoc.Decoder, n *yaml.Node, field string) float64 {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		d.Add(n, field, "%s: want a number from 0 (US dollars per million tokens)", yamldoc.KindName(n))
		return 0
	}
	return v
}

// Format is a cost in words: "$0.0123", or "no price" when unknown.
func Format(usd float64, ok bool) string {
	if !ok {
		return "no price"
	}
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return fmt.Sprintf("$%.4f", usd)
	case usd < 100:
		return fmt.Sprintf("$%.2f", usd)
	}
	return fmt.Sprintf("$%.0f", usd)
}
