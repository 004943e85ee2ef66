package web

import (
	"reflect"
	"testing"
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
