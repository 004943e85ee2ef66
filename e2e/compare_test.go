//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
)

// TestCompareTwoSuitesShowsTheRegressionFirst runs a suite of three
// scenarios, breaks the check of the one whose name sorts last, runs the
// suite again, and compares the two from the suite page: the regression is
// the first row, it names its failing check, and links a run of each
// suite.
func TestCompareTwoSuitesShowsTheRegressionFirst(t *testing.T) {
	a := startApp(t)
	dir := t.TempDir()
	for _, name := range []string{"asks-a-question", "go-rounding-fix", "multi-turn"} {
		must(t, os.CopyFS(filepath.Join(dir, name), os.DirFS("../examples/scenarios/"+name)))
	}
	runSuite := func() string {
		scenarios, probs := scenario.Discover(dir)
		if len(probs) > 0 || len(scenarios) != 3 {
			t.Fatalf("scenarios %d, problems %v", len(scenarios), probs)
		}
		rep := suite.Run(context.Background(), &run.Runner{DataDir: a.DataDir, Environ: os.Environ(), Index: index.Into(a.Store)}, scenarios, nil, suite.Options{Parallel: 2})
		return rep.ID
	}
	base := runSuite()
	spec := filepath.Join(dir, "multi-turn", "scenario.yaml")
	data, err := os.ReadFile(spec)
	must(t, err)
	must(t, os.WriteFile(spec, []byte(strings.Replace(string(data), `text: docstring}`, `text: "a haiku"}`, 1)), 0o644))
	head := runSuite()

	page := newPage(t)
	goTo(t, page, a.URL+"/suites/"+head)
	must(t, page.Locator("#compare-with").Click())
	// Sent without a base, the form says what is missing; the same suite
	// twice, why it cannot compare.
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Compare"}).Click())
	must(t, expect.Locator(page.Locator("#compare-problem")).ToHaveText("Pick the base: the suite (or baseline) to compare "+head+" with."))
	_, err = page.Locator("#compare-base").SelectOption(playwright.SelectOptionValues{Values: &[]string{head}})
	must(t, err)
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Compare"}).Click())
	must(t, expect.Locator(page.Locator("#compare-problem")).ToContainText("the same suite"))
	must(t, expect.Locator(page.Locator("#compare-head")).ToHaveValue(head))
	_, err = page.Locator("#compare-base").SelectOption(playwright.SelectOptionValues{Values: &[]string{base}})
	must(t, err)
	must(t, expect.Locator(page.Locator("#compare-head")).ToHaveValue(head))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Compare"}).Click())

	must(t, expect.Locator(page.Locator("#compare-verdict")).ToHaveText("1 regressed"))
	rows := page.Locator("#compare-rows tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(3))
	first := rows.First()
	must(t, expect.Locator(first).ToHaveAttribute("data-class", "regressed"))
	must(t, expect.Locator(first).ToContainText("multi-turn"))
	must(t, expect.Locator(first).ToContainText("final-mentions-docstring"))
	must(t, expect.Locator(rows.Nth(1)).ToHaveAttribute("data-class", "unchanged"))
	must(t, expect.Locator(page.Locator("#compare-totals")).ToContainText("pass^k"))
	screenshot(t, page, "compare")

	// Only the regressions, by their tab; then each run.
	must(t, page.Locator("#compare-tabs a.cls-regressed").Click())
	must(t, expect.Locator(rows).ToHaveCount(1))
	must(t, first.Locator("a.base-run").Click())
	must(t, expect.Locator(page.Locator("#checks")).ToContainText("final-mentions-docstring"))
	must(t, expect.Locator(page.Locator("main")).ToContainText(base))
	_, err = page.GoBack()
	must(t, err)
	must(t, page.Locator("#compare-rows tbody tr a.head-run").Click())
	must(t, expect.Locator(page.Locator("main")).ToContainText(head))
	must(t, expect.Locator(page.Locator("#checks")).ToContainText("failed"))

	// The two runs side by side: the check that differs is marked, each
	// run's first turn is beside the other's.
	_, err = page.GoBack()
	must(t, err)
	must(t, page.Locator("#compare-rows tbody tr a.pair-runs").Click())
	must(t, expect.Locator(page.Locator("h1")).ToHaveText("Two runs side by side"))
	differs := page.Locator("#pair-checks tr.row-bad")
	must(t, expect.Locator(differs).ToHaveCount(1))
	must(t, expect.Locator(differs).ToContainText("final-mentions-docstring"))
	must(t, expect.Locator(page.Locator("#turn-1 .pair-col")).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#turn-1 .pair-col").Nth(1).Locator("article.role-assistant").First()).ToBeVisible())
	must(t, expect.Locator(page.Locator("#pair-diff .pair-file").First()).ToContainText("greet.py"))
	screenshot(t, page, "compare-runs")

	// The same from a run's page, naming the other run.
	second, err := page.Locator("#pair-runs .pair-col").Nth(1).Locator("a.mono").TextContent()
	must(t, err)
	must(t, page.Locator("#pair-runs .pair-col").First().Locator("a.mono").Click())
	must(t, page.Locator("#pair-with").Fill(second))
	must(t, page.Locator("#pair-form button").Click())
	must(t, expect.Locator(page.Locator("#pair-checks tr.row-bad")).ToContainText("final-mentions-docstring"))
	_, err = page.GoBack()
	must(t, err)
	_, err = page.GoBack()
	must(t, err)

	// Make the base a baseline from its page; the comparison names it.
	goTo(t, page, a.URL+"/suites/"+base)
	must(t, page.Locator("#baseline-name").Fill("main"))
	must(t, page.Locator("#set-baseline").Click())
	must(t, expect.Locator(page.Locator(".baseline-of")).ToHaveText("baseline main"))
	goTo(t, page, a.URL+"/compare?base=main&head="+head)
	must(t, expect.Locator(page.Locator(".page-head")).ToContainText("The base is the baseline main"))
	must(t, expect.Locator(page.Locator("#compare-verdict")).ToHaveText("1 regressed"))
}

// TestAgentsAndModelsOfASuite reads a suite run with three agents and
// models: the table of each, the chart of pass rate against cost (a point
// for each priced one, its numbers on hover), the one without a price
// named under it; and a scenario's recent suites.
func TestAgentsAndModelsOfASuite(t *testing.T) {
	root := t.TempDir()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	n := 0
	write := func(suiteID, agent, model string, passes ...bool) {
		for _, sc := range []string{"fix-rounding", "rename-key"} {
			for k, passed := range passes {
				n++
				id := fmt.Sprintf("20261201-cmp-%04d", n)
				dir := filepath.Join(root, "runs", id)
				must(t, os.MkdirAll(dir, 0o755))
				started := start.Add(time.Duration(n) * time.Minute)
				ended := started.Add(30 * time.Second)
				r := &bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindScenario, Status: bundle.StatusPassed,
					Stage: bundle.StageCompleted, Task: "t", Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: model},
					StartedAt: started, EndedAt: &ended, Usage: bundle.Usage{PromptTokens: 20000, CompletionTokens: 2000, TotalTokens: 22000},
					Scenario: &bundle.ScenarioRef{ID: sc, Repeat: k + 1, Suite: suiteID}}
				if agent != "native" {
					r.Agent = &bundle.Agent{Kind: agent, Name: agent}
				}
				if !passed {
					r.Status = bundle.StatusFailed
				}
				must(t, bundle.WriteReceipt(dir, r))
				must(t, bundle.WriteJSON(filepath.Join(dir, bundle.VerdictFile), &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: sc, Passed: passed, Results: []bundle.CheckResult{}}))
			}
		}
	}
	write("suite-earlier", "native", "gpt-4.1", true, true, true)
	write("suite-models", "native", "gpt-4.1", true, true, false)
	write("suite-models", "codex", "gpt-5", true, true, true)
	write("suite-models", "native", "local-llama", true, false, false)
	a := startApp(t, root)

	page := newPage(t)
	goTo(t, page, a.URL+"/suites/suite-models")
	rows := page.Locator("#models-table tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(3))
	must(t, expect.Locator(rows.First()).ToContainText("codex"))
	must(t, expect.Locator(rows.First()).ToContainText("6/6"))
	must(t, expect.Locator(page.Locator("#cost-chart circle")).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#cost-chart g.point").First()).ToContainText("codex · gpt-5"))
	must(t, expect.Locator(page.Locator("#unpriced")).ToContainText("native · local-llama"))
	must(t, page.Locator("#models").ScrollIntoViewIfNeeded())
	screenshot(t, page, "suite-models")

	goTo(t, page, a.URL+"/scenarios/fix-rounding")
	lines := page.Locator("#scenario-suites tbody tr")
	must(t, expect.Locator(lines).ToHaveCount(4)) // three agents and models in one suite, one in the other
	must(t, expect.Locator(lines.Last()).ToContainText("suite-earlier"))
	must(t, lines.Last().Locator("a").Click())
	must(t, expect.Locator(page.Locator("h1")).ToContainText("suite-earlier"))
}
