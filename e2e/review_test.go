//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// partsRun launches, from the Launch form, a run whose diff changes
// notes.txt in three places far apart (three hunks), and waits until it
// awaits review. It returns the page and the source file.
func partsRun(t *testing.T, a *app) (playwright.Page, string) {
	t.Helper()
	src := filepath.Join(a.Roots, "notes")
	must(t, os.MkdirAll(src, 0o755))
	var base []string
	for i := 1; i <= 40; i++ {
		base = append(base, fmt.Sprintf("line %d", i))
	}
	changed := append([]string{}, base...)
	changed[1], changed[19], changed[37] = "line 2 changed", "line 20 changed", "line 38 changed"
	must(t, os.WriteFile(filepath.Join(src, "notes.txt"), []byte(strings.Join(base, "\n")+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "parts.yaml"), []byte(fmt.Sprintf(
		"steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: notes.txt, content: %q}}]}\n  - reply: {content: Changed three lines.}\n",
		strings.Join(changed, "\n")+"\n")), 0o644))
	page := newPage(t)
	launchScripted(t, page, a.URL, "notes", "Change lines 2, 20 and 38.", "parts.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff .part")).ToHaveCount(3))
	return page, filepath.Join(src, "notes.txt")
}

// Keyboard alone: j moves to the first hunk, a accepts it (and moves on),
// r rejects the second, a accepts the third, v marks the file viewed;
// Apply accepted applies exactly the two accepted hunks.
func TestAcceptTwoOfThreeHunksWithTheKeyboard(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	kb := page.Keyboard()
	must(t, page.Locator("h1").Click()) // nothing focused that takes keys
	for _, k := range []string{"j", "a", "r", "a"} {
		must(t, kb.Press(k))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("2 of 3 parts accepted, 1 rejected."))
	must(t, expect.Locator(page.Locator("input[aria-label='Reject hunk 2 of notes.txt']")).ToBeChecked())
	must(t, page.Locator("#part-0-2").Focus())
	must(t, kb.Press("v"))
	must(t, expect.Locator(page.Locator("details.file.viewed")).ToHaveCount(1))
	must(t, expect.Locator(page.Locator("details.file")).Not().ToHaveAttribute("open", ""))
	screenshot(t, page, "review-parts-decided")

	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by Dana"))
	must(t, expect.Locator(page.Locator("#review")).ToBeInViewport()) // the page shows its outcome, not where the button was
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("2 parts applied, 1 not"))
	must(t, expect.Locator(page.Locator("#review-parts li.rejected")).ToContainText("notes.txt hunk 2"))
	must(t, expect.Locator(page.Locator("#apply-accepted")).ToHaveCount(0))
	got, err := os.ReadFile(notes)
	must(t, err)
	lines := strings.Split(string(got), "\n")
	if lines[1] != "line 2 changed" || lines[19] != "line 20" || lines[37] != "line 38 changed" {
		t.Fatalf("notes.txt after Apply accepted:\n%s", got)
	}
}

// Clicking a line's number opens a comment under that line, and a line
// takes several; a suggestion started from the line's text, once the hunk
// is accepted, is applied as the hunk's edit.
func TestCommentOnALineBySuggestingAChange(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	hunk := page.Locator("#part-0-1")
	must(t, hunk.Locator(".ln-btn[data-line='20']").Click())
	under20 := hunk.Locator("tr:has(.ln-btn[data-line='20']) + tr.line-comment")
	must(t, expect.Locator(under20.Locator(".comment-where")).ToHaveText("line 20"))
	must(t, expect.Locator(under20.Locator("textarea")).ToBeFocused())
	must(t, under20.Locator("textarea").Fill("first thought"))
	// The keyboard reaches the numbers too; another line gets its own
	// comment, and the first stays where it was.
	must(t, hunk.Locator(".ln-btn[data-line='19']").Focus())
	must(t, page.Keyboard().Press("Enter"))
	must(t, expect.Locator(hunk.Locator("tr:has(.ln-btn[data-line='19']) + tr.line-comment .comment-where")).ToHaveText("line 19"))
	must(t, expect.Locator(hunk.Locator(".line-comment")).ToHaveCount(2))
	must(t, expect.Locator(under20.Locator("textarea")).ToHaveValue("first thought"))
	must(t, hunk.Locator(".ln-btn[data-line='20']").Click())
	must(t, expect.Locator(hunk.Locator(".line-comment")).ToHaveCount(3))
	second := hunk.Locator(".line-comment").Nth(2) // under line 20, after the first
	must(t, expect.Locator(second.Locator(".comment-where")).ToHaveText("line 20"))
	must(t, second.Locator(".suggest").Click())
	comment := second.Locator("textarea")
	must(t, expect.Locator(comment).ToHaveValue("```suggestion\nline 20 changed\n```"))
	must(t, comment.Fill("Say what changed.\n```suggestion\nline 20, as suggested\n```"))
	// Discard takes a comment away.
	must(t, hunk.Locator(".line-comment").Nth(1).Locator(".discard").Click())
	must(t, expect.Locator(hunk.Locator(".line-comment")).ToHaveCount(2))
	must(t, page.Locator("input[aria-label='Accept hunk 2 of notes.txt']").Check())
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("1 part applied, 2 not"))
	must(t, expect.Locator(page.Locator("#review-parts .edit")).ToContainText("line 20, as suggested"))
	got, err := os.ReadFile(notes)
	must(t, err)
	if lines := strings.Split(string(got), "\n"); lines[19] != "line 20, as suggested" || lines[1] != "line 2" || len(lines) != 41 {
		t.Fatalf("notes.txt after the suggestion:\n%s", got)
	}
}

// A deleted line takes a comment, and a shift-click makes a comment a
// range of lines; both are kept across a reload under the lines they are
// on, go to the agent with their code quoted, and become threads that are
// resolved and opened again.
func TestCommentOnADeletedLineAndOnARange(t *testing.T) {
	a := startApp(t)
	page, _ := partsRun(t, a)
	first := page.URL()
	hunk := page.Locator("#part-0-1")
	must(t, hunk.Locator(".ln-btn[data-line='L20']").Click())
	deleted := hunk.Locator("tr.del:has(.ln-btn[data-line='L20']) + tr.line-comment")
	must(t, expect.Locator(deleted.Locator(".comment-where")).ToHaveText("old line 20"))
	must(t, expect.Locator(deleted.Locator(".suggest")).ToBeHidden()) // a deleted line cannot be rewritten
	must(t, deleted.Locator("textarea").Fill("why remove this?"))
	must(t, hunk.Locator(".ln-btn[data-line='19']").Click())
	must(t, hunk.Locator(".ln-btn[data-line='21']").Click(playwright.LocatorClickOptions{Modifiers: []playwright.KeyboardModifier{*playwright.KeyboardModifierShift}}))
	ranged := hunk.Locator("tr:has(.ln-btn[data-line='21']) + tr.line-comment")
	must(t, expect.Locator(ranged.Locator(".comment-where")).ToHaveText("lines 19 to 21"))
	must(t, expect.Locator(hunk.Locator(".line-comment")).ToHaveCount(2))
	must(t, ranged.Locator(".suggest").Click())
	must(t, expect.Locator(ranged.Locator("textarea")).ToHaveValue("```suggestion\nline 19\nline 20 changed\nline 21\n```"))
	_, err := page.ExpectResponse("**/draft", func() error { return ranged.Locator("textarea").Fill("these three read badly") })
	must(t, err)

	goTo(t, page, first)
	must(t, expect.Locator(deleted.Locator("textarea")).ToHaveValue("why remove this?"))
	must(t, expect.Locator(ranged.Locator(".comment-where")).ToHaveText("lines 19 to 21"))
	must(t, expect.Locator(ranged.Locator("textarea")).ToHaveValue("these three read badly"))

	must(t, os.WriteFile(filepath.Join(a.Roots, "answer.yaml"), []byte(`steps:
  - expect: {last_contains: "notes.txt old line 20: why remove this?"}
    reply: {content: "It was replaced."}
`), 0o644))
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	requestChanges(t, page, "", "answer.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("passed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	asked := page.Locator("#addressing")
	must(t, expect.Locator(asked).ToContainText("notes.txt old line 20: why remove this?"))
	must(t, expect.Locator(asked).ToContainText("notes.txt lines 19 to 21: these three read badly"))
	must(t, expect.Locator(asked.Locator("li.thread").Nth(1).Locator("pre.quote")).ToHaveText(" line 19\n-line 20\n+line 20 changed\n line 21"))

	goTo(t, page, first)
	thread := page.Locator(".changes-requested li.thread").Nth(0)
	must(t, thread.Locator("button", playwright.LocatorLocatorOptions{HasText: "Resolve"}).Click())
	thread = page.Locator(".changes-requested li.thread").Nth(0)
	must(t, expect.Locator(thread.Locator(".badge")).ToHaveText("resolved"))
	must(t, expect.Locator(thread.Locator(".resolved-by")).ToContainText("Resolved by Dana"))
	screenshot(t, page, "review-thread-resolved")
	must(t, thread.Locator("button", playwright.LocatorLocatorOptions{HasText: "Open again"}).Click())
	must(t, expect.Locator(page.Locator(".changes-requested li.thread").Nth(0).Locator(".badge")).ToHaveText("open"))
}

// The lines a diff leaves out around a hunk load on a click, from the
// file as it was before the run, with both line numbers; the button goes
// when the gap is all shown.
func TestExpandTheContextAroundAHunk(t *testing.T) {
	a := startApp(t)
	page, _ := partsRun(t, a)
	// The transcript shows the agent's write of notes.txt as what it
	// changed (the only change to it), not as its 40 lines.
	must(t, expect.Locator(page.Locator("#transcript .change-head")).ToContainText("writes notes.txt — what it changed"))
	must(t, expect.Locator(page.Locator("#transcript pre.change .del")).ToHaveCount(3))
	hunk := page.Locator("#part-0-1")
	// Hunk 1 shows lines 1 to 5, hunk 2 lines 17 to 23: 6 to 16 are left out.
	must(t, expect.Locator(hunk.Locator("button.expand")).ToHaveText("↑ 11 more lines"))
	must(t, hunk.Locator("button.expand").Click())
	rows := hunk.Locator("tr.expanded")
	must(t, expect.Locator(rows).ToHaveCount(11))
	must(t, expect.Locator(rows.First()).ToContainText("line 6"))
	must(t, expect.Locator(rows.Last()).ToContainText("line 16"))
	must(t, expect.Locator(hunk.Locator("button.expand")).ToHaveCount(0))
	// The last hunk ends at the file's end: nothing below it to show.
	must(t, expect.Locator(page.Locator("#part-0-2 button.expand")).ToHaveCount(1)) // above it only
	must(t, expect.Locator(page.Locator("#part-0-2 tr.gap")).ToHaveCount(1))
	// Side by side, the same.
	must(t, page.Locator("#view-split").Click())
	split := page.Locator("#part-0-1")
	must(t, split.Locator("button.expand").Click())
	must(t, expect.Locator(split.Locator("tr.expanded td.code")).ToHaveCount(22))
	screenshot(t, page, "review-context-expanded")
}

// A hunk edited in the browser is applied as edited, and the run page
// shows the hunk as proposed and as applied.
func TestEditAHunkThenApply(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	hunk := page.Locator("#part-0-1")
	must(t, hunk.Locator(".hunk-edit summary").Click())
	editor := hunk.Locator(".hunk-edit textarea")
	text, err := editor.InputValue()
	must(t, err)
	if !strings.HasPrefix(text, "line 17\n") || !strings.Contains(text, "line 20 changed\n") {
		t.Fatalf("the editor starts with %q, want the hunk's new side", text)
	}
	must(t, editor.Fill(strings.Replace(text, "line 20 changed", "line 20, as the reviewer wants it", 1)))
	must(t, page.Locator("input[aria-label='Accept hunk 2 of notes.txt']").Check())
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("1 part applied, 2 not"))
	must(t, expect.Locator(page.Locator("#review-parts .edit")).ToContainText("as the agent proposed it"))
	must(t, expect.Locator(page.Locator("#review-parts .edit")).ToContainText("line 20, as the reviewer wants it"))
	screenshot(t, page, "review-hunk-edited")
	got, err := os.ReadFile(notes)
	must(t, err)
	lines := strings.Split(string(got), "\n")
	if lines[1] != "line 2" || lines[19] != "line 20, as the reviewer wants it" || lines[37] != "line 38" || len(lines) != 41 {
		t.Fatalf("notes.txt after the edit:\n%s", got)
	}
}

// manyFilesRun launches a run that changes the second line of each of n
// files (one hunk a file), and waits until it awaits review.
func manyFilesRun(t *testing.T, a *app, n int) (playwright.Page, string) {
	t.Helper()
	src := filepath.Join(a.Roots, "many")
	must(t, os.MkdirAll(src, 0o755))
	var calls []string
	for i := range n {
		name := fmt.Sprintf("f%02d.txt", i)
		must(t, os.WriteFile(filepath.Join(src, name), []byte("one\ntwo\nthree\n"), 0o644))
		calls = append(calls, fmt.Sprintf("{name: write_file, arguments: {path: %s, content: \"one\\nTWO\\nthree\\n\"}}", name))
	}
	must(t, os.WriteFile(filepath.Join(a.Roots, "many.yaml"), []byte("steps:\n  - reply: {tool_calls: ["+strings.Join(calls, ", ")+"]}\n  - reply: {content: done}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, page.Locator("#path").Fill("many"))
	must(t, page.Locator("#task").Fill("Shout two in every file."))
	must(t, page.Locator("#script").Fill("many.yaml"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	return page, src
}

// applyAll applies the accepted parts as Dana and checks that each of the
// n files of manyFilesRun changed.
func applyAll(t *testing.T, page playwright.Page, src string, n int) {
	t.Helper()
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText(fmt.Sprintf("%d parts applied, 0 not", n)))
	for i := range n {
		got, err := os.ReadFile(filepath.Join(src, fmt.Sprintf("f%02d.txt", i)))
		must(t, err)
		if string(got) != "one\nTWO\nthree\n" {
			t.Fatalf("f%02d.txt: %q", i, got)
		}
	}
}

// A 50-file diff is reviewed with the keyboard alone: j then a on every
// hunk, v on a file, and Apply accepted applies all fifty.
func TestReviewAFiftyFileDiffWithTheKeyboard(t *testing.T) {
	a := startApp(t)
	page, src := manyFilesRun(t, a, 50)
	must(t, expect.Locator(page.Locator("#diff .part")).ToHaveCount(50))
	must(t, page.Locator("h1").Click())
	kb := page.Keyboard()
	must(t, kb.Press("j"))
	for range 50 {
		must(t, kb.Press("a"))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("50 of 50 parts accepted, 0 rejected."))
	// The last a left the focus on the last hunk, in view.
	must(t, expect.Locator(page.Locator("#part-49-0")).ToBeFocused())
	must(t, expect.Locator(page.Locator("#part-49-0")).ToBeInViewport())
	must(t, kb.Press("v"))
	must(t, expect.Locator(page.Locator("details.file.viewed")).ToHaveCount(1))
	applyAll(t, page, src, 50)
}

// A diff past 50 files loads each file when it is opened. The keyboard works
// on it as on one file: j opens (and loads) the first file and goes to its
// hunk, a accepts and goes on into the next file, k goes back, and the
// counter counts every part from the start, loaded or not.
func TestReviewASeventyOneFileDiffWithTheKeyboard(t *testing.T) {
	a := startApp(t)
	page, src := manyFilesRun(t, a, 71)
	must(t, expect.Locator(page.Locator("#diff-large")).ToBeVisible())
	must(t, expect.Locator(page.Locator("#diff .part")).ToHaveCount(0)) // nothing loaded yet
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("0 of 71 parts accepted, 0 rejected."))
	must(t, page.Locator("h1").Click())
	kb := page.Keyboard()
	must(t, kb.Press("j"))
	for i := range 71 {
		must(t, expect.Locator(page.Locator(fmt.Sprintf("#part-%d-0", i))).ToBeFocused())
		must(t, kb.Press("a"))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("71 of 71 parts accepted, 0 rejected."))
	must(t, expect.Locator(page.Locator("#part-70-0")).ToBeFocused())
	must(t, kb.Press("k"))
	must(t, expect.Locator(page.Locator("#part-69-0")).ToBeFocused())
	must(t, kb.Press("r"))
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("70 of 71 parts accepted, 1 rejected."))
	must(t, page.Locator("input[aria-label='Accept hunk 1 of f69.txt']").Check())
	screenshot(t, page, "review-large-diff-keyboard")
	applyAll(t, page, src, 71)
}

// A comment on a line and a summary, sent with Request changes, are the
// agent's next message (the model script of the new run expects them);
// the new run links back, the old one says where its changes were made,
// and the comment on line 20 shows as addressed (the new run changed that
// line) while the one on line 38 stays open (nothing near it changed).
func TestRequestChangesBecomesTheAgentsNextTurn(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	first := page.URL()
	must(t, os.WriteFile(filepath.Join(a.Roots, "changes.yaml"), []byte(`steps:
  - expect: {last_contains: "notes.txt:20: say twenty, in words"}
    reply: {tool_calls: [{name: edit_file, arguments: {path: notes.txt, search: "line 20 changed", replace: "line twenty"}}]}
  - reply: {content: "Line 20 now says twenty."}
`), 0o644))
	hunk := page.Locator("#part-0-1")
	must(t, hunk.Locator(".ln-btn[data-line='20']").Click())
	must(t, expect.Locator(hunk.Locator(".line-comment .comment-span")).ToHaveValue("20"))
	must(t, hunk.Locator(".line-comment textarea").Fill("say twenty, in words"))
	// The second by keyboard: c on the focused hunk opens a comment on its
	// first added line.
	last := page.Locator("#part-0-2")
	must(t, last.Focus())
	must(t, page.Keyboard().Press("c"))
	must(t, expect.Locator(last.Locator(".line-comment textarea")).ToBeFocused())
	must(t, expect.Locator(last.Locator(".line-comment .comment-where")).ToHaveText("line 38"))
	must(t, page.Keyboard().Type("and this one?"))
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	requestChanges(t, page, "Only line 20 needs another look.", "changes.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	addressing := page.Locator("#addressing")
	must(t, expect.Locator(addressing).ToContainText("asked by Dana"))
	must(t, expect.Locator(addressing).ToContainText("notes.txt:20: say twenty, in words"))
	must(t, expect.Locator(addressing.Locator(".badge")).ToHaveText([]string{"addressed", "open"}))
	must(t, expect.Locator(addressing.Locator(".comments li").Nth(1)).ToContainText("notes.txt:38: and this one?"))
	must(t, expect.Locator(page.Locator("#transcript")).ToContainText("Only line 20 needs another look."))
	// Its diff is only the new change.
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("line twenty"))
	must(t, expect.Locator(page.Locator("#diff")).Not().ToContainText("line 2 changed"))
	screenshot(t, page, "review-changes-made")

	// The session's page lists the comments of its runs, addressed or open.
	must(t, page.Locator("a[href^='/sessions/']").First().Click())
	comments := page.Locator("#session-comments")
	must(t, expect.Locator(comments).ToContainText("2 comments: 1 addressed, 1 open"))
	must(t, expect.Locator(comments.Locator(".badge")).ToHaveText([]string{"addressed", "open"}))
	screenshot(t, page, "session-comments")

	goTo(t, page, first)
	must(t, expect.Locator(page.Locator(".changes-requested")).ToContainText("Dana asked for changes"))
	must(t, expect.Locator(page.Locator(".changes-requested .next-run")).ToBeVisible())
	// Each comment is a thread: a reply joins it, on this page and on the
	// page of the run that was asked to make the changes.
	thread := page.Locator(".changes-requested li.thread").Nth(1)
	must(t, thread.Locator("details.reply summary").Click())
	must(t, thread.Locator("textarea[name=reply]").Fill("Line 38 is fine after all."))
	must(t, thread.Locator(".reply-form button").Click())
	must(t, expect.Locator(page.Locator(".changes-requested li.thread").Nth(1).Locator(".replies li")).ToContainText("Dana"))
	must(t, expect.Locator(page.Locator(".changes-requested li.thread").Nth(1).Locator(".replies li")).ToContainText("Line 38 is fine after all."))
	must(t, expect.Page(page).ToHaveURL(first))
	must(t, page.Locator(".changes-requested .next-run").Click())
	answer := page.Locator("#addressing li.thread").Nth(1)
	must(t, expect.Locator(answer.Locator(".replies li")).ToContainText("Line 38 is fine after all."))
	must(t, answer.Locator("details.reply summary").Click())
	must(t, answer.Locator("textarea[name=reply]").Fill("Agreed."))
	must(t, answer.Locator(".reply-form button").Click())
	must(t, expect.Locator(page.Locator("#addressing li.thread").Nth(1).Locator(".replies li")).ToHaveCount(2))
	must(t, expect.Locator(page.Locator("#addressing")).ToBeVisible()) // still the asked run's page
	screenshot(t, page, "review-thread")
	goTo(t, page, first)
	// Nothing reached the source yet: the first run still awaits review.
	got, err := os.ReadFile(notes)
	must(t, err)
	if strings.Contains(string(got), "changed") || strings.Contains(string(got), "twenty") {
		t.Fatalf("the source changed before any approval:\n%s", got)
	}
}

// A diff that makes links shows each link and where it points; a link
// that leaves the source is refused by a whole approval, and applied as a
// link once its file is accepted on its own.
func TestALinkOutsideTheSourceNeedsItsOwnAccept(t *testing.T) {
	a := startApp(t)
	src := filepath.Join(a.Roots, "links")
	must(t, os.MkdirAll(src, 0o755))
	must(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "mk.sh"), []byte("ln -s /etc/hostname keylink\nln -s a.txt inlink\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "links.yaml"), []byte("steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"sh mk.sh\"}}]}\n  - reply: {content: Made two links.}\n"), 0o644))
	page := newPage(t)
	goTo(t, page, a.URL+"/launch")
	must(t, page.Locator("#path").Fill("links"))
	must(t, page.Locator("#task").Fill("Make two links."))
	must(t, page.Locator("#script").Fill("links.yaml"))
	must(t, page.Locator("#allow").Fill("sh mk.sh"))
	must(t, page.Locator("#launch").Click())
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	key := page.Locator("details.file").Filter(playwright.LocatorFilterOptions{HasText: "keylink"})
	must(t, expect.Locator(key.Locator(".link-target")).ToHaveText("link → /etc/hostname"))
	must(t, expect.Locator(key.Locator(".link-leaves")).ToContainText("points outside the source"))
	in := page.Locator("details.file").Filter(playwright.LocatorFilterOptions{HasText: "inlink"})
	must(t, expect.Locator(in.Locator(".link-target")).ToHaveText("link → a.txt"))
	must(t, expect.Locator(in.Locator(".link-leaves")).ToHaveCount(0))

	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review-box .notice.bad")).ToContainText("Nothing was applied: the diff makes 1 link(s) pointing outside the source (keylink -> /etc/hostname)"))
	if _, err := os.Lstat(filepath.Join(src, "keylink")); !os.IsNotExist(err) {
		t.Fatalf("a refused approval made keylink: %v", err)
	}
	for _, label := range []string{"Accept keylink", "Accept inlink"} {
		must(t, page.Locator("input[aria-label='"+label+"']").Check())
	}
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by Dana"))
	screenshot(t, page, "review-links")
	for link, want := range map[string]string{"keylink": "/etc/hostname", "inlink": "a.txt"} {
		got, err := os.Readlink(filepath.Join(src, link))
		if err != nil || got != want {
			t.Fatalf("%s in the source: a link to %q (%v), want %q", link, got, err, want)
		}
	}
}

// Decisions, edits and comments are a draft kept on the server for the
// reviewer until submitted: it survives a reload, and Request changes sends
// the comments while the decisions and edits stay for the run's own review
// (which then applies them, and the draft is gone).
func TestTheDraftReviewOutlivesRequestChanges(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	first := page.URL()
	runID := first[strings.LastIndex(first, "/")+1:]
	must(t, os.WriteFile(filepath.Join(a.Roots, "nothing.yaml"), []byte("steps:\n  - reply: {content: Nothing to change.}\n"), 0o644))
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("input[aria-label='Accept hunk 1 of notes.txt']").Check())
	must(t, page.Locator("input[aria-label='Reject hunk 2 of notes.txt']").Check())
	must(t, page.Locator("#part-0-2 .hunk-edit summary").Click())
	editor := page.Locator("#part-0-2 .hunk-edit textarea")
	text, err := editor.InputValue()
	must(t, err)
	edited := strings.Replace(text, "line 38 changed", "line 38, as Dana wants it", 1)
	must(t, editor.Fill(edited))
	must(t, page.Locator("input[aria-label='Accept hunk 3 of notes.txt']").Check())
	must(t, page.Locator("#part-0-1 .ln-btn[data-line='20']").Click())
	must(t, page.Locator("#part-0-1 .line-comment textarea").Fill("why not this one?"))
	must(t, expect.Locator(page.Locator("#viewed-count")).ToHaveText("0 viewed of 1 file"))
	_, err = page.ExpectResponse("**/draft", func() error { return page.Locator(".viewed-box").Check() })
	must(t, err)
	must(t, expect.Locator(page.Locator("#viewed-count")).ToHaveText("1 viewed of 1 file"))

	// A reload shows the draft as it was left, the file marked viewed too.
	goTo(t, page, first)
	must(t, expect.Locator(page.Locator("#viewed-count")).ToHaveText("1 viewed of 1 file"))
	must(t, expect.Locator(page.Locator("#in-list-0.viewed")).ToHaveCount(1))
	must(t, expect.Locator(page.Locator("details.file.viewed")).Not().ToHaveAttribute("open", ""))
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("2 of 3 parts accepted, 1 rejected."))
	must(t, expect.Locator(page.Locator("#part-0-2 .hunk-edit textarea")).ToHaveValue(edited))
	must(t, expect.Locator(page.Locator("#part-0-1 .line-comment textarea")).ToHaveValue("why not this one?"))

	requestChanges(t, page, "Say why hunk 2 is needed.", "nothing.yaml")

	// Back on the run: the comment went to the agent, the decisions and the
	// edit are still there.
	goTo(t, page, first)
	must(t, expect.Locator(page.Locator(".changes-requested")).ToContainText("Dana asked for changes"))
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("2 of 3 parts accepted, 1 rejected."))
	must(t, expect.Locator(page.Locator("#part-0-2 .hunk-edit textarea")).ToHaveValue(edited))
	must(t, expect.Locator(page.Locator("#part-0-1 .line-comment")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#changes-summary")).ToHaveValue(""))
	screenshot(t, page, "review-draft-kept")

	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("2 parts applied, 1 not"))
	got, err := os.ReadFile(notes)
	must(t, err)
	lines := strings.Split(string(got), "\n")
	if lines[1] != "line 2 changed" || lines[19] != "line 20" || lines[37] != "line 38, as Dana wants it" {
		t.Fatalf("notes.txt after Apply accepted:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(a.DataDir, "drafts", runID)); !os.IsNotExist(err) {
		t.Fatalf("the submitted draft is still kept: %v", err)
	}
}

// A session's later run is applied onto the source as it is after an
// earlier run was approved in part: the later change is merged in where it
// does not meet the parts left out (it was refused: "these files changed in
// the source since the run began", which they had not).
func TestALaterRunAppliesAfterAnEarlierOneApprovedInPart(t *testing.T) {
	a := startApp(t)
	page, notes := partsRun(t, a)
	first := page.URL()
	must(t, os.WriteFile(filepath.Join(a.Roots, "ten.yaml"), []byte(`steps:
  - reply: {tool_calls: [{name: edit_file, arguments: {path: notes.txt, search: "line 10\n", replace: "line ten\n"}}]}
  - reply: {content: "Line 10 says ten."}
`), 0o644))
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	requestChanges(t, page, "Spell out line 10 too.", "ten.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	second := page.URL()

	// The first run, in part: its first hunk only.
	goTo(t, page, first)
	must(t, page.Locator("input[aria-label='Accept hunk 1 of notes.txt']").Check())
	must(t, page.Locator("input[aria-label='Reject hunk 2 of notes.txt']").Check())
	must(t, page.Locator("input[aria-label='Reject hunk 3 of notes.txt']").Check())
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("1 part applied, 2 not"))

	// The later run, whole: merged into the source as it now is.
	goTo(t, page, second)
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by Dana"))
	got, err := os.ReadFile(notes)
	must(t, err)
	lines := strings.Split(string(got), "\n")
	if lines[1] != "line 2 changed" || lines[9] != "line ten" || lines[19] != "line 20" || lines[37] != "line 38" {
		t.Fatalf("notes.txt after both runs:\n%s", got)
	}
}

// requestChanges asks, on the run page open in page, for changes with
// summary, made by the model script (under the source root), and waits
// for the page of the run that makes them.
func requestChanges(t *testing.T, page playwright.Page, summary, script string) {
	t.Helper()
	from := page.URL()
	must(t, page.Locator("#request-changes summary").Click())
	must(t, page.Locator("#changes-summary").Fill(summary))
	must(t, page.Locator("#changes-script").Fill(script))
	must(t, page.Locator("#request-changes-button").Click())
	must(t, expect.Page(page).Not().ToHaveURL(from))
}

// Request changes on the demo offers, from a list, only the models that
// can answer the next message (the profiles of models.yaml and the built-in
// notes script); the demo's own script, which answers only its task, is
// not offered, and the request goes out with the built-in one.
func TestRequestChangesOnTheDemoOffersModelsThatCanAnswer(t *testing.T) {
	a := startApp(t)
	page := newPage(t)
	demoAwaitingReview(t, a, page)
	must(t, page.Locator("#request-changes summary").Click())
	must(t, expect.Locator(page.Locator("#changes-model option")).ToHaveText([]string{"local-demo", "notes — lists the files and writes NOTES.md (any folder)"}))
	_, err := page.Locator("#changes-model").SelectOption(playwright.SelectOptionValues{Values: &[]string{"builtin:notes"}})
	must(t, err)
	must(t, page.Locator("#changes-summary").Fill("Write down what you did."))
	from := page.URL()
	must(t, page.Locator("#request-changes-button").Click())
	must(t, expect.Page(page).Not().ToHaveURL(from))
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#diff")).ToContainText("NOTES.md"))
}

// A request for changes that fails (a model script that is not there)
// loses nothing the reviewer typed: after the error and a reload the
// decisions, the line comment and the summary are all there, and the
// request then goes out with them.
func TestARequestForChangesThatFailsLosesNothing(t *testing.T) {
	a := startApp(t)
	page, _ := partsRun(t, a)
	first := page.URL()
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("input[aria-label='Accept hunk 1 of notes.txt']").Check())
	must(t, page.Locator("input[aria-label='Reject hunk 2 of notes.txt']").Check())
	must(t, page.Locator("#part-0-1 .ln-btn[data-line='20']").Click())
	must(t, page.Locator("#part-0-1 .line-comment textarea").Fill("why not this one?"))
	must(t, page.Locator("#request-changes summary").Click())
	must(t, page.Locator("#changes-summary").Fill("Say why hunk 2 is needed."))
	must(t, page.Locator("#changes-script").Fill("missing.yaml"))
	must(t, page.Locator("#request-changes-button").Click())
	must(t, expect.Locator(page.Locator("#review-error")).ToContainText("No changes were requested"))
	must(t, expect.Locator(page.Locator("#review-error")).ToContainText(`no file "missing.yaml"`))
	must(t, expect.Page(page).ToHaveURL(first))

	goTo(t, page, first)
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("1 of 3 parts accepted, 1 rejected."))
	must(t, expect.Locator(page.Locator("#part-0-1 .line-comment textarea")).ToHaveValue("why not this one?"))
	must(t, expect.Locator(page.Locator("#changes-summary")).ToHaveValue("Say why hunk 2 is needed."))

	// A request whose run fails (its model script matches nothing): back on
	// the run, the comment and the summary are in the form again.
	must(t, os.WriteFile(filepath.Join(a.Roots, "mismatch.yaml"), []byte("steps:\n  - expect: {last_contains: \"never said\"}\n    reply: {content: no}\n"), 0o644))
	requestChanges(t, page, "Say why hunk 2 is needed.", "mismatch.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("error", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	goTo(t, page, first)
	must(t, expect.Locator(page.Locator("#request-restored")).ToContainText("ended in error before the agent answered it"))
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("1 of 3 parts accepted, 1 rejected."))
	must(t, expect.Locator(page.Locator("#part-0-1 .line-comment textarea")).ToHaveValue("why not this one?"))
	must(t, expect.Locator(page.Locator("#changes-summary")).ToHaveValue("Say why hunk 2 is needed."))
	screenshot(t, page, "request-changes-failed")

	must(t, os.WriteFile(filepath.Join(a.Roots, "nothing.yaml"), []byte("steps:\n  - expect: {last_contains: \"why not this one?\"}\n    reply: {content: Hunk 2 is needed for the count.}\n"), 0o644))
	requestChanges(t, page, "Say why hunk 2 is needed.", "nothing.yaml")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("passed", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
}

// A 65-file diff (each file loaded when opened) reviewed fast with the
// keyboard: 60 presses of a, made without waiting for each file to load,
// accept 60 hunks (a key waits for the file it acts on); after a reload
// the counter still says 60, from the draft, though no file is loaded, and
// Apply accepted applies those 60 and not the other 5.
func TestAFastKeyboardReviewOfALargeDiffSurvivesAReload(t *testing.T) {
	a := startApp(t)
	page, src := manyFilesRun(t, a, 65)
	must(t, expect.Locator(page.Locator("#diff-large")).ToBeVisible())
	must(t, page.Locator("h1").Click())
	kb := page.Keyboard()
	must(t, kb.Press("j"))
	for range 60 {
		must(t, kb.Press("a"))
	}
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("60 of 65 parts accepted, 0 rejected.", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#part-60-0")).ToBeFocused())
	// The draft is saved a moment after the last change: reloaded until
	// then (for at most 10 s).
	url := page.URL()
	for range 20 {
		goTo(t, page, url)
		if text, _ := page.Locator("#parts-count").TextContent(); strings.HasPrefix(text, "60 of") {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	must(t, expect.Locator(page.Locator("#diff .part")).ToHaveCount(0))
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("60 of 65 parts accepted, 0 rejected."))
	// A mouse accept on a file opened now is saved with the others.
	must(t, page.Locator("#file-62 > summary").Click())
	_, err := page.ExpectResponse("**/draft", func() error {
		return page.Locator("input[aria-label='Accept hunk 1 of f62.txt']").Check()
	})
	must(t, err)
	goTo(t, page, page.URL())
	must(t, expect.Locator(page.Locator("#parts-count")).ToHaveText("61 of 65 parts accepted, 0 rejected."))
	must(t, page.Locator("input[name=reviewer]").Fill("Dana"))
	must(t, page.Locator("#apply-accepted").Click())
	must(t, expect.Locator(page.Locator("#review-parts")).ToContainText("61 parts applied, 4 not"))
	for i := range 65 {
		got, err := os.ReadFile(filepath.Join(src, fmt.Sprintf("f%02d.txt", i)))
		must(t, err)
		if want := i < 60 || i == 62; (string(got) == "one\nTWO\nthree\n") != want {
			t.Fatalf("f%02d.txt: %q, changed: want %v", i, got, want)
		}
	}
}

// A command that failed is marked where it happened (its result's heading
// says "exit 3") and in the review box, before the reviewer approves.
func TestAFailedCommandIsMarkedWhereItHappenedAndInTheReviewBox(t *testing.T) {
	a := startApp(t)
	must(t, os.MkdirAll(filepath.Join(a.Roots, "fails"), 0o755))
	must(t, os.WriteFile(filepath.Join(a.Roots, "fails", "a.txt"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "fails.yaml"), []byte(`steps:
  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - reply: {tool_calls: [{name: run_command, arguments: {command: "echo checking; exit 3"}}]}
  - reply: {content: "Done, though the check failed."}
`), 0o644))
	page := newPage(t)
	launchScripted(t, page, a.URL, "fails", "Change a.txt and check it.", "fails.yaml")
	must(t, page.Locator(".approve-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator(".msg.failed .exit-status")).ToHaveText("exit 3"))
	// The result sits right under its call, in the message that made it.
	must(t, expect.Locator(page.Locator("article.role-assistant .call + article.role-tool .exit-status")).ToHaveText("exit 3"))
	must(t, expect.Locator(page.Locator("#failed-calls")).ToContainText("1 tool call of this run failed: run_command (exit 3)"))
	screenshot(t, page, "review-failed-command")
}

// While an approved command runs, the timeline shows it and for how long
// it has been running, counting, until its result arrives.
func TestARunningCommandShowsHowLongItHasRun(t *testing.T) {
	a := startApp(t)
	must(t, os.MkdirAll(filepath.Join(a.Roots, "slow"), 0o755))
	must(t, os.WriteFile(filepath.Join(a.Roots, "slow", "a.txt"), []byte("old\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.Roots, "slow.yaml"), []byte(`steps:
  - reply: {tool_calls: [{name: run_command, arguments: {command: "echo started; sleep 5; echo slept"}}]}
  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - reply: {content: "Done."}
`), 0o644))
	page := newPage(t)
	launchScripted(t, page, a.URL, "slow", "Wait, then change a.txt.", "slow.yaml")
	must(t, page.Locator(".approve-call").Click(playwright.LocatorClickOptions{Timeout: playwright.Float(30000)}))
	running := page.Locator("#timeline-list .running")
	must(t, expect.Locator(running).ToHaveText(regexp.MustCompile(`^running for [0-9]+ s$`), playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(10000)}))
	must(t, expect.Locator(running.Locator("xpath=..")).ToContainText("sleep 5; echo slept"))
	// Its output so far, in the timeline and in the transcript, under the
	// call, before it ends.
	must(t, expect.Locator(page.Locator("#timeline-list")).ToContainText("started"))
	must(t, expect.Locator(page.Locator("#transcript .running-output")).ToContainText("started"))
	must(t, expect.Locator(page.Locator("#transcript .running-output")).Not().ToContainText("slept"))
	must(t, expect.Locator(running).ToHaveCount(1))
	screenshot(t, page, "timeline-running-command")
	must(t, expect.Locator(page.Locator(".badges .badge").First()).ToHaveText("awaiting review", playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	must(t, expect.Locator(page.Locator("#timeline-list .running")).ToHaveCount(0))
}
