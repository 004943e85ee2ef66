//go:build e2e

package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// A single-user dashboard answers a browser without its secret with a page
// that says what to open; the address serve prints opens it in one click
// (the secret moves into a cookie and out of the address), and every page
// and button after it works.
func TestTheDashboardNeedsItsSecret(t *testing.T) {
	a := startApp(t)
	ctx, err := shared.browser.NewContext()
	must(t, err)
	defer ctx.Close()
	page, err := ctx.NewPage()
	must(t, err)
	resp, err := page.Goto(a.URL + "/runs")
	must(t, err)
	if resp.Status() != 401 {
		t.Fatalf("without the secret: %d, want 401", resp.Status())
	}
	must(t, expect.Locator(page.Locator("main")).ToContainText("needs its secret"))
	if n, _ := page.Locator("nav[aria-label=Main]").Count(); n != 0 {
		t.Error("the page without the secret shows the dashboard's navigation")
	}
	screenshot(t, page, "local-secret-needed")

	// A newcomer opens the printed address and runs the demo.
	goTo(t, page, a.URL+"/?token="+localSecret)
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs$`)))
	must(t, expect.Locator(page.Locator("nav[aria-label=Main]")).ToBeVisible())
	must(t, page.Locator("#run-demo").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/[0-9]`)))
	must(t, page.Locator("nav[aria-label=Main] a", playwright.PageLocatorOptions{HasText: "Launch"}).Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/launch$`)))
}
