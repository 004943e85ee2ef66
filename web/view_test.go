package web

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

func TestFindPartsMarksEveryMatchWhateverItsCase(t *testing.T) {
	tests := []struct {
		text, find string
		want       []snippetPart
	}{
		{"use math.Round here", "math.round", []snippetPart{{Text: "use "}, {Text: "math.Round", Match: true}, {Text: " here"}}},
		{"aXa", "x", []snippetPart{{Text: "a"}, {Text: "X", Match: true}, {Text: "a"}}},
		{"xx", "x", []snippetPart{{Text: "x", Match: true}, {Text: "x", Match: true}}},
		{"nothing", "zzz", []snippetPart{{Text: "nothing"}}},
		{"plain", "", []snippetPart{{Text: "plain"}}},
		{"İstanbul İ", "i̇", []snippetPart{{Text: "İstanbul İ"}}}, // folding changes lengths: matched as typed
	}
	for _, tc := range tests {
		if got := findParts(tc.text, tc.find); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("findParts(%q, %q) = %+v, want %+v", tc.text, tc.find, got, tc.want)
		}
	}
}

func TestInlinePartsShowsStrongAndCodeOnly(t *testing.T) {
	tests := []struct {
		text string
		want []inlinePart
	}{
		{"**tool call** `write_file` (call_1)", []inlinePart{{Text: "tool call", Kind: "strong"}, {Text: " "}, {Text: "write_file", Kind: "code"}, {Text: " (call_1)"}}},
		{"a ** b", []inlinePart{{Text: "a ** b"}}},
		{"open `on one\nline` only", []inlinePart{{Text: "open `on one\nline` only"}}},
		{"<script>`x`", []inlinePart{{Text: "<script>"}, {Text: "x", Kind: "code"}}},
		{"``", []inlinePart{{Text: "``"}}},
		{"", nil},
	}
	for _, tc := range tests {
		if got := inlineParts(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("inlineParts(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

// A listed file of a large diff (not highlighted yet) said it had 0 lines:
// its line count came from highlighted hunks only.
func TestListedDiffFilesCountTheirLines(t *testing.T) {
	files, err := patch.Parse("diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n")
	if err != nil {
		t.Fatal(err)
	}
	listed, built := ListDiff(files)[0], BuildDiff(files)[0]
	if listed.Lines != 3 || built.Lines != 3 || listed.Path != "a.go" || listed.Added != 1 || len(listed.Hunks) != 0 || len(built.Hunks) != 1 {
		t.Fatalf("listed %+v, built %+v", listed, built)
	}
}

// The run page offers Resume on an interrupted run of proctor's own agent
// (in a session or not, on a folder or a repository) when this server runs
// agents; not on other statuses, external agents or scenario runs.
func TestRunPageOffersResumeOnInterruptedRunsOfItsOwnAgent(t *testing.T) {
	interrupted := bundle.Receipt{RunID: "r1", Status: bundle.StatusInterrupted, Kind: bundle.KindTask}
	for _, tc := range []struct {
		name   string
		canRun bool
		edit   func(*bundle.Receipt)
		want   bool
	}{
		{"interrupted", true, func(*bundle.Receipt) {}, true},
		{"in a session", true, func(r *bundle.Receipt) { r.SessionID = "sess-1" }, true},
		{"on a repository", true, func(r *bundle.Receipt) { r.Source.Kind = "git" }, true},
		{"native named", true, func(r *bundle.Receipt) { r.Agent = &bundle.Agent{Kind: "native"} }, true},
		{"a server that runs no agents", false, func(*bundle.Receipt) {}, false},
		{"awaiting review", true, func(r *bundle.Receipt) { r.Status = bundle.StatusAwaitingReview }, false},
		{"an external agent", true, func(r *bundle.Receipt) { r.Agent = &bundle.Agent{Name: "codex", Kind: "codex"} }, false},
		{"a scenario run", true, func(r *bundle.Receipt) { r.Kind = bundle.KindScenario }, false},
	} {
		rc := interrupted
		tc.edit(&rc)
		p := RunPage{Meta: Meta{CanRun: tc.canRun}, View: &runview.View{Run: &store.RunDetail{Receipt: rc}}}
		if got := p.Resumable(); got != tc.want {
			t.Errorf("%s: Resumable() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCommentTallyCountsAddressedAndOpen(t *testing.T) {
	for _, tc := range []struct {
		addressed [][]bool
		resolved  int // the first comment of the first request is resolved
		want      string
	}{
		{[][]bool{{true, false}}, 0, "2 comments: 1 addressed, 1 open"},
		{[][]bool{{true}, {true, true}}, 0, "3 comments: 3 addressed, 0 open"},
		{[][]bool{{false}}, 0, "1 comment: 0 addressed, 1 open"},
		{[][]bool{{}}, 0, "0 comments: 0 addressed, 0 open"},
		{[][]bool{{false, false}}, 1, "2 comments: 0 addressed, 1 open, 1 resolved"},
	} {
		var rs []records.RequestState
		for _, a := range tc.addressed {
			rs = append(rs, records.RequestState{Addressed: a, ChangeRequest: bundle.ChangeRequest{Comments: make([]bundle.Comment, len(a))}})
		}
		if tc.resolved > 0 {
			rs[0].Comments[0].Resolved = &bundle.Resolution{By: "lee"}
		}
		if got := commentTally(rs); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.addressed, got, tc.want)
		}
	}
}

func TestTitleIsTheTasksFirstParagraph(t *testing.T) {
	for _, tc := range []struct{ task, want string }{
		{"Fix the rounding bug", "Fix the rounding bug"},
		{"Changes requested by Dana: line 20.\n\nA reviewer asked for changes (run r1).", "Changes requested by Dana: line 20."},
		{"Add a health endpoint\nthat returns 200\r\n\r\nDetails follow.", "Add a health endpoint that returns 200"},
		{"\n\n  lead blank lines\n\nrest", "lead blank lines"},
		{strings.Repeat("word ", 40), strings.Repeat("word ", 17) + "word…"},
	} {
		if got := title(tc.task, 90); got != tc.want {
			t.Errorf("title(%q) = %q, want %q", tc.task, got, tc.want)
		}
	}
}

func TestDiffTotalsCountsFilesInWords(t *testing.T) {
	one := patch.File{NewPath: "a", Added: 2, Deleted: 1}
	for _, tc := range []struct {
		files []patch.File
		want  string
	}{
		{[]patch.File{one}, "1 file, +2 −1"}, // not "1 files"
		{[]patch.File{one, one}, "2 files, +4 −2"},
	} {
		if got := diffTotals(tc.files); got != tc.want {
			t.Errorf("diffTotals(%d files) = %q, want %q", len(tc.files), got, tc.want)
		}
	}
}

func TestCostChartPlotsEachPricedAgentAndModel(t *testing.T) {
	m := suite.NewMatrix("s", []store.SuiteRow{
		{Scenario: "a", Agent: "native", Model: "cheap", Runs: 2, Passed: 2, Cost: 0.02, Priced: 2},
		{Scenario: "b", Agent: "native", Model: "cheap", Runs: 2, Passed: 0, Cost: 0.02, Priced: 2},
		{Scenario: "a", Agent: "codex", Model: "dear", Runs: 2, Passed: 2, Cost: 0.16, Priced: 2},
		{Scenario: "b", Agent: "codex", Model: "dear", Runs: 2, Passed: 2, Cost: 0.16, Priced: 2},
		{Scenario: "a", Agent: "native", Model: "scripted", Runs: 2, Passed: 2},
	})
	p := SuitePage{View: suite.View{Matrix: m}}
	ch := p.CostChart()
	if len(ch.Points) != 2 || len(ch.Unpriced) != 1 || ch.Unpriced[0] != "native · scripted" {
		t.Fatalf("points %+v, unpriced %v", ch.Points, ch.Unpriced)
	}
	// codex · dear: $0.08 a run, every run passed; native · cheap: $0.01, half.
	dear, cheap := ch.Points[0], ch.Points[1]
	if dear.Label != "codex · dear" || cheap.Label != "native · cheap" {
		t.Fatalf("labels %q %q", dear.Label, cheap.Label)
	}
	if dear.Y != ch.Top || cheap.Y != (ch.Top+ch.Bottom)/2 || dear.X <= cheap.X || cheap.X <= ch.Left || dear.X > ch.Right {
		t.Fatalf("dear at %d,%d; cheap at %d,%d; plot %d..%d × %d..%d", dear.X, dear.Y, cheap.X, cheap.Y, ch.Left, ch.Right, ch.Top, ch.Bottom)
	}
	if dear.High > dear.Y || dear.Low <= dear.Y || dear.Anchor != "end" || cheap.Anchor != "start" {
		t.Fatalf("interval or label side: %+v", dear)
	}
	if last := ch.XTicks[len(ch.XTicks)-1]; last.Label != "$0.100" || last.At != ch.Right || ch.XTicks[1].Label != "$0.025" {
		t.Fatalf("x axis ends at %+v, want $0.100 (0.08 × 1.1 rounded up), by $0.025", last)
	}
	rows := p.ModelRows()
	if len(rows) != 3 || rows[0].Cost != "$0.08" || rows[0].Total != "$0.32" || rows[2].Cost != "no price" || rows[1].PassK != "1 of 2" {
		t.Fatalf("rows %+v", rows)
	}
	for v, want := range map[float64]float64{0: 0.001, 0.0004: 0.001, 0.088: 0.1, 0.12: 0.2, 3.3: 5, 7: 10} {
		if got := niceCeil(v); math.Abs(got-want) > 1e-12 {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
}

// The runs list polls while a run on it works, and on the first page of
// the newest runs even when idle (a run launched anywhere appears there);
// a page of history (a cursor, oldest first) or an error does not.
func TestTheRunsListPollsWhereANewRunWouldShow(t *testing.T) {
	working := store.RunPage{Runs: []store.RunSummary{{Status: "running"}}}
	idle := store.RunPage{Runs: []store.RunSummary{{Status: "passed"}}}
	for _, tc := range []struct {
		name string
		p    RunsPage
		want string
	}{
		{"newest, idle", RunsPage{Page: idle}, "5s"},
		{"newest, filtered, idle", RunsPage{Page: idle, Filter: store.RunFilter{Status: "passed"}}, "5s"},
		{"newest, a run working", RunsPage{Page: working}, "2s"},
		{"queued", RunsPage{Page: idle, Queued: []QueuedRun{{RunID: "x"}}}, "2s"},
		{"an older page, idle", RunsPage{Page: idle, Filter: store.RunFilter{After: "c"}}, ""},
		{"a later page, idle", RunsPage{Page: idle, Filter: store.RunFilter{Before: "c"}}, ""},
		{"oldest first, idle", RunsPage{Page: idle, Filter: store.RunFilter{Oldest: true}}, ""},
		{"an older page, a run working", RunsPage{Page: working, Filter: store.RunFilter{After: "c"}}, "2s"},
		{"a bad cursor", RunsPage{Error: "out of date"}, ""},
	} {
		if got := tc.p.PollEvery(); got != tc.want {
			t.Errorf("%s: every %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A file of a large diff that is not loaded carries its draft's decisions,
// edits and comments (not whether it was viewed, nor another file's) as
// hidden fields of the review form, in name order.
func TestANotLoadedFileCarriesItsDraft(t *testing.T) {
	d := Draft{"part.3.0": "accept", "part.3.file": "reject", "edit.3.1": "x", "comment.3.0": "why", "line.3.0": "4",
		"viewed.3": "1", "part.13.0": "accept", "part.30.0": "reject", "summary": "s"}
	got := d.FileFields(3)
	want := []Field{{"comment.3.0", "why"}, {"edit.3.1", "x"}, {"line.3.0", "4"}, {"part.3.0", "accept"}, {"part.3.file", "reject"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if len(d.FileFields(4)) != 0 {
		t.Errorf("a file without a draft: %v", d.FileFields(4))
	}
}

// Counts group their thousands alike from 1,000 on; sizes are in the
// binary unit that holds them.
func TestNumbersReadAlike(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 5432: "5,432", 20000: "20,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{900: "900 B", 1024: "1 KiB", 1536: "1.5 KiB", 4194304: "4 MiB", 536870912: "512 MiB", 1610612736: "1.5 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// A run's page and its suite's matrix use the same words: a run that
// ended in error says "error" in both, and one that stopped in a working
// stage says it stopped there.
func TestStatusWordsAgree(t *testing.T) {
	for _, tc := range []struct {
		stage bundle.Stage
		ended bool
		want  string
	}{
		{bundle.StageRunning, false, "stage running"},
		{bundle.StageRunning, true, "stopped in stage running"},
		{bundle.StageAwaitingReview, true, "stage awaiting review"},
		{bundle.StageFailed, true, "stage failed"},
	} {
		if got := stageWords(tc.stage, tc.ended); got != tc.want {
			t.Errorf("%s ended %v: %q, want %q", tc.stage, tc.ended, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cell store.Cell
		want string
	}{
		{store.Cell{RunID: "r", HasVerdict: true, Status: bundle.StatusError, Aborted: "script mismatch"}, "error: script mismatch"},
		{store.Cell{RunID: "r", HasVerdict: true, Status: bundle.StatusInterrupted}, "interrupted"},
		{store.Cell{RunID: "r", HasVerdict: true, Status: bundle.StatusFailed}, "failed"},
		{store.Cell{RunID: "r", HasVerdict: true, Passed: true, Status: bundle.StatusPassed}, "passed"},
		{store.Cell{RunID: "r", Status: bundle.StatusQueued}, "queued"},
		{store.Cell{RunID: "r", Status: bundle.StatusRunning, Stage: bundle.StageWarmingCaches}, "running: warming caches"},
		{store.Cell{RunID: "r", Status: bundle.StatusRunning, Stage: bundle.StageRunning}, "running"},
	} {
		if got := cellLabel(tc.cell); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.cell, got, tc.want)
		}
	}
}
