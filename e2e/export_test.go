//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
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
