//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// At 390 px (a phone) the nav, the runs table, the Launch form, Audit and
// Suites once widened the page past the screen. Every page fits: tables
// scroll inside their own box.
func TestEveryPageFitsAPhone(t *testing.T) {
	a := startApp(t, copyBundles(t))
	ctx := newContext(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
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
	goTo(t, page, a.URL+"/suites") // a second suite to compare with the first
	_, err = page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"rename-config-key"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("1"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	compare := "/compare?base=" + suite[len(a.URL+"/suites/"):] + "&head=" + page.URL()[len(a.URL+"/suites/"):]
	for _, path := range []string{
		"/runs", "/runs/20261201-093012-k3f9qa", "/runs/20261201-093012-k3f9qa?view=split", "/runs/20261201-101544-m2x7pb",
		"/runs/20261201-093012-k3f9qa/diff/0", "/runs/20261201-113020-z8c1rd/calls", "/sessions", "/sessions/sess-20261201-140200-h7", "/suites", suite[len(a.URL):],
		"/scenarios/rename-config-key", "/problems", "/launch", "/audit", "/compare", compare,
	} {
		goTo(t, page, a.URL+path)
		if path == "/suites" { // the scenarios' table, open
			_, err := page.Evaluate("document.getElementById('scenario-list').open = true")
			must(t, err)
		}
		width, err := page.Evaluate("document.documentElement.scrollWidth")
		must(t, err)
		switch path {
		case "/runs", "/launch", "/runs/20261201-093012-k3f9qa", compare:
			must(t, page.SetViewportSize(390, 844))
			_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String("screenshots/phone" + strings.NewReplacer("/", "-", "?", "-", "&", "-", "=", "-").Replace(path)[:min(len(path), 40)] + ".png")})
			must(t, err)
		}
		if w, _ := width.(int); w > 390 {
			t.Errorf("%s is %d px wide at 390 px", path, w)
			screenshot(t, page, "phone-too-wide")
		}
	}

	// A hunk edited before it was applied shows as proposed and as applied,
	// side by side on a laptop and one above the other here (it was 417 px
	// wide); the audit log keeps each date and id on one line (they broke
	// every few characters) and scrolls in its own box.
	desk, _ := partsRun(t, a)
	hunk := desk.Locator("#part-0-1")
	must(t, hunk.Locator(".hunk-edit summary").Click())
	must(t, hunk.Locator(".hunk-edit textarea").Fill("line 17\nline 18\nline 19\nline 20, as the reviewer wants it, with a line long enough to be wider than a phone\nline 21\nline 22\nline 23\n"))
	must(t, desk.Locator("input[aria-label='Accept hunk 2 of notes.txt']").Check())
	must(t, desk.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, desk.Locator("#apply-accepted").Click())
	must(t, expect.Locator(desk.Locator("#review-parts .edit")).ToBeVisible())
	for _, path := range []string{desk.URL()[len(a.URL):], "/audit"} {
		goTo(t, page, a.URL+path)
		if path == "/suites" { // the scenarios' table, open
			_, err := page.Evaluate("document.getElementById('scenario-list').open = true")
			must(t, err)
		}
		width, err := page.Evaluate("document.documentElement.scrollWidth")
		must(t, err)
		if w, _ := width.(int); w > 390 {
			t.Errorf("%s is %d px wide at 390 px", path, w)
			screenshot(t, page, "phone-too-wide")
		}
	}
	tall, err := page.Evaluate(`Math.max(...[...document.querySelectorAll("#audit td.mono")].map(td => td.getBoundingClientRect().height))`)
	must(t, err)
	if h, ok := tall.(float64); !ok || h > 40 {
		t.Errorf("an audit cell is %v px tall at 390 px: a date or id wraps", tall)
	}
	screenshot(t, page, "phone-audit")
}

// At 390 px the page a share link is made on, the links and the rules
// with their Revoke buttons, and a hunk's comment box all fit the screen
// (the first was 785 px wide; the buttons and the box sat off it in tables
// that scroll sideways), and the header scrolls away instead of keeping a
// sixth of the screen.
func TestSharingRulesAndCommentsFitAPhone(t *testing.T) {
	a := startApp(t, copyBundles(t))
	ctx := newContext(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
	defer ctx.Close()
	page, err := ctx.NewPage()
	must(t, err)
	onScreen := func(what string, l playwright.Locator) {
		t.Helper()
		box, err := l.BoundingBox()
		must(t, err)
		if box == nil || box.X < 0 || box.X+box.Width > 390 {
			t.Errorf("%s is not on the screen: %+v", what, box)
		}
	}
	fits := func(what string) {
		t.Helper()
		width, err := page.Evaluate("document.documentElement.scrollWidth")
		must(t, err)
		if w, _ := width.(int); w > 390 {
			t.Errorf("%s is %d px wide at 390 px", what, w)
			screenshot(t, page, "phone-too-wide")
		}
	}
	// A rule, made from an approval box.
	desk := newPage(t)
	launchInvoice(t, a, desk)
	box := desk.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("go test ./...", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, box.Locator(".make-rule summary").Click())
	must(t, box.Locator(".approve-rule").Click())
	must(t, expect.Locator(desk.Locator("#transcript")).ToContainText("rule #1 made", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))

	goTo(t, page, a.URL+"/runs/20261201-093012-k3f9qa")
	must(t, page.Locator("#share-run").Click())
	must(t, expect.Locator(page.Locator("#share-url")).ToBeVisible())
	fits("the page of a link just made")
	onScreen("the link", page.Locator("#share-url"))
	must(t, page.Locator("#copy-share").Click())
	must(t, expect.Locator(page.Locator("#copy-share-done")).ToHaveText(regexp.MustCompile(`^(Copied\.|Selected: press Ctrl\+C to copy\.)$`)))
	pos, err := page.Evaluate(`getComputedStyle(document.querySelector(".top")).position`)
	must(t, err)
	if pos != "static" {
		t.Errorf("the header is %v at 390 px", pos)
	}
	goTo(t, page, a.URL+"/shares")
	fits("/shares")
	onScreen("a link's Revoke", page.Locator("#shares button").First())
	goTo(t, page, a.URL+"/rules")
	fits("/rules")
	onScreen("a rule's Revoke", page.Locator("#rule-1 .revoke"))

	parts, _ := partsRun(t, a)
	goTo(t, page, parts.URL())
	must(t, page.Locator("#part-0-1 .ln-btn[data-line='20']").Click())
	onScreen("a line's comment box", page.Locator("#part-0-1 .line-comment textarea"))
	fits("a run's page with a comment box open")
}
