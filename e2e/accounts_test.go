//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
)

// addUsers turns sign-in on for a: vic (viewer), rev (reviewer), ada (admin),
// each with the password "<name>-password".
func addUsers(t *testing.T, a *app) {
	t.Helper()
	for name, role := range map[string]auth.Role{"vic": auth.Viewer, "rev": auth.Reviewer, "ada": auth.Admin} {
		h, err := auth.HashPassword(name+"-password", auth.Params{Time: 1, Memory: 64, Threads: 1})
		must(t, err)
		must(t, a.Store.AddUser(context.Background(), store.User{Name: name, Role: string(role), PasswordHash: h}))
	}
}

func signIn(t *testing.T, page playwright.Page, user string) {
	t.Helper()
	must(t, page.Locator("input[name=user]").Fill(user))
	must(t, page.Locator("input[name=password]").Fill(user+"-password"))
	must(t, page.Locator("#signin").Click())
	must(t, expect.Locator(page.Locator("#whoami")).ToHaveText(user))
}

func signOut(t *testing.T, page playwright.Page) {
	t.Helper()
	must(t, page.Locator("#signout").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/signin$`)))
}

func TestSignInReviewByRoleAndSignOut(t *testing.T) {
	a := startApp(t)
	addUsers(t, a)
	page := newPage(t)

	// Every page sends a stranger to sign-in, and back after it.
	goTo(t, page, a.URL+"/runs?status=failed")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/signin\?next=`)))
	must(t, page.Locator("input[name=user]").Fill("ada"))
	must(t, page.Locator("input[name=password]").Fill("wrong-password"))
	must(t, page.Locator("#signin").Click())
	must(t, expect.Locator(page.Locator("#signin-error")).ToHaveText("Wrong user name or password."))
	screenshot(t, page, "signin-error")
	signIn(t, page, "ada")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs\?status=failed$`)))

	// The admin launches the demo and lets its command run.
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	must(t, page.Locator(".approve-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#approve")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	runURL := page.URL()
	id := runURL[strings.LastIndex(runURL, "/")+1:]
	signOut(t, page)

	// A viewer reads the run but has no buttons, and a crafted POST with a
	// valid CSRF token is still refused.
	goTo(t, page, runURL)
	signIn(t, page, "vic")
	must(t, expect.Page(page).ToHaveURL(runURL))
	must(t, expect.Locator(page.Locator("#review-not-allowed")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#approve")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#reject")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#run-demo")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("a[href='/launch']")).ToHaveCount(0))
	screenshot(t, page, "viewer-run-page")
	csrf, err := page.Locator("body").GetAttribute("hx-headers")
	must(t, err)
	token := regexp.MustCompile(`[0-9a-f]{64}`).FindString(csrf)
	resp, err := page.Request().Post(a.URL+"/runs/"+id+"/review", playwright.APIRequestContextPostOptions{
		Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": token},
		Data:    url.Values{"decision": {"approve"}, "reviewer": {"vic"}}.Encode(),
	})
	must(t, err)
	if resp.Status() != 403 {
		t.Fatalf("a viewer's crafted approve: status %d, want 403", resp.Status())
	}
	signOut(t, page)

	// A reviewer approves; the decision names them, not a form field.
	goTo(t, page, runURL)
	signIn(t, page, "rev")
	must(t, expect.Locator(page.Locator("input[name=reviewer]")).ToHaveCount(0))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by rev"))
	screenshot(t, page, "reviewer-approved")
	// A reviewer may not launch runs.
	goTo(t, page, a.URL+"/runs")
	must(t, expect.Locator(page.Locator("#run-demo")).ToHaveCount(0))
	signOut(t, page)

	// The admin's audit page lists the sign-ins, the launch and the approval.
	goTo(t, page, a.URL+"/audit")
	signIn(t, page, "ada")
	audit := page.Locator("#audit")
	must(t, expect.Locator(audit).ToContainText("signin-failed"))
	// One person is named one way: ada's sign-in is by ada (it said "local").
	must(t, expect.Locator(audit.Locator("tr:has(td.audit-signin)").Filter(playwright.LocatorFilterOptions{HasText: "ada"}).First().Locator("td").Nth(1)).ToHaveText("ada"))
	must(t, expect.Locator(audit.Locator("tr:has(td.audit-signin-failed)").First().Locator("td").Nth(1)).ToHaveText("anonymous"))
	must(t, expect.Locator(audit).ToContainText("demo"))
	must(t, expect.Locator(audit.Locator("tr:has(td.audit-approve)").Filter(playwright.LocatorFilterOptions{HasText: id})).ToContainText("rev"))
	screenshot(t, page, "audit")
}

func TestExpiredSessionGoesToSignIn(t *testing.T) {
	a := startApp(t, "../testdata/bundles")
	addUsers(t, a)
	page := newPage(t)
	goTo(t, page, a.URL+"/sessions")
	signIn(t, page, "vic")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/sessions$`)))
	// Every session expires.
	must(t, a.Store.PurgeWebSessions(context.Background(), time.Now().Add(24*time.Hour)))
	goTo(t, page, a.URL+"/runs")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/signin\?next=%2Fruns$`)))
	must(t, expect.Locator(page.Locator("#signin")).ToBeVisible())
}

// The run page offers each role what it may do: a viewer sees no Stop and
// is told a reviewer answers the agent's request; the admin sees Stop; a
// reviewer answers the request and asks for changes (asking for changes
// is reviewing), which starts the agent's next run.
func TestTheRunPageOffersEachRoleWhatItMay(t *testing.T) {
	a := startApp(t)
	addUsers(t, a)
	must(t, os.WriteFile(filepath.Join(a.Roots, "nothing.yaml"), []byte("steps:\n  - reply: {content: Nothing to change.}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	signIn(t, page, "ada")
	must(t, page.Locator("#run-demo").Click())
	must(t, expect.Locator(page.Locator(".approve-call")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#stop-run")).ToBeVisible())
	runURL := page.URL()
	signOut(t, page)

	goTo(t, page, runURL)
	signIn(t, page, "vic")
	must(t, expect.Locator(page.Locator("#approvals h2")).ToHaveText("The agent waits for a reviewer's approval"))
	must(t, expect.Locator(page.Locator(".approve-call")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#stop-run")).ToHaveCount(0))
	screenshot(t, page, "viewer-waiting-run")
	signOut(t, page)

	goTo(t, page, runURL)
	signIn(t, page, "rev")
	must(t, expect.Locator(page.Locator("#approvals h2")).ToHaveText("The agent waits for your approval"))
	must(t, expect.Locator(page.Locator("#stop-run")).ToHaveCount(0))
	must(t, page.Locator(".approve-call").Click())
	must(t, expect.Locator(page.Locator("#approve")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	requestChanges(t, page, "Round half up, please.", "nothing.yaml")
	must(t, expect.Locator(page.Locator("#addressing")).ToContainText("asked by rev"))
}
