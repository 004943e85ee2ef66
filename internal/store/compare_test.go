package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// suiteRuns are the runs of a scenario in a suite, one per letter of
// outcomes: P passed, F failed (its first failing check "tests"), R no
// verdict yet.
func suiteRuns(n *int, suite, scenario, agent, model, outcomes string) []*bundle.Run {
	var out []*bundle.Run
	for i, o := range outcomes {
		*n++
		r := run(*n, bundle.StatusPassed, bundle.KindScenario, model)
		r.Dir = "/bundles/runs/" + suite + "/" + r.Receipt.RunID
		r.Receipt.Scenario = &bundle.ScenarioRef{ID: scenario, Repeat: i + 1, Suite: suite}
		r.Receipt.Usage = bundle.Usage{PromptTokens: 900, CompletionTokens: 100, TotalTokens: 1000}
		if agent != "native" {
			r.Receipt.Agent = &bundle.Agent{Kind: agent, Name: agent}
		}
		switch o {
		case 'P':
			r.Verdict = &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: true}
		case 'F':
			r.Receipt.Status = bundle.StatusFailed
			r.Verdict = &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, FirstFailure: "tests pass"}
		case 'R':
			r.Receipt.Status, r.Receipt.EndedAt = bundle.StatusRunning, nil
		}
		out = append(out, r)
	}
	return out
}

func TestCompareSuitesClassesEachScenario(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	cases := []struct{ scenario, base, head, class string }{
		{"s-regressed", "PPP", "FFF", store.Regressed},
		{"s-regressed-from-flaky", "PFP", "FFF", store.Regressed},
		{"s-newly-flaky", "PPP", "PFP", store.NewlyFlaky},
		{"s-still-failing", "FFF", "FFF", store.StillFailing},
		{"s-still-flaky", "PFF", "FFP", store.StillFailing},
		{"s-removed", "PPP", "", store.Removed},
		{"s-pending", "PPP", "PRR", store.Pending},
		{"s-fixed", "FFF", "PPP", store.Fixed},
		{"s-fixed-flaky", "PFP", "PPP", store.Fixed},
		{"s-partly-fixed", "FFF", "FPF", store.Fixed},
		{"s-added", "", "PFP", store.Added},
		{"s-unchanged", "PPP", "PPP", store.Unchanged},
	}
	var runs []*bundle.Run
	n := 0
	for _, c := range cases {
		runs = append(runs, suiteRuns(&n, "suite-base", c.scenario, "native", "gpt-4o", c.base)...)
		runs = append(runs, suiteRuns(&n, "suite-head", c.scenario, "native", "gpt-4o", c.head)...)
	}
	runs = append(runs, suiteRuns(&n, "suite-other", "s-regressed", "native", "gpt-4o", "PPP")...) // not compared
	apply(t, st, runs...)

	cmp, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-base", Head: "suite-head"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.ByModel {
		t.Fatal("the suites ran the same agent and model, so the rows should be by model")
	}
	got := map[string]store.CompareRow{}
	var order []string
	for _, r := range cmp.Rows {
		got[r.Scenario] = r
		order = append(order, r.Class)
	}
	for _, c := range cases {
		if got[c.scenario].Class != c.class {
			t.Errorf("%s %s → %s: class %q, want %q", c.scenario, c.base, c.head, got[c.scenario].Class, c.class)
		}
	}
	rank := map[string]int{}
	for i, c := range store.CompareClasses() {
		rank[c] = i
	}
	for i := 1; i < len(order); i++ {
		if rank[order[i-1]] > rank[order[i]] {
			t.Fatalf("rows are not in class order: %v", order)
		}
	}
	if cmp.Rows[0].Class != store.Regressed || cmp.Classes[store.Regressed] != 2 || cmp.Classes[store.Fixed] != 3 || len(cmp.Rows) != len(cases)-1+1 {
		t.Fatalf("first %s, classes %v, %d rows", cmp.Rows[0].Class, cmp.Classes, len(cmp.Rows))
	}

	reg := got["s-regressed"]
	if reg.Head.FailRun == "" || reg.Head.FailCheck != "tests pass" || reg.Base.PassRun == "" || reg.Head.PassRun != "" ||
		!strings.HasPrefix(reg.Head.FailRun, "run-") || reg.Base.Runs != 3 || reg.Head.Passed != 0 || reg.Head.Tokens != 3000 {
		t.Fatalf("regressed row %+v", reg)
	}
	if p := got["s-pending"]; p.Head.Count != 3 || p.Head.Runs != 1 || p.Head.Ended != 1 || p.Head.Millis != 30000 {
		t.Fatalf("pending row %+v", p.Head)
	}
	if cmp.Base.Rows != 11 || cmp.Head.Rows != 11 || cmp.Base.AllPass != 5 || cmp.Head.AllPass != 3 || cmp.Base.Count != 33 || cmp.Head.Count != 33 {
		t.Fatalf("totals base %+v head %+v", cmp.Base, cmp.Head)
	}
	if cmp.Base.Priced != 33 || cmp.Base.Cost < 0.1 || cmp.Base.Cost > 0.11 { // 33 × 900 in, 100 out at gpt-4o's built-in $2.50/$10
		t.Fatalf("base cost: %+v", cmp.Base)
	}

	// A class, a page.
	page, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-base", Head: "suite-head", Class: store.Fixed, Offset: 1, Limit: 1})
	if err != nil || len(page.Rows) != 1 || page.Rows[0].Scenario != "s-fixed-flaky" || page.Classes[store.Fixed] != 3 {
		t.Fatalf("second fixed row: %+v %v", page.Rows, err)
	}
	if _, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-base", Head: "suite-head", Class: "worse"}); err == nil || !strings.Contains(err.Error(), `class "worse": want one of regressed, newly-flaky`) {
		t.Fatalf("unknown class: %v", err)
	}
	if _, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-base", Head: "suite-nope"}); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "suite-nope") {
		t.Fatalf("unknown suite: %v", err)
	}
}

func TestCompareSuitesOfOtherModelsPoolsEachScenario(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	n := 0
	var runs []*bundle.Run
	runs = append(runs, suiteRuns(&n, "suite-old", "s-1", "native", "gpt-4o", "PP")...)
	runs = append(runs, suiteRuns(&n, "suite-new", "s-1", "native", "gpt-5", "PF")...)
	runs = append(runs, suiteRuns(&n, "suite-new", "s-1", "codex", "gpt-5", "FF")...)
	runs = append(runs, suiteRuns(&n, "suite-both", "s-1", "native", "gpt-4o", "PP")...)
	runs = append(runs, suiteRuns(&n, "suite-both", "s-1", "codex", "gpt-4o", "FF")...)
	runs = append(runs, suiteRuns(&n, "suite-both2", "s-1", "native", "gpt-4o", "FF")...)
	runs = append(runs, suiteRuns(&n, "suite-both2", "s-1", "codex", "gpt-4o", "PP")...)
	apply(t, st, runs...)

	cmp, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-old", Head: "suite-new"})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.ByModel || len(cmp.Rows) != 1 || cmp.Rows[0].Head.Runs != 4 || cmp.Rows[0].Head.Passed != 1 || cmp.Rows[0].Class != store.NewlyFlaky {
		t.Fatalf("pooled: by model %v, rows %+v", cmp.ByModel, cmp.Rows)
	}
	cmp, err = st.CompareSuites(ctx, store.CompareQuery{Base: "suite-both", Head: "suite-both2"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.ByModel || len(cmp.Rows) != 2 || cmp.Rows[0].Agent != "native" || cmp.Rows[0].Class != store.Regressed || cmp.Rows[1].Agent != "codex" || cmp.Rows[1].Class != store.Fixed {
		t.Fatalf("by agent and model: %+v", cmp.Rows)
	}
}

// TestCompareTwoSuitesOfTenThousandScenarios compares two suites of 10,000
// scenarios each: the classes are counted by SQL over every row, and a
// page reads 50.
func TestCompareTwoSuitesOfTenThousandScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes 20,000 runs")
	}
	ctx := context.Background()
	st := openStore(t)
	const scenarios = 10000
	n := 0
	var runs []*bundle.Run
	want := map[string]int{}
	for i := range scenarios {
		base, head, class := "P", "P", store.Unchanged
		switch {
		case i%1000 == 7:
			head, class = "F", store.Regressed
		case i%500 == 3:
			base, class = "F", store.Fixed
		case i%250 == 1:
			base, head, class = "F", "F", store.StillFailing
		}
		want[class]++
		id := fmt.Sprintf("scn-%05d", i)
		runs = append(runs, suiteRuns(&n, "suite-a", id, "native", "m", base)...)
		runs = append(runs, suiteRuns(&n, "suite-b", id, "native", "m", head)...)
		if len(runs) >= 5000 {
			apply(t, st, runs...)
			runs = nil
		}
	}
	apply(t, st, runs...)

	t0 := time.Now()
	cmp, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-a", Head: "suite-b", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compared two suites of %d scenarios in %s", scenarios, time.Since(t0))
	for _, c := range store.CompareClasses() {
		if cmp.Classes[c] != want[c] {
			t.Errorf("%s: %d rows, want %d", c, cmp.Classes[c], want[c])
		}
	}
	if len(cmp.Rows) != 50 || cmp.Rows[0].Class != store.Regressed || cmp.Rows[0].Scenario != "scn-00007" || cmp.Rows[9].Class != store.Regressed || cmp.Rows[10].Class != store.StillFailing {
		t.Fatalf("first page: %d rows, first %+v", len(cmp.Rows), cmp.Rows[0])
	}
	if cmp.Head.Rows != scenarios || cmp.Head.AllPass != scenarios-want[store.Regressed]-want[store.StillFailing] || cmp.Base.Tokens != 1000*scenarios {
		t.Fatalf("totals: head %+v base %+v", cmp.Head, cmp.Base)
	}
	last, err := st.CompareSuites(ctx, store.CompareQuery{Base: "suite-a", Head: "suite-b", Offset: scenarios - 3, Limit: 50})
	if err != nil || len(last.Rows) != 3 || last.Rows[2].Scenario != "scn-09999" || last.Rows[2].Class != store.Unchanged {
		t.Fatalf("last page: %+v %v", last.Rows, err)
	}
}
