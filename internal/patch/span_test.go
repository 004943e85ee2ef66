package patch_test

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
)

func TestParseSpan(t *testing.T) {
	for _, tc := range []struct {
		in, out, words string
		bad            bool
	}{
		{in: "12", out: "12", words: "line 12"},
		{in: "R12", out: "12", words: "line 12"},
		{in: "L7", out: "L7", words: "old line 7"},
		{in: "10-14", out: "10-14", words: "lines 10 to 14"},
		{in: "L3-L5", out: "L3-L5", words: "old lines 3 to 5"},
		{in: "L7-9", out: "L7-9", words: "lines 7 (old) to 9"},
		{in: " 4 ", out: "4", words: "line 4"},
		{in: "", bad: true},
		{in: "0", bad: true},
		{in: "-3", bad: true},
		{in: "+3", bad: true},
		{in: "012", bad: true},
		{in: "L", bad: true},
		{in: "3-", bad: true},
		{in: "3-4-5", bad: true},
		{in: "99999999999999999999", bad: true},
	} {
		s, err := patch.ParseSpan(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q was read as %v", tc.in, s)
			}
			continue
		}
		if err != nil || s.String() != tc.out || s.Words() != tc.words {
			t.Errorf("%q: %v %q, err %v; want %q %q", tc.in, s, s.Words(), err, tc.out, tc.words)
		}
	}
}

// A span is the lines of one hunk between its ends, deleted ones too; the
// old side's lines stand in the new file where the next line it keeps is.
func TestSpanLines(t *testing.T) {
	const diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n one\n-two\n-three\n+2\n+3\n four\n five\n@@ -20,2 +20,3 @@\n twenty\n+new\n last\n"
	files, err := patch.Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	for _, tc := range []struct {
		span  string
		lines string // texts, "" when the span is not in one hunk
		hunk  int
		newAt int // where the span's start stands in the new file
	}{
		{"2", "2", 0, 2},
		{"L2", "two", 0, 2},
		{"L3", "three", 0, 2},
		{"L2-3", "two three 2 3", 0, 2},
		{"1-4", "one two three 2 3 four", 0, 1},
		{"L4", "four", 0, 4},
		{"21", "new", 1, 21},
		{"20-22", "twenty new last", 1, 20},
		{"4-2", "", 0, 4},
		{"2-21", "", 0, 2},
		{"9", "", 0, 9},
	} {
		s, _ := patch.ParseSpan(tc.span)
		lines, hunk, ok := f.Lines(s)
		var texts []string
		for _, l := range lines {
			texts = append(texts, l.Text)
		}
		if got := strings.Join(texts, " "); got != tc.lines || ok != (tc.lines != "") || (ok && hunk != tc.hunk) {
			t.Errorf("%s: lines %q of hunk %d (%v), want %q of %d", tc.span, got, hunk, ok, tc.lines, tc.hunk)
		}
		if got := f.NewAt(s.Start); got != tc.newAt {
			t.Errorf("%s: stands at new line %d, want %d", tc.span, got, tc.newAt)
		}
	}
}

// A span that reads writes itself back as it reads.
func FuzzParseSpan(f *testing.F) {
	for _, s := range []string{"12", "L7", "10-14", "L7-9", "R3", "L-", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := patch.ParseSpan(in)
		if err != nil {
			return
		}
		again, err := patch.ParseSpan(s.String())
		if err != nil || again != s {
			t.Fatalf("%q read as %v, which reads back as %v (%v)", in, s, again, err)
		}
	})
}
