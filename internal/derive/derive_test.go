package derive

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/bounds"
)

// A changed path is a glob that matches only itself.
func TestGlobQuote(t *testing.T) {
	for in, want := range map[string]string{"a.txt": "a.txt", "src/*.go": "src/[*].go", "what?.md": "what[?].md", "x[1].txt": "x[[]1].txt"} {
		if got := globQuote([]string{in})[0]; got != want {
			t.Errorf("globQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Budgets are the bounds that differ from the defaults, as whole numbers
// where they are.
func TestBudgetsAreTheBoundsSet(t *testing.T) {
	if b := budgets(bounds.Defaults()); len(b) != 0 {
		t.Fatalf("the default bounds give budgets %v", b)
	}
	set := bounds.Defaults()
	set.WallClockS, set.MaxTurns, set.MaxCostUSD = 180, 7, 0.5
	b := budgets(set)
	if b["wall_clock_s"] != int64(180) || b["max_turns"] != int64(7) || b["max_cost_usd"] != 0.5 || len(b) != 3 {
		t.Fatalf("budgets %v", b)
	}
}
