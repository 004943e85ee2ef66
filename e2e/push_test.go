//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// A run pushed from another machine's data folder, with its session: its
// page says that approving records the decision and writes nothing here;
// approved part by part, it offers exactly the accepted change, and the
// folder its receipt names is untouched. Its session's page lists it and
// offers no continue.
func TestAPushedRunIsApprovedOnTheHostAndOffered(t *testing.T) {
	a := startApp(t)
	pusher, src := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("one\n"), 0o644))
	sc, err := script.Parse("s.yaml", []byte("steps:\n  - reply:\n      tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"two\\n\"}}, {name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}]\n  - reply: {content: done}\n"))
	must(t, err)
	res, err := (&run.Runner{DataDir: pusher, Environ: os.Environ()}).Run(context.Background(),
		run.Spec{Task: "Change a.txt", Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults(), Session: "new", SourceDir: src})
	must(t, err)
	if res.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("the run: %s", res.Receipt.Status)
	}
	results, err := (&push.Pusher{URL: a.URL, Token: localSecret}).Push(context.Background(), pusher)
	must(t, err)
	for _, r := range results {
		if !r.Pushed() {
			t.Fatalf("push %s: %v", r.Path, r.Err)
		}
	}

	page := newPage(t)
	goTo(t, page, a.URL+"/runs/"+res.RunID)
	must(t, expect.Locator(page.Locator("#review-pushed")).ToContainText("Nothing on this host is written"))
	must(t, page.Locator("h1").Click()) // nothing focused that takes keys
	for _, key := range []string{"j", "a", "j", "r"} {
		must(t, page.Keyboard().Press(key))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("1 of 2 parts accepted, 1 rejected."))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by e2e", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(15000)}))
	must(t, expect.Locator(page.Locator("#offer")).ToContainText("--from URL --to CHECKOUT"))
	screenshot(t, page, "pushed-run-approved")
	accepted, mbox := offered(t, page, a, "#offered-link"), offered(t, page, a, "#mbox-link")
	for name, body := range map[string]string{"the accepted change": accepted, "the mbox": mbox} {
		if !strings.Contains(body, "+two") || strings.Contains(body, "bee") {
			t.Fatalf("%s:\n%s", name, body)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(data) != "one\n" {
		t.Fatalf("the folder the pushed receipt names was written: %q", data)
	}

	goTo(t, page, a.URL+"/sessions/"+res.Receipt.SessionID)
	must(t, expect.Locator(page.Locator("#session-pushed")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#continue-form")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator(".session-runs a[href='/runs/"+res.RunID+"']")).ToBeVisible())
}
