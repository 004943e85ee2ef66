//go:build e2e && interop

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// A newcomer picks each agent proctor drives on the Launch form — installed
// from npm by `go tool task interop`, found on the server's PATH — watches
// it work, reads its transcript and approves its diff, which reaches the
// source folder.
func TestLaunchEveryAgentFromTheBrowser(t *testing.T) {
	path := agentPath(t)
	t.Setenv("PATH", path+":"+os.Getenv("PATH"))
	a := startApp(t)
	must(t, os.WriteFile(filepath.Join(a.Roots, "any-agent.yaml"), []byte(`steps:
  - expect: {last_contains: "notes.txt"}
    reply: {tool_calls: [{read: notes.txt}]}
  - expect: {last_role: tool, last_contains: old}
    reply: {tool_calls: [{edit: {path: notes.txt, old: old, new: new}}]}
  - expect: {last_role: tool}
    reply: {content: "notes.txt says new."}
`), 0o644))
	page := newPage(t)
	for _, kind := range builtinAgents[1:] {
		t.Run(kind, func(t *testing.T) {
			folder := "notes-" + kind
			must(t, os.MkdirAll(filepath.Join(a.Roots, folder), 0o755))
			must(t, os.WriteFile(filepath.Join(a.Roots, folder, "notes.txt"), []byte("old\n"), 0o644))
			goTo(t, page, a.URL+"/launch")
			_, err := page.Locator("#agent").SelectOption(playwright.SelectOptionValues{Values: &[]string{kind}})
			must(t, err)
			must(t, page.Locator("#path").Fill(folder))
			must(t, page.Locator("#task").Fill("Change notes.txt to say new."))
			must(t, page.Locator("#script").Fill("any-agent.yaml"))
			must(t, page.Locator("#launch").Click())
			must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(120000)}))
			must(t, expect.Locator(page.Locator("#run-agent")).ToContainText(kind))
			must(t, expect.Locator(page.Locator("#agent-version")).Not().ToBeEmpty())
			must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.call"})).ToHaveCount(2))
			must(t, expect.Locator(page.Locator("#diff")).ToContainText("notes.txt"))
			must(t, expect.Locator(page.Locator("#transcript")).ToContainText("notes.txt says new."))
			screenshot(t, page, "interop-"+kind+"-awaiting-review")
			must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
			must(t, page.Locator("#approve").Click())
			must(t, expect.Locator(page.Locator("#review")).ToContainText("applied to the source tree"))
			notes, err := os.ReadFile(filepath.Join(a.Roots, folder, "notes.txt"))
			if err != nil || strings.TrimSpace(string(notes)) != "new" {
				t.Fatalf("notes.txt after approval: %q %v", notes, err)
			}
		})
	}
}
