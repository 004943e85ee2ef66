package clip_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/clip"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"head short", clip.Head("abc", 3), "abc"},
		{"head cut", clip.Head("abcdef", 4), "abc…"},
		{"head runes", clip.Head("ééééé", 3), "éé…"},
		{"head one", clip.Head("abc", 1), "…"},
		{"head exactly", clip.Head("exactly", 7), "exactly"},
		{"head accents", clip.Head("héllo wörld", 5), "héll…"},
		{"head wide", clip.Head("日本語のテキスト", 4), "日本語…"},
		{"head none", clip.Head("x", 0), "…"},
		{"bytes short", clip.Bytes("abc", 3), "abc"},
		{"bytes never halves a character", clip.Bytes("aé", 2), "a…"},
		{"bytes cut", clip.Bytes("abcdef", 3), "abc…"},
		{"tail short", clip.Tail("abc", 5), "abc"},
		{"tail cut", clip.Tail("abcdef", 2), "…ef"},
		{"tail never halves a character", clip.Tail("aéb", 2), "…b"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	kept, cut, total := clip.Cut("héllo wörld", 5)
	if kept != "héllo" || cut != 6 || total != 11 {
		t.Errorf("Cut: %q %d %d", kept, cut, total)
	}
	if kept, cut, total := clip.Cut("abc", 5); kept != "abc" || cut != 0 || total != 3 {
		t.Errorf("Cut short: %q %d %d", kept, cut, total)
	}
}

// Whatever the text and the bound, a clip is valid UTF-8 when the text is,
// and within its bound.
func FuzzClip(f *testing.F) {
	f.Add("héllo wörld ✓", 4)
	f.Add(strings.Repeat("日本", 10), 7)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n < 0 || n > 1<<16 {
			return
		}
		for _, c := range []string{clip.Head(s, n), clip.Bytes(s, n), clip.Tail(s, n)} {
			if !utf8.ValidString(c) {
				t.Fatalf("%q cut to %d: %q is not UTF-8", s, n, c)
			}
		}
		if h := clip.Head(s, max(n, 1)); utf8.RuneCountInString(h) > max(n, 1) {
			t.Fatalf("Head(%q, %d) = %q: too long", s, n, h)
		}
		if b := clip.Bytes(s, n); len(b) > n+len(clip.Ellipsis) {
			t.Fatalf("Bytes(%q, %d) = %q: too long", s, n, b)
		}
	})
}
