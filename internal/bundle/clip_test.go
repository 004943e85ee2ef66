package bundle_test

import (
	"testing"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func TestClipCutsWholeCharacters(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"a longer line", 6, "a lon…"},
		{"héllo wörld", 5, "héll…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"x", 0, "…"},
	}
	for _, tc := range tests {
		got := bundle.Clip(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := bundle.Line("fix\n\tthe   rounding\r\nbug", 80); got != "fix the rounding bug" {
		t.Errorf("Line: %q", got)
	}
}
