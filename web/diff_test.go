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
