package suite_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

func TestWilson(t *testing.T) {
	cases := []struct {
		passed, runs int
		lo, hi       float64
	}{
		{0, 0, 0, 1},
		{3, 3, 0.4385, 1},
		{0, 3, 0, 0.5615},
		{5, 10, 0.2366, 0.7634},
		{95, 100, 0.8882, 0.9785},
	}
	for _, c := range cases {
		lo, hi := suite.Wilson(c.passed, c.runs)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = %.4f, %.4f; want %.4f, %.4f", c.passed, c.runs, lo, hi, c.lo, c.hi)
		}
	}
}

// state is a side's state by the suite package's own definitions.
func state(passed, runs int) string {
	switch {
	case runs == 0:
		return "none"
	case suite.PassK(passed, runs):
		return "pass"
	case suite.Flaky(passed, runs):
		return "flaky"
	}
	return "fail"
}

// TestCompareClassesAgreeWithPassKAndFlaky compares every pair of results
// of up to three repeats, and checks each row's class (counted by SQL)
// against the class the suite package's PassK and Flaky give.
func TestCompareClassesAgreeWithPassKAndFlaky(t *testing.T) {
	st := openStore(t)
	var results [][]string
	for runs := 0; runs <= 3; runs++ {
		for passed := 0; passed <= runs; passed++ {
			var r []string
			for i := range runs {
				r = append(r, map[bool]string{true: "pass", false: "fail"}[i < passed])
			}
			results = append(results, r)
		}
	}
	want := map[string]string{}
	rank := map[string]int{"pass": 2, "flaky": 1, "fail": 0}
	for i, b := range results {
		for j, h := range results {
			if len(b) == 0 && len(h) == 0 {
				continue
			}
			sc := fmt.Sprintf("s-%d-%d", i, j)
			if len(b) > 0 {
				indexCases(t, st, "base", sc, nil, b...)
			}
			if len(h) > 0 {
				indexCases(t, st, "head", sc, nil, h...)
			}
			bs, hs := state(count(b, "pass"), len(b)), state(count(h, "pass"), len(h))
			switch {
			case hs == "none":
				want[sc] = store.Removed
			case bs == "none":
				want[sc] = store.Added
			case rank[hs] < rank[bs] && hs == "fail":
				want[sc] = store.Regressed
			case rank[hs] < rank[bs]:
				want[sc] = store.NewlyFlaky
			case rank[hs] > rank[bs]:
				want[sc] = store.Fixed
			case hs == "pass":
				want[sc] = store.Unchanged
			default:
				want[sc] = store.StillFailing
			}
		}
	}
	c, err := suite.Compare(context.Background(), st, suite.CompareRequest{Base: "base", Head: "head"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(c.Rows), len(want))
	}
	for _, r := range c.Rows {
		if r.Class != want[r.Scenario] {
			t.Errorf("%s: %s, want %s (base %d/%d, head %d/%d)", r.Scenario, r.Class, want[r.Scenario], r.Base.Passed, r.Base.Runs, r.Head.Passed, r.Head.Runs)
		}
	}
}

func count(rs []string, what string) int {
	n := 0
	for _, r := range rs {
		if r == what {
			n++
		}
	}
	return n
}

func TestCompareFailsOnEachCondition(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		base, head []string
		fails      map[suite.FailOn]bool
	}{
		{"unchanged", []string{"pass"}, []string{"pass"}, map[suite.FailOn]bool{}},
		{"regressed", []string{"pass", "pass"}, []string{"fail", "fail"}, map[suite.FailOn]bool{suite.FailRegression: true, suite.FailFlaky: true, suite.FailAny: true}},
		{"newly flaky", []string{"pass", "pass"}, []string{"pass", "fail"}, map[suite.FailOn]bool{suite.FailFlaky: true, suite.FailAny: true}},
		{"still failing", []string{"fail"}, []string{"fail"}, map[suite.FailOn]bool{suite.FailAny: true}},
		{"fixed", []string{"fail"}, []string{"pass"}, map[suite.FailOn]bool{}},
		{"no verdict yet", []string{"pass"}, []string{"running"}, map[suite.FailOn]bool{suite.FailAny: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			indexCases(t, st, "base", "s", nil, tc.base...)
			indexCases(t, st, "head", "s", nil, tc.head...)
			c, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head", Page: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, on := range suite.FailOns() {
				if got := c.Fails(suite.FailOn(on)); got != tc.fails[suite.FailOn(on)] {
					t.Errorf("--fail-on %s: %v, want %v", on, got, !got)
				}
			}
		})
	}
}

func TestComparePagesAndRefusesBadRequests(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for i := range 120 {
		sc := fmt.Sprintf("s-%03d", i)
		indexCases(t, st, "base", sc, nil, "pass")
		head := "pass"
		if i%40 == 39 {
			head = "fail"
		}
		indexCases(t, st, "head", sc, nil, head)
	}
	c, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head", Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pages != 3 || len(c.Rows) != suite.RowsPerPage || c.Rows[0].Scenario != "s-039" || c.Rows[2].Scenario != "s-119" || c.Rows[3].Class != store.Unchanged {
		t.Fatalf("page 1 of %d: %d rows, %+v", c.Pages, len(c.Rows), c.Rows[:4])
	}
	l := suite.LinksOf(c.Rows[0])
	if l.BaseRun != "base-s-039-1" || l.HeadRun != "head-s-039-1" || l.FailedCheck != "" {
		t.Fatalf("links %+v", l)
	}
	last, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head", Page: 99})
	if err != nil || last.Page != 3 || len(last.Rows) != 20 {
		t.Fatalf("past the end: page %d, %d rows, %v", last.Page, len(last.Rows), err)
	}
	reg, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head", Class: store.Regressed, Page: 1})
	if err != nil || reg.Shown() != 3 || len(reg.Rows) != 3 || reg.Pages != 1 {
		t.Fatalf("regressed only: %d shown, %d rows, %v", reg.Shown(), len(reg.Rows), err)
	}
	all, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head"})
	if err != nil || len(all.Rows) != 120 {
		t.Fatalf("every row: %d, %v", len(all.Rows), err)
	}
	if _, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "head", Head: "head"}); !errors.Is(err, suite.ErrSameSuite) {
		t.Fatalf("same suite: %v", err)
	}
	if _, err := suite.Compare(ctx, st, suite.CompareRequest{Base: "base", Head: "head", Class: "worse"}); err == nil || !strings.Contains(err.Error(), `class: want one of`) {
		t.Fatalf("bad class: %v", err)
	}
}

func TestSideStats(t *testing.T) {
	s := suite.StatsOf(store.CompareSide{Count: 4, Runs: 4, Passed: 3, Tokens: 4000, Cost: 0.2, Priced: 4, Millis: 8000, Ended: 4})
	if s.Rate != 0.75 || s.PassK || s.Tokens != 1000 || s.Cost == nil || math.Abs(*s.Cost-0.05) > 1e-12 || s.Seconds == nil || *s.Seconds != 2 {
		t.Fatalf("%+v", s)
	}
	unpriced := suite.StatsOf(store.CompareSide{Count: 4, Runs: 4, Passed: 4, Cost: 0.2, Priced: 3})
	if unpriced.Cost != nil || unpriced.Seconds != nil || !unpriced.PassK {
		t.Fatalf("a run without a price leaves the cost unknown, not lower: %+v", unpriced)
	}
	if d := suite.Delta(s.Cost, unpriced.Cost); d != nil {
		t.Fatalf("delta with an unknown side: %v", *d)
	}
}

// A receipt's model name and a verdict's check name are the agent's
// words: the text and markdown a comparison writes carry no control
// character of theirs (a terminal's escape sequence), and markdown none of
// their markup.
func TestCompareOutputKeepsABundlesTextInert(t *testing.T) {
	st := openStore(t)
	indexCases(t, st, "base", "s", nil, "pass")
	indexCases(t, st, "head", "s", nil, "fail")
	c, err := suite.Compare(context.Background(), st, suite.CompareRequest{Base: "base", Head: "head"})
	if err != nil {
		t.Fatal(err)
	}
	c.ByModel = true
	c.Rows[0].Model = "m\x1b]0;owned\x07 | <img src=x> [x](javascript:y)"
	c.Rows[0].Head.FailCheck = "c\x1b[2J"
	for _, format := range []string{"text", "markdown"} {
		var b strings.Builder
		if err := c.Write(&b, suite.CompareOutput{Format: format}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s holds a control character:\n%q", format, out)
		}
		if format == "markdown" && (strings.Contains(out, "<img") || regexp.MustCompile(`[^\\]\]\(javascript`).MatchString(out) || strings.Contains(out, "m\ufffd]0;owned\ufffd |")) {
			t.Errorf("markdown lets the name's markup through:\n%s", out)
		}
	}
}
