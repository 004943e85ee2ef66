//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

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

	// Make the base a baseline from its page; the comparison names it.
	goTo(t, page, a.URL+"/suites/"+base)
	must(t, page.Locator("#baseline-name").Fill("main"))
	must(t, page.Locator("#set-baseline").Click())
	must(t, expect.Locator(page.Locator(".baseline-of")).ToHaveText("baseline main"))
	goTo(t, page, a.URL+"/compare?base=main&head="+head)
	must(t, expect.Locator(page.Locator(".page-head")).ToContainText("The base is the baseline main"))
	must(t, expect.Locator(page.Locator("#compare-verdict")).ToHaveText("1 regressed"))
}
