//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/testutil"
)

// A person picks an agent command (configured in agents.yaml) on the Launch
// form, watches it work through the recording proxy, reads what it did —
// its version, its output, the transcript built from its model calls —
// and approves its diff, which then reaches the source folder. The runs
// list filters by that agent.
func TestLaunchAnAgentCommandFromTheBrowserAndApprove(t *testing.T) {
	a := startApp(t)
	useChatAgent(t, a)
	must(t, os.WriteFile(filepath.Join(a.Roots, "invoice", "notes.txt"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "chat.yaml"), []byte(`steps:
  - expect: {api: chat, last_contains: "notes.txt"}
    reply: {content: "", tool_calls: [{id: c1, name: write_file, arguments: {path: notes.txt, content: "new\n"}}, {id: c2, name: write_file, arguments: {path: extra.txt, content: "two\n"}}]}
  - expect: {api: chat, last_contains: "wrote extra.txt"}
    reply: {content: "Wrote notes.txt and extra.txt."}
`), 0o644))

	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	_, err := page.Locator("#agent").SelectOption(playwright.SelectOptionValues{Values: &[]string{"chat"}})
	must(t, err)
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#task").Fill("Write new into notes.txt."))
	must(t, page.Locator("#script").Fill("chat.yaml"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#run-agent")).ToContainText("chat"))
	must(t, expect.Locator(page.Locator("#run-agent")).ToContainText("command"))
	must(t, expect.Locator(page.Locator("#agent-version")).ToContainText("sha256:"))
	must(t, expect.Locator(page.Locator("#agent-log")).ToContainText("final: Wrote notes.txt and extra.txt."))
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.call"})).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("extra.txt"))
	must(t, expect.Locator(page.Locator("#bundle-files + ul")).ToContainText("agent.log"))
	screenshot(t, page, "agent-command-awaiting-review")

	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("applied to the source tree"))
	notes, err := os.ReadFile(filepath.Join(a.Roots, "invoice", "notes.txt"))
	must(t, err)
	if strings.TrimSpace(string(notes)) != "new" {
		t.Fatalf("notes.txt after approval: %q", notes)
	}

	goTo(t, page, a.URL+"/runs")
	_, err = page.Locator("select[name=agent]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"chat"}})
	must(t, err)
	must(t, expect.Locator(page.Locator("table.runs tbody tr")).ToHaveCount(1))
	must(t, expect.Locator(page.Locator("table.runs tbody tr").First()).ToContainText("chat"))
}

// The Suites page runs a suite with the agent chosen there instead of each
// scenario's own; the matrix has a row per scenario and agent.
func TestLaunchASuiteWithAnAgentCommand(t *testing.T) {
	a := startApp(t)
	useChatAgent(t, a)
	page := newPage(t)
	goTo(t, page, a.URL+"/suites")
	_, err := page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"agent-writes"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("2"))
	_, err = page.Locator("#agent").SelectOption(playwright.SelectOptionValues{Values: &[]string{"chat"}})
	must(t, err)
	must(t, page.Locator("#launch-suite").Click())
	matrix := page.Locator("#matrix")
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k: 1 of 1 scenarios", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	row := matrix.Locator(`tr[data-scenario="agent-writes"]`)
	must(t, expect.Locator(row).ToHaveCount(1))
	must(t, expect.Locator(row).ToContainText("chat"))
	must(t, expect.Locator(row.Locator("td.cell-pass")).ToHaveCount(2))
	screenshot(t, page, "suite-with-agent")
}

// An agent command that asks proctor before running a command (POST
// /v1/proctor/approvals) waits for a person on the run page, as proctor's
// own agent does; the approved command runs in the workspace.
func TestAnAgentCommandWaitsForApprovalInTheBrowser(t *testing.T) {
	a := startApp(t)
	useChatAgent(t, a)
	must(t, os.WriteFile(filepath.Join(a.Roots, "cmd.yaml"), []byte(`steps:
  - expect: {api: chat}
    reply: {tool_calls: [{id: c1, name: run_command, arguments: {command: "echo ran > ran.txt"}}]}
  - expect: {api: chat, last_role: tool}
    reply: {content: "Ran it."}
`), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	_, err := page.Locator("#agent").SelectOption(playwright.SelectOptionValues{Values: &[]string{"chat"}})
	must(t, err)
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#task").Fill("Leave a mark in ran.txt."))
	must(t, page.Locator("#script").Fill("cmd.yaml"))
	must(t, page.Locator("#launch").Click())
	box := page.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("echo ran > ran.txt", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting approval"))
	must(t, box.Locator(".approve-call").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("ran.txt"))
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "approval.decided"})).ToHaveCount(1))
}

// useChatAgent builds the test agent chatagent and offers it on a's forms
// as "chat" (the server reads agents.yaml from its data folder).
func useChatAgent(t *testing.T, a *app) {
	t.Helper()
	bin := testutil.TestAgent(t, "chatagent")
	must(t, os.WriteFile(filepath.Join(a.DataDir, "agents.yaml"), []byte("agents:\n  - {name: chat, kind: command, command: ["+bin+", \"{{task}}\"], tools: native}\n"), 0o644))
}

// An agent whose program the server does not have is marked on the Launch
// form, with how to install it, and launching it is refused beside the
// Agent field (it was a run that failed after it started).
func TestLaunchSaysWhichAgentsAreNotInstalled(t *testing.T) {
	a := startApp(t)
	must(t, os.WriteFile(filepath.Join(a.DataDir, "agents.yaml"), []byte("agents:\n  - {name: ghost, kind: command, command: [proctor-no-such-agent, \"{{task}}\"]}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, expect.Locator(page.Locator("#agent option[value=ghost]")).ToHaveText(regexp.MustCompile(`— not installed$`)))
	must(t, expect.Locator(page.Locator("#agents-missing")).ToContainText("ghost: proctor-no-such-agent is not on the server's PATH"))
	must(t, expect.Locator(page.Locator("#agent option[value=native]")).Not().ToContainText("not installed"))
	_, err := page.Locator("#agent").SelectOption(playwright.SelectOptionValues{Values: &[]string{"ghost"}})
	must(t, err)
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#task").Fill("Do it."))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator("#agent-error")).ToContainText("proctor-no-such-agent is not on the server's PATH"))
}
