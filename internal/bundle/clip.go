package bundle

import (
	"strings"
	"unicode/utf8"
)

// Clip is s cut to at most n characters (runes, so a character is never
// split), "…" marking a cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:max(n-1, 0)]) + "…"
}

// Line is s on one line (each run of white space one space), clipped to n
// characters: a title, a line of progress.
func Line(s string, n int) string { return Clip(strings.Join(strings.Fields(s), " "), n) }
