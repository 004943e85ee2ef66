//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/share"
	"github.com/proctor-dev/proctor/internal/store"
)

// A run downloaded as one HTML file opens from file:// with its
// transcript and diff, and asks no server for anything.
func TestARunExportedOpensOffline(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/20261201-093012-k3f9qa")
	dl, err := page.ExpectDownload(func() error { return page.Locator("#export-link").Click() })
	must(t, err)
	file := filepath.Join(t.TempDir(), dl.SuggestedFilename())
	must(t, dl.SaveAs(file))
	if dl.SuggestedFilename() != "proctor-run-20261201-093012-k3f9qa.html" {
		t.Fatalf("suggested name %q", dl.SuggestedFilename())
	}

	offline := newPage(t)
	var mu sync.Mutex
	var asked []string
	offline.On("request", func(r playwright.Request) {
		mu.Lock()
		asked = append(asked, r.URL())
		mu.Unlock()
	})
	_, err = offline.Goto("file://" + file)
	must(t, err)
	must(t, expect.Locator(offline.Locator("#export-run")).ToHaveText("20261201-093012-k3f9qa"))
	must(t, expect.Locator(offline.Locator("#transcript article.role-user").First()).ToBeVisible())
	must(t, expect.Locator(offline.Locator("#diff tr.add").First()).ToBeVisible())
	screenshot(t, offline, "export")
	mu.Lock()
	defer mu.Unlock()
	for _, u := range asked {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the exported file asked for %s", u)
		}
	}
	if len(asked) != 1 {
		t.Errorf("requests: %v, want the file alone", asked)
	}
}

// A reviewer makes a read-only link to a run; a stranger opens it without
// signing in and reads the run; it stops opening once revoked, and once
// expired.
func TestAShareLinkOpensWithoutSigningInUntilRevokedOrExpired(t *testing.T) {
	a := startApp(t, copyBundles(t))
	addUsers(t, a)
	const run = "20261201-093012-k3f9qa"
	rev := newPage(t)
	goTo(t, rev, a.URL+"/runs/"+run)
	signIn(t, rev, "rev")
	_, err := rev.Locator("#share-expires").SelectOption(playwright.SelectOptionValues{Values: &[]string{"1h"}})
	must(t, err)
	must(t, rev.Locator("#share-run").Click())
	must(t, expect.Locator(rev.Locator("#share-made")).ToContainText("without an account"))
	link, err := rev.Locator("#share-url").InputValue()
	must(t, err)

	stranger := newPage(t)
	goTo(t, stranger, link)
	must(t, expect.Locator(stranger.Locator("#export-run")).ToHaveText(run))
	must(t, expect.Locator(stranger.Locator("#transcript article.role-user").First()).ToBeVisible())
	must(t, expect.Locator(stranger.Locator("#diff tr.add").First()).ToBeVisible())
	must(t, expect.Locator(stranger.Locator("form:visible")).ToHaveCount(0))
	screenshot(t, stranger, "share-opened")
	goTo(t, stranger, a.URL+"/runs/"+run) // the link opens that page alone
	must(t, expect.Page(stranger).ToHaveURL(regexp.MustCompile(`/signin\?next=`)))

	goTo(t, rev, a.URL+"/shares")
	must(t, expect.Locator(rev.Locator("#shares tbody tr")).ToHaveCount(1))
	must(t, expect.Locator(rev.Locator("#shares .share-state")).ToHaveText("live"))
	answerNextDialog(t, rev, false, "Revoke link 1?")
	must(t, rev.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Revoke link 1"}).Click())
	must(t, expect.Locator(rev.Locator("tr[data-share='1'] .share-state")).ToHaveText("live"))
	answerNextDialog(t, rev, true, "Revoke link 1?")
	must(t, rev.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Revoke link 1"}).Click())
	must(t, expect.Locator(rev.Locator("#shares .share-state")).ToContainText("revoked by rev"))
	resp, err := stranger.Goto(link)
	must(t, err)
	if resp.Status() != 404 {
		t.Fatalf("a revoked link: %d", resp.Status())
	}
	must(t, expect.Locator(stranger.Locator("main")).ToContainText("unknown, expired or revoked"))

	// A link that expires in two seconds (made straight in the index: the
	// form's shortest is an hour) opens, then does not.
	secret, err := auth.NewSecret(share.Prefix)
	must(t, err)
	now := time.Now()
	_, err = a.Store.AddShareLink(context.Background(), auth.HashSecret(secret), store.ShareLink{Kind: "run", Object: run, CreatedBy: "rev", CreatedAt: now, ExpiresAt: now.Add(2 * time.Second)})
	must(t, err)
	goTo(t, stranger, a.URL+"/share/"+secret)
	must(t, expect.Locator(stranger.Locator("#export-run")).ToHaveText(run))
	time.Sleep(2500 * time.Millisecond)
	resp, err = stranger.Goto(a.URL + "/share/" + secret)
	must(t, err)
	if resp.Status() != 404 {
		t.Fatalf("an expired link: %d", resp.Status())
	}
}
