//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// While an approved command runs, what it prints reaches the page line by
// line: the first line shows before the command has ended.
func TestACommandsOutputStreamsIntoThePage(t *testing.T) {
	a := startApp(t)
	must(t, os.MkdirAll(filepath.Join(a.Roots, "slow"), 0o755))
	must(t, os.WriteFile(filepath.Join(a.Roots, "slow", "a.txt"), []byte("a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "slow.yaml"), []byte(
		"steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: 'echo compiling; sleep 5; echo finished'}}]}\n  - reply: {content: Built.}\n"), 0o644))
	page := newPage(t)
	launchScripted(t, page, a.URL, "slow", "Build it.", "slow.yaml")
	must(t, page.Locator(".approve-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	output := page.Locator("#timeline-list pre.ev-output")
	must(t, expect.Locator(output.First()).ToHaveText("compiling", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(4000)}))
	// The command has not ended: no result yet, and the run still works.
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.result"})).ToHaveCount(0))
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("running"))
	screenshot(t, page, "command-output-streaming")
	must(t, expect.Locator(output.Nth(1)).ToHaveText("finished", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(15000)}))
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.result"})).ToHaveCount(1, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(10000)}))
	must(t, expect.Locator(page.Locator("#transcript article.role-tool")).ToContainText("finished", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(10000)}))
}
