package web

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
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

func TestMatrixPutsWhatNeedsALookFirstAndPages(t *testing.T) {
	var cells []store.Cell
	tags := map[string][]string{"b-fails": {"go"}, "c-flaky": {"go", "slow"}, "z-007": {"slow"}}
	add := func(scenario string, results ...string) {
		for i, r := range results {
			c := store.Cell{Scenario: scenario, Repeat: i + 1, RunID: fmt.Sprintf("%s-%d", scenario, i), Tags: tags[scenario]}
			switch r {
			case "pass":
				c.HasVerdict, c.Passed = true, true
			case "fail":
				c.HasVerdict = true
			case "broken":
				c.HasVerdict, c.Broken = true, true
			}
			cells = append(cells, c)
		}
	}
	add("a-passes", "pass", "pass")
	add("b-fails", "fail", "fail")
	add("c-flaky", "pass", "fail")
	add("d-broken", "pass", "broken")
	add("e-running", "pass", "running")
	for i := range 120 {
		add(fmt.Sprintf("z-%03d", i), "pass", "pass")
	}
	m := NewMatrix(cells)
	var order []string
	for _, r := range m.Rows[:5] {
		order = append(order, r.Scenario)
	}
	if got := strings.Join(order, " "); got != "d-broken b-fails c-flaky a-passes e-running" {
		t.Fatalf("order %s", got)
	}
	tests := []struct {
		f           MatrixFilter
		page        int
		first       string
		rows, shown int
		pages       int
	}{
		{MatrixFilter{}, 1, "d-broken", 50, 125, 3},
		{MatrixFilter{}, 3, "z-095", 25, 125, 3},
		{MatrixFilter{}, 9, "z-095", 25, 125, 3}, // past the end: the last page
		{MatrixFilter{Status: "failing"}, 1, "d-broken", 3, 3, 1},
		{MatrixFilter{Status: "flaky"}, 1, "d-broken", 2, 2, 1}, // a pass and a broken check are mixed results too
		{MatrixFilter{Status: "running"}, 1, "e-running", 1, 1, 1},
		{MatrixFilter{Name: "Z-11"}, 1, "z-110", 10, 10, 1},
		{MatrixFilter{Name: "nothing"}, 1, "", 0, 0, 1},
		{MatrixFilter{Tag: "go"}, 1, "b-fails", 2, 2, 1},
		{MatrixFilter{Tag: "slow"}, 1, "c-flaky", 2, 2, 1},
		{MatrixFilter{Tag: "slow", Status: "passing"}, 1, "z-007", 1, 1, 1},
		{MatrixFilter{Tag: "nope"}, 1, "", 0, 0, 1},
	}
	for _, tc := range tests {
		rows, shown, pages := m.Page(tc.f, tc.page)
		first := ""
		if len(rows) > 0 {
			first = rows[0].Scenario
		}
		if first != tc.first || len(rows) != tc.rows || shown != tc.shown || pages != tc.pages {
			t.Errorf("%+v page %d: first %q, %d rows, %d shown, %d pages", tc.f, tc.page, first, len(rows), shown, pages)
		}
	}
	if got := strings.Join(m.Tags, " "); got != "go slow" {
		t.Errorf("tags of the suite: %q", got)
	}
	if m.Total != 250 || m.Running != 1 || m.Passed != 245 || m.AllPass != 122 {
		t.Errorf("totals: %d runs, %d running, %d passed, pass^k %d", m.Total, m.Running, m.Passed, m.AllPass)
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
		p := RunPage{Meta: Meta{CanRun: tc.canRun}, Run: &store.RunDetail{Receipt: rc}}
		if got := p.Resumable(); got != tc.want {
			t.Errorf("%s: Resumable() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCommentTallyCountsAddressedAndOpen(t *testing.T) {
	for _, tc := range []struct {
		addressed [][]bool
		want      string
	}{
		{[][]bool{{true, false}}, "2 comments: 1 addressed, 1 open"},
		{[][]bool{{true}, {true, true}}, "3 comments: 3 addressed, 0 open"},
		{[][]bool{{false}}, "1 comment: 0 addressed, 1 open"},
		{[][]bool{{}}, "0 comments: 0 addressed, 0 open"},
	} {
		var rs []run.RequestState
		for _, a := range tc.addressed {
			rs = append(rs, run.RequestState{Addressed: a})
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
