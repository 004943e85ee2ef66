//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/testutil"
)

// The Launch form takes a git repository instead of a folder: the run
// clones its commit, and the run page says where the source came from.
func TestLaunchOnAGitRepository(t *testing.T) {
	base, caEnv, commits := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	a := startApp(t)
	must(t, os.WriteFile(filepath.Join(a.Roots, "repo.yaml"), []byte("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}]}\n  - reply: {content: Wrote b.txt.}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, page.Locator("#repo-fields summary").Click())
	must(t, page.Locator("#repo").Fill("git@example.com:o/n.git"))
	must(t, page.Locator("#task").Fill("Add b.txt."))
	must(t, page.Locator("#script").Fill("repo.yaml"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator("#repo-error")).ToContainText("only https URLs"))
	must(t, page.Locator("#repo").Fill(base+"/public.git"))
	must(t, page.Locator("#ref").Fill("release"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#summary, .facts").First()).ToContainText("git"))
	must(t, expect.Locator(page.Locator(".facts").First()).ToContainText(commits["public"][:12]))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("b.txt"))
	// Approving offers the change as a patch and an mbox; nothing is applied.
	must(t, expect.Locator(page.Locator("#review-git")).ToContainText("offers the change as a patch"))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by"))
	must(t, expect.Locator(page.Locator("#offer")).ToContainText("proctor apply --to CHECKOUT"))
	if mbox := offered(t, page, a, "#mbox-link"); !strings.Contains(mbox, "Subject: [PATCH] Add b.txt.") || !strings.Contains(mbox, "+bee") {
		t.Fatalf("patch.mbox:\n%s", mbox)
	}
}

// A git run's diff is decided part by part too: what it then offers (the
// patch and the mbox) holds the accepted files only.
func TestAGitRunApprovedPartByPart(t *testing.T) {
	base, caEnv, _ := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	a := startApp(t)
	must(t, os.WriteFile(filepath.Join(a.Roots, "two.yaml"), []byte("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}, {name: write_file, arguments: {path: c.txt, content: \"sea\\n\"}}]}\n  - reply: {content: Wrote b.txt and c.txt.}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, page.Locator("#repo-fields summary").Click())
	must(t, page.Locator("#repo").Fill(base+"/public.git"))
	must(t, page.Locator("#task").Fill("Add b.txt."))
	must(t, page.Locator("#script").Fill("two.yaml"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator("#apply-accepted")).ToHaveText("Approve accepted", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, page.Locator("h1").Click()) // nothing focused that takes keys
	for _, key := range []string{"j", "a", "j", "r"} {
		must(t, page.Keyboard().Press(key))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("1 of 2 parts accepted, 1 rejected."))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("1 part accepted, 1 not"))
	must(t, expect.Locator(page.Locator("#offered-link")).ToHaveText("accepted.patch"))
	if p := offered(t, page, a, "#offered-link"); !strings.Contains(p, "+bee") || strings.Contains(p, "c.txt") {
		t.Fatalf("accepted.patch:\n%s", p)
	}
	if mbox := offered(t, page, a, "#mbox-link"); !strings.Contains(mbox, "+bee") || strings.Contains(mbox, "sea") {
		t.Fatalf("patch.mbox:\n%s", mbox)
	}
}

// offered fetches the file the page's link (selector) offers.
func offered(t *testing.T, page playwright.Page, a *app, selector string) string {
	t.Helper()
	href, err := page.Locator(selector).GetAttribute("href")
	must(t, err)
	resp, err := page.Request().Get(a.URL + href)
	must(t, err)
	body, err := resp.Text()
	must(t, err)
	if resp.Status() != 200 {
		t.Fatalf("%s: %d\n%s", href, resp.Status(), body)
	}
	return body
}
