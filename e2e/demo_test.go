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

func TestRunTheDemoWatchItAndApprove(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/")
	must(t, expect.Locator(page.Locator("#empty-state")).ToContainText("Run the demo"))
	must(t, page.Locator("#run-demo").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/\d{8}-\d{6}-[a-z0-9]{6}$`)))
	// The agent asks to run go test; the page shows the request live.
	box := page.Locator("#approvals")
	must(t, expect.Locator(box).ToContainText("go test ./...", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting approval"))
	// While it works the summary says what is filled in later, instead of
	// "0 model calls" and "nothing" changed; the transcript so far shows
	// the call that waits.
	must(t, expect.Locator(page.Locator("#tokens-live")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#changed-live")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("go test ./..."))
	must(t, expect.Locator(page.Locator("#transcript-live")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#diff-live")).ToBeVisible())
	screenshot(t, page, "demo-awaiting-approval")
	must(t, box.Locator(".approve-call").Click())
	// The page follows the run until it waits for review.
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.call"})).ToHaveCount(6))
	must(t, expect.Locator(page.Locator("#tokens-live")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("math.Round"))
	must(t, expect.Locator(page.Locator("#diff-totals")).ToHaveText(regexp.MustCompile(`^2 files, \+\d+ −\d+$`)))
	// Inside the changed line, what changed is marked.
	for sel, want := range map[string]string{"#diff .add .chg": "math.Round(euros * 100)", "#diff .del .chg": "euros * 100"} {
		got, err := page.Locator(sel).EvaluateAll(`els => els.map(e => e.textContent).join("")`)
		must(t, err)
		if got != want {
			t.Errorf("%s marks %q, want %q", sel, got, want)
		}
	}
	screenshot(t, page, "demo-awaiting-review")
	// The transcript lays out each tool call: the agent's tool name, its
	// arguments, an edit as the diff it asks for, the model call's tokens;
	// the timeline says each event in words, not as JSON.
	edit := page.Locator("#transcript .call").Filter(playwright.LocatorFilterOptions{HasText: "edit_file"}).First()
	must(t, expect.Locator(edit.Locator("pre.change .del")).ToContainText("return int64(euros * 100)"))
	must(t, expect.Locator(edit.Locator("pre.change .add")).ToContainText("return int64(math.Round(euros * 100))"))
	must(t, expect.Locator(edit.Locator(".change-head")).ToContainText("edits money.go"))
	command := page.Locator("#transcript .call").Filter(playwright.LocatorFilterOptions{HasText: "run_command"})
	must(t, expect.Locator(command.Locator("dl.args")).ToContainText("go test ./..."))
	must(t, expect.Locator(page.Locator("#transcript .model-call").Nth(2)).ToContainText("model call 3 · "))
	must(t, expect.Locator(page.Locator("#transcript .model-call").Nth(2)).ToContainText("1,130 in, 291 out"))
	must(t, expect.Locator(page.Locator("#transcript article.role-tool details.output").First()).ToHaveAttribute("open", ""))
	response := page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "model.response"}).First()
	must(t, expect.Locator(response.Locator(".ev-data")).ToContainText("prompt_tokens 812"))
	must(t, expect.Locator(page.Locator("#timeline-list .ev-data").Filter(playwright.LocatorFilterOptions{HasText: "{"})).ToHaveCount(0))

	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("input[name=reason]").Fill("rounds half away from zero, as asked"))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by Dana"))
	must(t, expect.Locator(page.Locator("#review")).ToContainText("applied to the source tree"))
	must(t, expect.Locator(page.Locator("#approve")).ToHaveCount(0))
	screenshot(t, page, "demo-approved")

	// The diff reached only the demo's copy inside the data folder.
	id := page.URL()[strings.LastIndex(page.URL(), "/")+1:]
	money, err := os.ReadFile(filepath.Join(a.DataDir, "demo", id, "invoice", "money.go"))
	must(t, err)
	if !strings.Contains(string(money), "math.Round") {
		t.Fatal("the demo copy was not patched")
	}
	// The list shows the decision.
	goTo(t, page, a.URL+"/runs")
	must(t, expect.Locator(page.Locator("table.runs tbody tr").First()).ToContainText("approved"))
}

func TestRejectTheDemo(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	// Denying the command: the agent gets the refusal and goes on.
	must(t, page.Locator(".deny-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#reject")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("run_command was denied by e2e"))
	// The denied call is marked, in the transcript and in the timeline.
	must(t, expect.Locator(page.Locator("#transcript article.failed .badge")).ToHaveText("refused"))
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "approval.decided"}).Locator(".bad")).ToContainText("approved false"))
	must(t, page.Locator("input[name=reviewer]").Fill("Lee"))
	// Reject asks first: answered no, nothing is decided.
	answerNextDialog(t, page, false, "Reject this run's diff?")
	must(t, page.Locator("#reject").Click())
	must(t, expect.Locator(page.Locator("#approve")).ToBeVisible())
	answerNextDialog(t, page, true, "Reject this run's diff?")
	must(t, page.Locator("#reject").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Rejected by Lee"))
	// The decision is a review state, not an agent failure.
	must(t, expect.Locator(page.Locator(".badges")).ToContainText("rejected"))
	must(t, expect.Locator(page.Locator(".badges")).Not().ToContainText("failed"))
	if n, _ := page.Locator("#failure").Count(); n != 0 {
		t.Fatal("a rejected run shows a failure box")
	}
	// Rejecting leaves the demo copy as it was.
	id := page.URL()[strings.LastIndex(page.URL(), "/")+1:]
	money, err := os.ReadFile(filepath.Join(a.DataDir, "demo", id, "invoice", "money.go"))
	must(t, err)
	if strings.Contains(string(money), "math.Round") {
		t.Fatal("a rejected diff was applied")
	}
}

func TestLaunchFormShowsErrorsThenLaunches(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Launch", Exact: playwright.Bool(true)}).Click())
	must(t, page.Locator("#path").Fill("../outside"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator("#path-error")).ToContainText(`".." is not allowed`))
	must(t, expect.Locator(page.Locator("#task-error")).ToContainText("say what the agent should do"))
	// At 1280 px every field stays inside the form's card (the right column
	// stuck out of it, pushed by a long root path and a long option).
	must(t, page.SetViewportSize(1280, 900))
	out, err := page.Evaluate(`(() => { const f = document.querySelector("form.launch").getBoundingClientRect();
		return [...document.querySelectorAll("form.launch .field")].filter(e => e.getBoundingClientRect().right > f.right + 0.5).map(e => e.id || e.textContent.trim().slice(0, 30)); })()`)
	must(t, err)
	if list, _ := out.([]interface{}); len(list) > 0 {
		t.Errorf("at 1280 px these fields stick out of the Launch form: %v", list)
	}
	screenshot(t, page, "launch-errors")
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#task").Fill("Fix the rounding bug in invoice totals."))
	must(t, page.Locator("#allow").Fill("go test"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("math.Round"))
}

func TestLaunchASuiteAndReadTheMatrix(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/suites")
	must(t, expect.Locator(page.Locator("#no-suites")).ToBeVisible())
	_, err := page.Locator("#scenarios").SelectOption(playwright.SelectOptionValues{Values: &[]string{"rename-config-key", "fails-scope"}})
	must(t, err)
	must(t, page.Locator("#repeat").Fill("3"))
	must(t, page.Locator("#launch-suite").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/suites/suite-`)))
	matrix := page.Locator("#matrix")
	// The matrix fills in as the runs finish: 2 scenarios × 3 repeats.
	must(t, expect.Locator(page.Locator("#passk")).ToContainText("pass^k: 1 of 2 scenarios", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(matrix.Locator("td.cell-pass")).ToHaveCount(3))
	must(t, expect.Locator(matrix.Locator("td.cell-fail")).ToHaveCount(3))
	must(t, expect.Locator(matrix.Locator(`tr[data-scenario="fails-scope"]`)).ToContainText("0/3 (0%)"))
	screenshot(t, page, "suite-matrix")
	// What needs a look comes first, and the matrix filters.
	must(t, expect.Locator(matrix.Locator("tbody tr").First()).ToHaveAttribute("data-scenario", "fails-scope"))
	_, err = page.Locator("#matrix-status").SelectOption(playwright.SelectOptionValues{Values: &[]string{"passing"}})
	must(t, err)
	must(t, page.Locator("#matrix-filter button").Click())
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveCount(1))
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveAttribute("data-scenario", "rename-config-key"))
	must(t, expect.Locator(page.Locator("#matrix-count")).ToContainText("1 scenario"))
	// The tags the scenarios ran with filter too (rename-config-key: refactor, scope; fails-scope: scope).
	_, err = page.Locator("#matrix-status").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	must(t, err)
	_, err = page.Locator("#matrix-tag").SelectOption(playwright.SelectOptionValues{Values: &[]string{"scope"}})
	must(t, err)
	must(t, page.Locator("#matrix-filter button").Click())
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveCount(2))
	_, err = page.Locator("#matrix-tag").SelectOption(playwright.SelectOptionValues{Values: &[]string{"refactor"}})
	must(t, err)
	must(t, page.Locator("#matrix-filter button").Click())
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveCount(1))
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveAttribute("data-scenario", "rename-config-key"))
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`tag=refactor`)))
	// A filter nothing matches says so, with a way back (not bare headers).
	must(t, page.Locator("#matrix-name").Fill("no-such-scenario"))
	must(t, page.Locator("#matrix-filter button").Click())
	must(t, expect.Locator(page.Locator("#matrix-no-match")).ToContainText("No scenario of this suite matches"))
	must(t, expect.Locator(matrix).ToHaveCount(0))
	must(t, page.Locator("#matrix-no-match a").Click())
	must(t, expect.Locator(matrix.Locator("tbody tr")).ToHaveCount(2))
	// A scenario's history: a chart with a square per run, each a link.
	must(t, matrix.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "rename-config-key"}).Click())
	must(t, expect.Locator(page.Locator("figure.chart rect.cell-pass")).ToHaveCount(3))
	screenshot(t, page, "scenario-history")
	must(t, page.Locator("figure.chart a").First().Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/\d{8}-`)))
}

// demoAwaitingReview runs the demo, approves its command, and waits until
// its diff waits for review.
func demoAwaitingReview(t *testing.T, a *app, page playwright.Page) string {
	t.Helper()
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	must(t, page.Locator(".approve-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#approve")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	return page.URL()[strings.LastIndex(page.URL(), "/")+1:]
}

func TestConflictAppliesNothingAndSaysWhich(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	id := demoAwaitingReview(t, a, page)
	money := filepath.Join(a.DataDir, "demo", id, "invoice", "money.go")
	must(t, os.WriteFile(money, []byte("package money\n// edited meanwhile\n"), 0o644))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review-box .notice.bad")).ToContainText("Nothing was applied: these files changed in the source since the run began: money.go"))
	data, err := os.ReadFile(money)
	must(t, err)
	if !strings.Contains(string(data), "edited meanwhile") {
		t.Fatal("the conflicting file was overwritten")
	}
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review"))
}

func TestTwoPagesApproveAtOnceAppliesOnce(t *testing.T) {
	a := startApp(t)
	first := newPage(t)
	id := demoAwaitingReview(t, a, first)
	second := newPage(t)
	goTo(t, second, a.URL+"/runs/"+id)
	must(t, first.Locator("input[name=reviewer]").Fill("one"))
	must(t, second.Locator("input[name=reviewer]").Fill("two"))
	done := make(chan error, 2)
	go func() { done <- first.Locator("#approve").Click() }()
	go func() { done <- second.Locator("#approve").Click() }()
	must(t, <-done)
	must(t, <-done)
	// Each page ends showing one decision, by the same person.
	for _, p := range []playwright.Page{first, second} {
		must(t, expect.Locator(p.Locator("#review")).ToContainText(regexp.MustCompile(`Approved by (one|two)`)))
	}
	events, err := os.ReadFile(filepath.Join(a.DataDir, "runs", id, "events.jsonl"))
	must(t, err)
	if n := strings.Count(string(events), `"review.decided"`); n != 1 {
		t.Fatalf("%d review decisions recorded, want 1", n)
	}
}

func TestStopARunningRun(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	must(t, page.Locator("#run-demo").Click())
	// The demo waits for approval: stop it there.
	must(t, expect.Locator(page.Locator("#approvals")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(30000)}))
	must(t, page.Locator("#stop-run").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("interrupted"))
	must(t, expect.Locator(page.Locator("#stop-run")).ToHaveCount(0))
	// It says where it stopped, not that it is still in that stage; its
	// bounds read as sizes and counts.
	must(t, expect.Locator(page.Locator("#run-stage")).ToHaveText("stopped in stage running"))
	must(t, expect.Locator(page.Locator("#summary")).ToContainText("workspace 512 MiB · file 4 MiB"))
	must(t, expect.Locator(page.Locator("#summary")).ToContainText("tool output 20,000 chars"))
}

// A newcomer launches a run on a folder of their own with no key and no
// YAML: the Launch form offers the built-in scripted models beside the
// profiles, and says how to add a live one.
func TestLaunchWithABuiltInScriptedModel(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, expect.Locator(page.Locator("#model optgroup[label^='Built-in']")).ToHaveCount(1))
	_, err := page.Locator("#model").SelectOption(playwright.SelectOptionValues{Values: &[]string{"builtin:notes"}})
	must(t, err)
	must(t, page.Locator("#path").Fill("invoice"))
	must(t, page.Locator("#task").Fill("Write down what this project is."))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("NOTES.md"))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("I wrote NOTES.md"))
}
