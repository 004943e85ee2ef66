//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The Suites form once forgot its input after an error (every scenario
// selected again, the tag field emptied), its Model select had no label,
// and /suites/nope answered 200 "still working".
func TestSuitesFormKeepsItsInputAfterAnError(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/suites")
	_, err := page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"fails-scope"}})
	must(t, err)
	must(t, page.Locator("#tags").Fill("go, refactor"))
	must(t, page.Locator("#repeat").Fill("0"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Locator(page.Locator("#repeat-error")).ToContainText("from 1 to 100"))
	must(t, expect.Locator(page.Locator("#tags")).ToHaveValue("go, refactor"))
	must(t, expect.Locator(page.Locator("#repeat")).ToHaveValue("0"))
	must(t, expect.Locator(page.Locator("#scenarios")).ToHaveValues([]any{"fails-scope"}))
	must(t, expect.Locator(page.GetByLabel("Model", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeVisible())
	resp, err := page.Request().Get(a.URL + "/suites/nope")
	must(t, err)
	if resp.Status() != 404 {
		t.Fatalf("/suites/nope: %d, want 404", resp.Status())
	}
}

// A run becomes a regression scenario from its page: Make a scenario
// writes it into the dashboard's scenario folder, the Suites page lists it
// with a link to the run it was made from, and it runs and passes there.
func TestMakeAScenarioFromARunAndRunIt(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/suites")
	_, err := page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"rename-config-key"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("1"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k: 1 of 1 scenarios", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, page.Locator("#matrix td.cell-pass a").First().Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/`)))
	runURL := page.URL()
	must(t, page.Locator("#scenario-name").Fill("kept-rename"))
	must(t, page.Locator("#make-scenario").Click())
	must(t, expect.Locator(page.Locator("#scenario-made")).ToContainText("checks"))
	screenshot(t, page, "scenario-made")
	must(t, page.Locator("#to-suites").Click())
	must(t, page.Locator("#scenario-list summary").Click())
	row := page.Locator("#scenario-kept-rename")
	must(t, expect.Locator(row).ToContainText("run "))
	href, err := row.Locator("a").GetAttribute("href")
	must(t, err)
	if !strings.HasSuffix(runURL, href) {
		t.Fatalf("the scenario links to %s, want the run %s", href, runURL)
	}
	_, err = page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"kept-rename"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("1"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k: 1 of 1 scenarios", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator(`#matrix tr[data-scenario="kept-rename"]`)).ToContainText("1/1"))
	// The scenario's run goes on as a session from its page.
	goTo(t, page, runURL)
	must(t, page.Locator("#continue-as-session").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/sessions/sess-`)))
	must(t, expect.Locator(page.Locator("#continue-form")).ToBeVisible())
}
