package suite

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/scenario"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"1/1": {1, 1}, "2/4": {2, 4}, " 3 / 3 ": {3, 3}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "0/4", "5/4", "-1/4", "1/0", "a/b", "1/4/2", "1/20000"} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), "want K/N") {
			t.Errorf("ParseShard(%q): %v", in, err)
		}
	}
}

// cases are a suite's cases: scenarios × agents × repeats.
func cases(scenarios, agents, repeats int) []Case {
	var out []Case
	for s := range scenarios {
		sc := &scenario.Scenario{ID: fmt.Sprintf("scenario-%03d", s)}
		for a := range max(agents, 1) {
			var ag *external.Agent
			if agents > 0 {
				ag = &external.Agent{Name: fmt.Sprintf("agent-%d", a)}
			}
			for k := 1; k <= repeats; k++ {
				out = append(out, Case{Scenario: sc, Agent: ag, Repeat: k})
			}
		}
	}
	return out
}

func keyOf(c Case) string { return fmt.Sprintf("%s/%s/%d", c.Scenario.ID, c.agentName(), c.Repeat) }

// The shards of a suite hold every case once, differ by one case at most,
// keep the suite's order, and are the same however the scenarios were
// found.
func TestShardsSplitTheCasesStablyAndEvenly(t *testing.T) {
	for _, tc := range []struct{ scenarios, agents, repeats, n int }{{5, 0, 2, 4}, {1, 0, 1, 3}, {200, 3, 3, 7}, {10, 2, 1, 1}} {
		all := cases(tc.scenarios, tc.agents, tc.repeats)
		reversed := slices.Clone(all)
		slices.Reverse(reversed)
		seen := map[string]int{}
		sizes := []int{}
		for k := 1; k <= tc.n; k++ {
			got := Shard{k, tc.n}.pick(all)
			sizes = append(sizes, len(got))
			var keys []string
			for i, c := range got {
				keys = append(keys, keyOf(c))
				seen[keyOf(c)]++
				if i > 0 && slices.Index(all, got[i-1]) > slices.Index(all, c) {
					t.Fatalf("shard %d/%d is not in the suite's order", k, tc.n)
				}
			}
			var again []string
			for _, c := range (Shard{k, tc.n}).pick(reversed) {
				again = append(again, keyOf(c))
			}
			slices.Sort(keys)
			slices.Sort(again)
			if !slices.Equal(keys, again) {
				t.Fatalf("shard %d/%d differs when the scenarios come in another order", k, tc.n)
			}
		}
		if len(seen) != len(all) {
			t.Fatalf("%+v: the shards hold %d of %d cases", tc, len(seen), len(all))
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("case %s is in %d shards", k, n)
			}
		}
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Fatalf("%+v: shard sizes %v", tc, sizes)
		}
	}
	if got := (Shard{}).pick(cases(3, 0, 1)); len(got) != 3 {
		t.Fatalf("no shard: %d cases", len(got))
	}
}
