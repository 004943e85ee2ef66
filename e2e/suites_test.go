//go:build e2e

package e2e

import (
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
