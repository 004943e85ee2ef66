//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
)

func TestEmptyStateExplainsHowToGetAFirstRun(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	goTo(t, page, a.URL+"/")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs"))
	empty := page.Locator("#empty-state")
	must(t, expect.Locator(empty).ToBeVisible())
	must(t, expect.Locator(empty).ToContainText("No runs yet"))
	must(t, expect.Locator(empty).ToContainText("proctor index"))
	screenshot(t, page, "empty-state")

	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Sessions"}).Click())
	must(t, expect.Locator(page.Locator("#empty-sessions")).ToBeVisible())
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Index problems"}).Click())
	must(t, expect.Locator(page.Locator("#no-problems")).ToBeVisible())
}

func TestBrowseIndexedRuns(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	rows := page.Locator("table.runs tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(6))
	screenshot(t, page, "runs-list")
	// Each run's cost, by the built-in prices: a model without a price says
	// so (a scripted and a self-hosted model here), never $0.
	costs := page.Locator("table.runs tbody td.num:last-child")
	must(t, expect.Locator(costs.Filter(playwright.LocatorFilterOptions{HasText: "no price"})).ToHaveCount(2)) // qwen2.5-coder-32b and scripted
	must(t, expect.Locator(costs.Filter(playwright.LocatorFilterOptions{HasText: regexp.MustCompile(`^\$\d`)})).ToHaveCount(4))

	// Filter by status: HTMX swaps the results and pushes the URL.
	_, err := page.Locator("select[name=status]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"failed"}})
	must(t, err)
	must(t, expect.Locator(rows).ToHaveCount(1))
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`status=failed`)))
	must(t, expect.Locator(rows.First()).ToContainText("rename-config-key"))

	// Filter by model and kind together, then clear.
	_, err = page.Locator("select[name=status]").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	must(t, err)
	_, err = page.Locator("select[name=model]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"gpt-4.1"}})
	must(t, err)
	must(t, expect.Locator(rows).ToHaveCount(2))
	_, err = page.Locator("select[name=review]").SelectOption(playwright.SelectOptionValues{Values: &[]string{"pending"}})
	must(t, err)
	must(t, expect.Locator(rows).ToHaveCount(1))
	must(t, expect.Locator(rows.First()).ToContainText("Now add a test for it."))

	// The filtered URL works as a full page too (reload keeps the filter).
	_, err = page.Reload()
	must(t, err)
	must(t, expect.Locator(rows).ToHaveCount(1))
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Clear filters"}).First().Click())
	must(t, expect.Locator(rows).ToHaveCount(6))

	// Full-text search over transcripts highlights the match.
	must(t, page.Locator("input[name=q]").Fill("deprecation"))
	must(t, page.Locator("input[name=q]").Press("Enter"))
	must(t, expect.Locator(rows).ToHaveCount(1))
	must(t, expect.Locator(page.Locator("table.runs mark").First()).ToHaveText(regexp.MustCompile(`(?i)deprecation`)))
	screenshot(t, page, "runs-search")
}

func TestRunPageShowsTranscriptDiffAndChecks(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Fix the rounding bug"}).Click())
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs/20261201-093012-k3f9qa"))

	must(t, expect.Locator(page.Locator("h1")).ToContainText("Fix the rounding bug"))
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by maria"))
	transcript := page.Locator("#transcript")
	must(t, expect.Locator(transcript.Locator("article.role-user")).ToContainText("3 x 0.29 EUR"))
	must(t, expect.Locator(transcript.Locator("article.role-tool").First()).ToContainText("func Cents"))
	must(t, expect.Locator(page.Locator("#timeline li")).ToHaveCount(37))
	diff := page.Locator("#diff")
	must(t, expect.Locator(diff.Locator("details.file")).ToHaveCount(2))
	must(t, expect.Locator(diff.Locator("tr.add").First()).ToContainText(`import "math"`))
	must(t, expect.Locator(diff.Locator("tr.del")).ToContainText("return int64(euros * 100)"))
	screenshot(t, page, "run-task")

	// Side by side and back.
	must(t, page.Locator("#view-split").Click())
	must(t, expect.Locator(diff.Locator("table.diff.split").First()).ToBeVisible())
	must(t, expect.Locator(diff.Locator("table.diff.split td.code.del").First()).ToContainText("return int64(euros * 100)"))
	screenshot(t, page, "run-diff-split")
	must(t, page.Locator("#view-unified").Click())
	must(t, expect.Locator(diff.Locator("table.diff.split")).ToHaveCount(0))
	// The Diff tab link jumps to the diff.
	must(t, page.Locator("nav.tabs").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Diff"}).Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`#diff$`)))

	// A failed scenario run shows its verdict with a broken check apart from
	// the failed one.
	goTo(t, page, a.URL+"/runs/20261201-101544-m2x7pb")
	checks := page.Locator("#checks")
	must(t, expect.Locator(checks).ToContainText("2 passed · 1 failed · 1 broken"))
	must(t, expect.Locator(checks.Locator("tr", playwright.LocatorLocatorOptions{HasText: "no-old-key"})).ToContainText("broken"))
	must(t, expect.Locator(checks.Locator("tr", playwright.LocatorLocatorOptions{HasText: "scope"})).ToContainText("failed"))
	must(t, expect.Locator(page.Locator("#failure strong")).ToHaveText("Agent: checks failed")) // not "agent · checks_failed"
	screenshot(t, page, "run-scenario")

	// An unknown run is a 404 page that says what to do, not a crash.
	resp, err := page.Request().Get(a.URL + "/runs/no-such-run")
	must(t, err)
	if resp.Status() != 404 {
		t.Fatalf("unknown run: status %d, want 404", resp.Status())
	}
	body, err := resp.Text()
	must(t, err)
	if !strings.Contains(body, "proctor index") {
		t.Fatalf("404 page does not say how to index the run:\n%s", body)
	}
}

func TestPagingThroughRuns(t *testing.T) {
	root := t.TempDir()
	writeSyntheticRuns(t, root, 120)
	a := startApp(t, root)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	rows := page.Locator("table.runs tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(50))
	must(t, expect.Locator(rows.First()).ToContainText("Synthetic task number 119"))
	first := rowsText(t, page)

	next := page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Next page"})
	must(t, next.Click())
	must(t, expect.Locator(rows.First()).ToContainText("Synthetic task number 69"))
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`after=`)))
	if rowsText(t, page) == first {
		t.Fatal("second page shows the same rows as the first")
	}
	must(t, next.Click())
	must(t, expect.Locator(rows).ToHaveCount(20))
	must(t, expect.Locator(rows.Last()).ToContainText("Synthetic task number 0"))
	must(t, expect.Locator(next).ToHaveCount(0))
	screenshot(t, page, "runs-last-page")

	// Back one page at a time, then to the first.
	prev := page.Locator("#prev-page")
	must(t, prev.Click())
	must(t, expect.Locator(rows.First()).ToContainText("Synthetic task number 69"))
	must(t, expect.Locator(rows).ToHaveCount(50))
	must(t, prev.Click())
	must(t, expect.Locator(rows.First()).ToContainText("Synthetic task number 119"))
	must(t, expect.Locator(prev).ToHaveCount(0))
	must(t, next.Click())
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "First page"}).Click())
	must(t, expect.Locator(rows.First()).ToContainText("Synthetic task number 119"))
}

func TestSessionsAndProblemsPages(t *testing.T) {
	root := copyBundles(t)
	broken := filepath.Join(root, "runs", "20261202-090000-broken1")
	must(t, os.MkdirAll(broken, 0o755))
	must(t, os.WriteFile(filepath.Join(broken, "run.json"), []byte(`{"schema":"proctor.receipt.v9","run_id":"20261202-090000-broken1"}`), 0o644))
	// A run whose events log has a garbage line is read only in part.
	events, err := os.OpenFile(filepath.Join(root, "runs", "20261201-093012-k3f9qa", "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	_, err = events.WriteString("garbage\n")
	must(t, err)
	events.Close()
	a := startApp(t, root)
	page := newPage(t)

	goTo(t, page, a.URL+"/sessions")
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Health endpoint for the shop server"}).Click())
	runs := page.Locator("ol.session-runs li")
	must(t, expect.Locator(runs).ToHaveCount(2))
	must(t, expect.Locator(runs.Nth(1)).ToContainText("needs review"))
	screenshot(t, page, "session")
	must(t, runs.Nth(0).GetByRole("link").Click())
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs/20261201-140210-s4d5ta"))

	// The nav shows a problem count; the problems page names file and reason.
	must(t, expect.Locator(page.Locator("header .count.bad")).ToHaveText("2"))
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Index problems"}).Click())
	group := page.Locator(".problem-group")
	must(t, expect.Locator(group).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#main")).ToContainText("20261202-090000-broken1"))
	must(t, expect.Locator(page.Locator("#main")).ToContainText(`unknown schema version "proctor.receipt.v9"`))
	partial := group.Filter(playwright.LocatorFilterOptions{HasText: "20261201-093012-k3f9qa"})
	must(t, expect.Locator(partial).ToContainText("events.jsonl"))
	must(t, expect.Locator(partial).ToContainText("line 38"))
	screenshot(t, page, "problems")
}

func TestTranscriptIsNeverRenderedAsHTML(t *testing.T) {
	root := copyBundles(t)
	tr := filepath.Join(root, "runs", "20261201-113020-z8c1rd", "transcript.md")
	hostile := "\n## assistant\n\n<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"><b>bold?</b>\n"
	f, err := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(hostile)
	must(t, err)
	must(t, f.Close())
	a := startApp(t, root)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/20261201-113020-z8c1rd")
	last := page.Locator("#transcript article").Last()
	must(t, expect.Locator(last).ToContainText("<script>document.title='pwned'</script>"))
	must(t, expect.Locator(last.Locator("b")).ToHaveCount(0))
	must(t, expect.Locator(last.Locator("img")).ToHaveCount(0))
	title, err := page.Title()
	must(t, err)
	if title == "pwned" {
		t.Fatal("transcript text ran as script")
	}
}

func TestKeyboardNavigation(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	rows := page.Locator("table.runs tbody tr")
	must(t, expect.Locator(rows).ToHaveCount(6))
	kb := page.Keyboard()
	must(t, kb.Press("j"))
	must(t, kb.Press("j"))
	must(t, expect.Locator(rows.Nth(1)).ToHaveClass(regexp.MustCompile(`selected`)))
	must(t, kb.Press("k"))
	must(t, expect.Locator(rows.Nth(0)).ToHaveClass(regexp.MustCompile(`selected`)))
	must(t, kb.Press("j"))
	must(t, kb.Press("Enter"))
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs/20261201-141005-s4d5tb"))
	_, err := page.GoBack()
	must(t, err)
	must(t, kb.Press("/"))
	must(t, expect.Locator(page.Locator("input[name=q]")).ToBeFocused())
	// Typing in the search box is not taken for shortcuts.
	must(t, kb.Type("jk"))
	must(t, expect.Locator(page.Locator("input[name=q]")).ToHaveValue("jk"))
}

// A suite run with --pack records its runs in one file; the runs list, a
// run's page and its bundle files read them from the pack.
func TestPackedSuiteRunsReadLikeFolders(t *testing.T) {
	a := startApp(t)
	scenarios, probs := scenario.Discover("../examples/scenarios/go-rounding-fix", "../examples/scenarios/multi-turn")
	if len(probs) > 0 || len(scenarios) != 2 {
		t.Fatalf("scenarios %d, problems %v", len(scenarios), probs)
	}
	opt := suite.Options{Parallel: 2}
	cleanup, err := opt.UsePack(a.DataDir)
	must(t, err)
	rep := suite.Run(context.Background(), &run.Runner{DataDir: a.DataDir, Environ: os.Environ(), Index: index.Into(a.Store)}, scenarios, nil, opt)
	cleanup()
	if p, f, b := rep.Counts(); p != 2 || f != 0 || b != 0 {
		t.Fatalf("suite: %d passed, %d failed, %d broken", p, f, b)
	}
	entries, _ := os.ReadDir(filepath.Join(a.DataDir, "runs"))
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".tar") {
		t.Fatalf("runs/ holds %v, want one pack", entries)
	}

	page := newPage(t)
	goTo(t, page, a.URL+"/runs?suite="+rep.ID)
	must(t, expect.Locator(page.Locator("table.runs tbody tr")).ToHaveCount(2))
	must(t, page.Locator("table.runs tbody tr", playwright.PageLocatorOptions{HasText: "go-rounding-fix"}).Locator("a").First().Click())
	must(t, expect.Locator(page.Locator("#checks")).ToContainText("passed"))
	must(t, expect.Locator(page.Locator("#transcript article.role-user").First()).ToBeVisible())
	must(t, expect.Locator(page.Locator("#diff tr.add").First()).ToBeVisible())
	screenshot(t, page, "run-packed")

	// The bundle's files are served from the pack too.
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "verdict.json", Exact: playwright.Bool(true)}).Click())
	must(t, expect.Locator(page.Locator("body")).ToContainText(`"passed": true`))
}

// After "Find" in a transcript the sticky header once covered the heading,
// the find box and the count, and the matches were not marked.
func TestFindInTranscriptMarksMatchesBelowTheHeader(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/20261201-093012-k3f9qa")
	must(t, page.Locator("#transcript input[name=find]").Fill("math.Round"))
	must(t, page.Locator("#transcript button[type=submit]").Click())
	must(t, expect.Locator(page.Locator("#found")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#transcript mark").First()).ToHaveText("math.Round"))
	header, err := page.Locator("header.top").BoundingBox()
	must(t, err)
	tabs, err := page.Locator(".tabs").BoundingBox()
	must(t, err)
	for _, sel := range []string{"#transcript h2", "#found"} {
		box, err := page.Locator(sel).BoundingBox()
		must(t, err)
		if box.Y < header.Y+header.Height || box.Y < tabs.Y+tabs.Height {
			t.Errorf("%s is at y=%.0f, under the sticky header (ends %.0f) or tabs (end %.0f)", sel, box.Y, header.Y+header.Height, tabs.Y+tabs.Height)
		}
	}
	screenshot(t, page, "transcript-find")
}

// The runs list shows a run launched elsewhere (another tab) without a
// reload, and follows it to its end: the first page of the newest runs
// keeps itself current even while nothing on it works.
func TestTheRunsListShowsNewRunsLive(t *testing.T) {
	a := startApp(t, copyBundles(t))
	list := newPage(t)
	goTo(t, list, a.URL+"/runs")
	must(t, expect.Locator(list.Locator("#runs-results")).ToHaveAttribute("hx-trigger", "every 5s"))
	must(t, os.MkdirAll(filepath.Join(a.Roots, "live"), 0o755))
	must(t, os.WriteFile(filepath.Join(a.Roots, "live", "a.txt"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "live.yaml"), []byte("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n"), 0o644))
	other := newPage(t)
	launchScripted(t, other, a.URL, "live", "Write the live marker", "live.yaml")
	row := list.Locator("#runs-results tr", playwright.PageLocatorOptions{HasText: "Write the live marker"})
	must(t, expect.Locator(row).ToHaveCount(1, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(20000)}))
	must(t, expect.Locator(row.Locator(".badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(20000)}))
}

// ? lists every keyboard shortcut, on any page; Esc closes the list.
func TestQuestionMarkListsTheShortcuts(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs")
	must(t, expect.Locator(page.Locator("#shortcuts")).Not().ToBeVisible())
	must(t, page.Keyboard().Press("?"))
	must(t, expect.Locator(page.Locator("#shortcuts")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#shortcuts")).ToContainText("accept / reject the focused hunk"))
	must(t, page.Keyboard().Press("Escape"))
	must(t, expect.Locator(page.Locator("#shortcuts")).Not().ToBeVisible())
	// Typed into a field, ? is a character.
	must(t, page.Locator("input[type=search]").First().Fill(""))
	must(t, page.Locator("input[type=search]").First().Press("?"))
	must(t, expect.Locator(page.Locator("#shortcuts")).Not().ToBeVisible())
}

// A long run's page opens on its newest messages and events; the earlier
// ones load a part at a time at a press of the loader above them (a click,
// or Enter), down to the first.
func TestALongRunLoadsEarlierWorkAPartAtATime(t *testing.T) {
	root := copyBundles(t)
	const id = "20261201-113020-z8c1rd"
	var tr, ev strings.Builder
	tr.WriteString("# Run " + id + "\n\n")
	for i := range 250 {
		fmt.Fprintf(&tr, "## assistant\n\nmessage m%03d\n\n", i)
	}
	for i := range 700 {
		fmt.Fprintf(&ev, `{"seq":%d,"time":"2026-12-01T11:30:22Z","type":"conversation.turn","data":{"turn":%d,"of":700,"note":"e%03d"}}`+"\n", i+1, i+1, i)
	}
	must(t, os.WriteFile(filepath.Join(root, "runs", id, bundle.TranscriptFile), []byte(tr.String()), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "runs", id, bundle.EventsFile), []byte(ev.String()), 0o644))
	a := startApp(t, root)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/"+id)
	transcript := page.Locator("#transcript")
	must(t, expect.Locator(transcript.Locator("article.msg")).ToHaveCount(100))
	must(t, expect.Locator(transcript.Locator("article.msg").Last()).ToContainText("m249"))
	must(t, expect.Locator(transcript.Locator(".earlier a")).ToHaveText("Show 150 earlier messages"))
	// The loader loads the messages before, with the next loader, until the
	// first message.
	loadAll := func(list playwright.Locator, items string, total int, press bool) {
		t.Helper()
		for range 10 {
			n, err := list.Locator(items).Count()
			must(t, err)
			if n == total {
				break
			}
			loader := list.Locator(".earlier a").First()
			if press {
				must(t, loader.Focus())
				must(t, page.Keyboard().Press("Enter"))
			} else {
				must(t, loader.Click())
			}
			must(t, expect.Locator(list.Locator(items).Nth(n)).ToBeAttached())
		}
		must(t, expect.Locator(list.Locator(items)).ToHaveCount(total))
		must(t, expect.Locator(list.Locator(".earlier")).ToHaveCount(0))
	}
	loadAll(transcript, "article.msg", 250, false)
	must(t, expect.Locator(transcript.Locator("article.msg").First()).ToContainText("m000"))
	screenshot(t, page, "run-long-transcript")
	// The timeline's loader, pressed from the keyboard.
	timeline := page.Locator("#timeline-list")
	must(t, expect.Locator(timeline.Locator("li[data-seq]")).ToHaveCount(300))
	loadAll(timeline, "li[data-seq]", 700, true)
	must(t, expect.Locator(timeline.Locator("li[data-seq]").First()).ToContainText("e000"))
}

// A run's calls to its model are listed on a page of their own, and each
// request opens whole, as the agent sent it.
func TestARunsCallsAndOneRequest(t *testing.T) {
	a := startApp(t, copyBundles(t))
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/20261201-113020-z8c1rd")
	must(t, page.Locator("#calls-link").Click())
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs/20261201-113020-z8c1rd/calls"))
	must(t, expect.Locator(page.Locator("#calls tbody tr")).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#call-2")).ToContainText("model call"))
	screenshot(t, page, "run-calls")
	must(t, page.Locator("#call-2 a").Click())
	must(t, expect.Page(page).ToHaveURL(a.URL+"/runs/20261201-113020-z8c1rd/calls/2/request"))
	must(t, expect.Locator(page.Locator("body")).ToContainText(`"tool_call_id":"call_1"`))
}
