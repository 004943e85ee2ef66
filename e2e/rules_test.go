//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// launchInvoice launches the demo's model script (a conversation of its
// own each time) on the invoice folder from the Launch form; its agent asks
// to run go test ./... .
func launchInvoice(t *testing.T, a *app, page playwright.Page) {
	t.Helper()
	script, err := os.ReadFile("../internal/demo/demo.yaml")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(a.Roots, "demo.yaml"), script, 0o644))
	goTo(t, page, a.URL+"/launch")
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#script").Fill("demo.yaml"))
	must(t, page.Locator("#task").Fill("Fix the rounding bug in invoice totals."))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/\d{8}-\d{6}-[a-z0-9]{6}$`)))
}

// A rule made from an approval box allows the next run's command without
// asking (the transcript says which rule); revoked on the Rules page, the
// next run asks again.
func TestARuleFromAnApprovalBoxThenRevoked(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	long := playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}
	longText := playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}

	launchInvoice(t, a, page)
	box := page.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("go test ./...", long))
	must(t, box.Locator(".make-rule summary").Click())
	must(t, expect.Locator(box.Locator("input[name=rule_command]")).ToHaveValue("go test"))
	must(t, expect.Locator(box.Locator("select[name=rule_scope]")).ToHaveValue("source"))
	screenshot(t, page, "rule-from-approval")
	must(t, box.Locator(".approve-rule").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", longText))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("rule #1 made"))

	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Rules", Exact: playwright.Bool(true)}).Click())
	row := page.Locator("#rule-1")
	must(t, expect.Locator(row).ToContainText("active"))
	must(t, expect.Locator(row).ToHaveText(regexp.MustCompile(`run_command\s+go test …\s+in `+regexp.QuoteMeta(filepath.Join(a.Roots, "invoice"))))) // no raw backticks
	must(t, expect.Locator(row.Locator("code")).ToHaveText("go test …"))
	must(t, expect.Locator(row).ToContainText("e2e"))

	// The next run on the same folder is not asked about: the rule allows it.
	launchInvoice(t, a, page)
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", longText))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("approved by rule #1: allowed by rule #1"))
	must(t, expect.Locator(page.Locator("#timeline-list")).ToContainText("rule #1"))

	// Revoked, it stops at once: the next run asks again.
	goTo(t, page, a.URL+"/rules")
	answerNextDialog(t, page, false, "Revoke rule 1?")
	must(t, page.Locator("#rule-1 .revoke").Click())
	must(t, expect.Locator(page.Locator("#rule-1")).ToContainText("active"))
	answerNextDialog(t, page, true, "Revoke rule 1?")
	must(t, page.Locator("#rule-1 .revoke").Click())
	must(t, expect.Locator(page.Locator("#rule-1")).ToContainText("revoked"))
	must(t, expect.Locator(page.Locator("#rule-1 .revoke")).ToHaveCount(0))
	launchInvoice(t, a, page)
	must(t, expect.Locator(page.Locator("#approvals")).ToContainText("go test ./...", long))
	must(t, page.Locator("#approvals .deny-call").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).Not().ToHaveText("awaiting approval", longText))

	goTo(t, page, a.URL+"/audit")
	must(t, expect.Locator(page.Locator("#audit")).ToContainText("rule-add"))
	must(t, expect.Locator(page.Locator("#audit")).ToContainText("rule-revoke"))
}

// The server stops while a run waits for an approval; after the restart
// the run page offers Resume, and the resumed run asks the same approval
// again, then waits for review with the change made before the stop.
func TestStopTheServerWhileARunWaitsThenResume(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	long := playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}
	launchInvoice(t, a, page)
	must(t, expect.Locator(page.Locator("#approvals")).ToContainText("go test ./...", long))
	first := page.URL()[strings.LastIndex(page.URL(), "/")+1:]

	page.Close() // its event stream would reach for the stopped server
	a = a.restart(t)
	page = newPage(t)
	goTo(t, page, a.URL+"/runs/"+first)
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("interrupted"))
	must(t, os.WriteFile(filepath.Join(a.Roots, "after.yaml"), []byte("steps:\n  - expect: {last_role: tool}\n    reply: {content: Tested after the restart.}\n"), 0o644))
	must(t, page.Locator("#resume-script").Fill("after.yaml"))
	screenshot(t, page, "resume-interrupted")
	must(t, page.Locator("#resume").Click())
	must(t, expect.Locator(page.Locator("#resumes")).ToContainText("interrupted run "+first))
	box := page.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("go test ./...", long))
	must(t, box.Locator(".approve-call").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("math.Round"))
}

// Each demo run works on a fresh copy of the demo project, and a rule made
// "in" its source is made for the demo project, so the next demo run's
// command is allowed by it (a rule made for one run's copy never applied
// again).
func TestARuleMadeOnTheDemoAppliesToTheNextDemo(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	longText := playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	box := page.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("go test", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, box.Locator(".make-rule summary").Click())
	must(t, expect.Locator(box.Locator("select[name=rule_scope] option[value=source]")).ToHaveText(regexp.MustCompile(`^in /.*/demo/invoice$`)))
	must(t, box.Locator(".approve-rule").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", longText))

	goTo(t, page, a.URL+"/rules")
	must(t, expect.Locator(page.Locator("#rule-1")).ToContainText("demo/invoice"))
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", longText))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("approved by rule #1"))
}
