// Package clip cuts text to a bound, the one way proctor does: by
// characters (runes) or by bytes, never through the middle of a character.
package clip

import "unicode/utf8"

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// Head is s cut to at most n characters, Ellipsis (one of them) marking a
// cut.
func Head(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	kept, _, _ := Cut(s, max(n-1, 0))
	return kept + Ellipsis
}

// Cut is the first n characters of s, how many characters were cut and
// how many s has (nothing is cut for n < 0).
func Cut(s string, n int) (kept string, cut, total int) {
	if n < 0 {
		return s, 0, utf8.RuneCountInString(s)
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i == len(s) {
		return s, 0, count
	}
	total = count + utf8.RuneCountInString(s[i:])
	return s[:i], total - count, total
}

// Bytes is s cut to at most n bytes at a character's start (for a bound
// on bytes: a file, a message), Ellipsis added when it was cut.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:start(s, n)] + Ellipsis
}

// Tail is the last n bytes of s from a character's start, Ellipsis before
// them when s was cut (the end of a log: what says how it stopped).
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	from := len(s) - n
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return Ellipsis + s[from:]
}

// start is the start of the character at byte n of s, or before it.
func start(s string, n int) int {
	n = max(min(n, len(s)), 0)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
