//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// At 390 px (a phone) the nav, the runs table, the Launch form, Audit and
// Suites once widened the page past the screen. Every page fits: tables
// scroll inside their own box.
func TestEveryPageFitsAPhone(t *testing.T) {
	a := startApp(t, copyBundles(t))
	ctx, err := shared.browser.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
	must(t, err)
	defer ctx.Close()
	page, err := ctx.NewPage()
	must(t, err)
	// A suite and a scenario history to show.
	goTo(t, page, a.URL+"/suites")
	_, err = page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"rename-config-key"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("1"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	suite := page.URL()
	for _, path := range []string{
		"/runs", "/runs/20261201-093012-k3f9qa", "/runs/20261201-093012-k3f9qa?view=split", "/runs/20261201-101544-m2x7pb",
		"/runs/20261201-093012-k3f9qa/diff/0", "/sessions", "/sessions/sess-20261201-140200-h7", "/suites", suite[len(a.URL):],
		"/scenarios/rename-config-key", "/problems", "/launch", "/audit",
	} {
		goTo(t, page, a.URL+path)
		width, err := page.Evaluate("document.documentElement.scrollWidth")
		must(t, err)
		switch path {
		case "/runs", "/launch", "/runs/20261201-093012-k3f9qa":
			must(t, page.SetViewportSize(390, 844))
			_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String("screenshots/phone" + strings.ReplaceAll(path, "/", "-") + ".png")})
			must(t, err)
		}
		if w, _ := width.(int); w > 390 {
			t.Errorf("%s is %d px wide at 390 px", path, w)
			screenshot(t, page, "phone-too-wide")
		}
	}
}
