package web

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
)

// Inside a changed line, what changed is marked, in whole words, on both
// sides; a line that shares nothing with its pair is left whole.
func TestAChangedLineMarksWhatChanged(t *testing.T) {
	tests := []struct {
		old, new         string
		wantOld, wantNew string // the marked text
	}{
		{"\treturn int64(euros * 100)", "\treturn int64(math.Round(euros * 100))", "euros * 100", "math.Round(euros * 100)"},
		{"total := 3", "total := 42", "3", "42"},
		{"alpha", "omega", "", ""},
		{"naïve café", "naïve cafés", "café", "cafés"},
		{"x", "x ", "", " "},
		{"日本語", "日本人", "", ""}, // one word: the whole line changed
		{"a é b", "a è b", "é", "è"},
		{"", "new", "", ""},
	}
	for _, tc := range tests {
		files, err := patch.Parse("--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-" + tc.old + "\n+" + tc.new + "\n")
		if err != nil {
			t.Fatal(err)
		}
		lines := BuildDiff(files)[0].Hunks[0].Lines
		marked := func(l DiffLine) string {
			var b strings.Builder
			for _, tok := range l.Tokens {
				if strings.Contains(tok.Class, "chg") {
					b.WriteString(tok.Text)
				}
			}
			return b.String()
		}
		if got := marked(lines[0]); got != tc.wantOld {
			t.Errorf("%q → %q: old marks %q, want %q", tc.old, tc.new, got, tc.wantOld)
		}
		if got := marked(lines[1]); got != tc.wantNew {
			t.Errorf("%q → %q: new marks %q, want %q", tc.old, tc.new, got, tc.wantNew)
		}
		if lineText(&lines[0]) != tc.old || lineText(&lines[1]) != tc.new {
			t.Errorf("the marks changed the text: %q %q", lineText(&lines[0]), lineText(&lines[1]))
		}
	}
}

// The lines a diff leaves out are known by hunk: between two hunks, before
// the first; after the last only when it does not end at the file's end.
func TestGapsAroundHunks(t *testing.T) {
	files, err := patch.Parse("--- a/n.txt\n+++ b/n.txt\n" +
		"@@ -4,4 +4,5 @@\n 4\n+new\n 5\n 6\n 7\n" +
		"@@ -20,4 +21,3 @@\n 20\n 21\n-22\n 23\n")
	if err != nil {
		t.Fatal(err)
	}
	f := BuildDiff(files)[0]
	if g := f.Hunks[0].Above; g == nil || *g != (Gap{From: 1, To: 3, Shift: 0}) {
		t.Errorf("above the first hunk: %+v", g)
	}
	if g := f.Hunks[1].Above; g == nil || *g != (Gap{From: 8, To: 19, Shift: 1}) {
		t.Errorf("between the hunks: %+v", g)
	}
	if f.Below != nil {
		t.Errorf("below a hunk with one line after its change: %+v, want none (the file ends there)", f.Below)
	}
	files[0].Hunks = files[0].Hunks[:1]
	if g := BuildDiff(files)[0].Below; g == nil || *g != (Gap{From: 8, To: 0, Shift: 1}) {
		t.Errorf("below: %+v", g)
	}
}

func TestExpandShowsTheLinesNearestTheHunk(t *testing.T) {
	old := make([]string, 50)
	for i := range old {
		old[i] = "line " + itoa(i+1)
	}
	for _, tc := range []struct {
		name        string
		gap         Gap
		up          bool
		first, last int // old numbers of the rows shown
		rest        *Gap
	}{
		{"up, a long gap", Gap{From: 1, To: 30, Shift: 2}, true, 11, 30, &Gap{From: 1, To: 10, Shift: 2}},
		{"up, a short gap", Gap{From: 5, To: 9}, true, 5, 9, nil},
		{"down to the file's end", Gap{From: 41, To: 0, Shift: -1}, false, 41, 50, nil},
		{"down, more left", Gap{From: 1, To: 0}, false, 1, 20, &Gap{From: 21, To: 0}},
		{"past the end", Gap{From: 51, To: 0}, false, 0, 0, nil},
		{"to past the end", Gap{From: 45, To: 90}, true, 45, 50, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, rest := Expand("n.txt", old, tc.gap, tc.up)
			if tc.first == 0 {
				if len(rows) != 0 || rest != nil {
					t.Fatalf("rows %d, rest %+v", len(rows), rest)
				}
				return
			}
			if len(rows) != tc.last-tc.first+1 || rows[0].OldNo != tc.first || rows[len(rows)-1].OldNo != tc.last || rows[0].NewNo != tc.first+tc.gap.Shift || lineText(&rows[0]) != old[tc.first-1] {
				t.Fatalf("rows %d: first %+v", len(rows), rows[0])
			}
			if (rest == nil) != (tc.rest == nil) || rest != nil && *rest != *tc.rest {
				t.Fatalf("rest %+v, want %+v", rest, tc.rest)
			}
		})
	}
}

// A draft's comments go under the line each ends on, several a line, in
// the order they were made; one on the hunk, or on a line the hunk does
// not show, goes below the hunk (never hidden).
func TestDraftCommentsGoUnderTheirLines(t *testing.T) {
	files, err := patch.Parse("diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n")
	if err != nil {
		t.Fatal(err)
	}
	f := BuildDiff(files)[0]
	d := Draft{
		"comment.0.0.10": "second on 2", "line.0.0.10": "2",
		"comment.0.0.9": "first on 2", "line.0.0.9": "2",
		"comment.0.0.1": "on the deleted line", "line.0.0.1": "L2",
		"comment.0.0.2": "a range", "line.0.0.2": "L2-3",
		"comment.0.0":   "an older draft's, on the hunk",
		"comment.0.0.3": "off the hunk", "line.0.0.3": "40",
		"comment.1.0.0": "another file's",
	}
	notes := d.Comments(f)[0]
	var got []string
	for _, l := range f.Hunks[0].Lines {
		for _, c := range notes.On(&l) {
			got = append(got, string(l.Kind)+c.Words+": "+c.Text)
		}
	}
	for _, c := range notes.Loose {
		got = append(got, "below: "+c.Words+": "+c.Text)
	}
	want := []string{
		"-old line 2: on the deleted line",
		"+line 2: first on 2",
		"+line 2: second on 2",
		" lines 2 (old) to 3: a range",
		"below: the hunk: an older draft's, on the hunk",
		"below: line 40 (not in this hunk): off the hunk",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("comments placed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
