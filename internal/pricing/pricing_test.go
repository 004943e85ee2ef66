package pricing

import (
	"math"
	"strings"
	"testing"
)

func TestLookupByNameOrDatedVersion(t *testing.T) {
	b := Builtin()
	for _, tc := range []struct {
		model string
		want  float64 // input price; -1 for no price
	}{
		{"gpt-4o", 2.50},
		{"gpt-4o-mini", 0.15},             // not gpt-4o's price
		{"gpt-4o-2024-08-06", 2.50},       // a dated version
		{"gpt-4o-mini-2024-07-18", 0.15},  // the longest name wins
		{"claude-sonnet-4-5-20250929", 3}, // Anthropic's dated names
		{"gemini-2.5-flash-lite", 0.10},
		{"gpt-4omni", -1}, // a prefix must end at a separator
		{"my-local-model", -1},
		{"", -1},
	} {
		p, ok := b.Lookup(tc.model)
		if got := map[bool]float64{true: p.Input, false: -1}[ok]; got != tc.want {
			t.Errorf("Lookup(%q) = %v (%v), want %v", tc.model, p.Input, ok, tc.want)
		}
	}
}

func TestCostCountsCachedAndWrittenTokensAtTheirPrices(t *testing.T) {
	p := Price{Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75}
	u := Usage{Prompt: 1_000_000, CacheRead: 600_000, CacheWrite: 100_000, Completion: 10_000}
	// 300,000 plain × 3 + 600,000 × 0.30 + 100,000 × 3.75 + 10,000 × 15, per million.
	if got, want := p.Cost(u), 0.9+0.18+0.375+0.15; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	// No cached price: cached tokens cost the input price.
	if got := (Price{Input: 2, Output: 8}).Cost(Usage{Prompt: 500_000, CacheRead: 500_000}); got != 1 {
		t.Errorf("cost without a cached price = %v, want 1", got)
	}
	if usd, ok := Builtin().Cost("my-local-model", u); ok || usd != 0 {
		t.Errorf("an unknown model costs %v, %v; want no price", usd, ok)
	}
	if got := Format(Builtin().Cost("my-local-model", u)); got != "no price" {
		t.Errorf("an unknown model's cost reads %q, want \"no price\" (never $0)", got)
	}
}

func TestAPricesFileOverridesTheBuiltinTable(t *testing.T) {
	file, err := Parse("prices.yaml", []byte("as_of: 2026-12-01\nmodels:\n  gpt-4o: {input: 2, output: 8}\n  local: {input: 0, output: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	table := Builtin().With(file)
	if p, _ := table.Lookup("gpt-4o"); p.Input != 2 || p.CachedInput != 0 {
		t.Errorf("gpt-4o = %+v, want the file's price", p)
	}
	if p, _ := table.Lookup("o3"); p.Input != 2 || p.Output != 8 {
		t.Errorf("o3 = %+v, want the built-in price kept", p)
	}
	if usd, ok := table.Cost("local", Usage{Prompt: 5000}); !ok || usd != 0 || Format(usd, ok) != "$0" {
		t.Errorf("a free model: %v %v", usd, ok)
	}
	if table.AsOf != "2026-12-01" || table.Source != "prices.yaml" {
		t.Errorf("as of %q from %q", table.AsOf, table.Source)
	}
	if table.Fingerprint() == Builtin().Fingerprint() || Builtin().Fingerprint() != Builtin().Fingerprint() {
		t.Error("the fingerprint does not follow the prices")
	}
}

func TestParseSaysEveryProblemWithItsPlace(t *testing.T) {
	_, err := Parse("prices.yaml", []byte(`as_of: 2026-12-01
models:
  gpt-4o: {input: -1, output: 8}
  o3: {input: 2}
  x: {input: two, output: 1, cached: 1}
moddels: {}
`))
	if err == nil {
		t.Fatal("a bad prices file was taken")
	}
	for _, want := range []string{
		`prices.yaml:3:19: models.gpt-4o.input: "-1": want a number from 0`,
		`prices.yaml:4:7: models.o3: give both input and output`,
		`prices.yaml:5:14: models.x.input: "two": want a number from 0`,
		`prices.yaml:5:30: models.x.cached: unknown field (known: input, output, cached_input, cache_write)`,
		`prices.yaml:6:1: moddels: unknown field; did you mean models?`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		usd  float64
		want string
	}{{0, "$0"}, {0.00123, "$0.0012"}, {1.5, "$1.50"}, {1234.4, "$1234"}} {
		if got := Format(tc.usd, true); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.usd, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("as_of: 2026-12-01\nmodels:\n  gpt-4o: {input: 2.5, output: 10, cached_input: 1.25}\n")
	f.Add("models:\n  a: {input: .nan, output: 1e400}\n  '': {}\n")
	f.Add("models: [1, 2]\n")
	f.Fuzz(func(t *testing.T, text string) {
		table, err := Parse("prices.yaml", []byte(text))
		if err != nil {
			return
		}
		for m, p := range table.Prices {
			for _, v := range []float64{p.Input, p.Output, p.CachedInput, p.CacheWrite} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: price %v taken", m, v)
				}
			}
		}
	})
}
