package web

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/runview"
)

// A part of a transcript counts the messages shown on their own, and takes
// a tool's result, shown under its call, with the call.
func TestPartOfTranscript(t *testing.T) {
	// call a, its result, call b, its result, a message, call c, its result
	msgs := []runview.Message{{}, {Answered: true}, {}, {Answered: true}, {}, {}, {Answered: true}}
	for _, tc := range []struct {
		upto, n       int
		from, to, was int // the part is msgs[from:to]; was: Earlier
	}{
		{-1, 10, 0, 7, 0},
		{-1, 2, 4, 7, 2},
		{-1, 1, 5, 7, 3},
		{2, 1, 2, 4, 1},
		{1, 5, 0, 2, 0},
		{0, 5, 0, 0, 0},
		{99, 3, 2, 7, 1},
	} {
		p := partOfTranscript(msgs, tc.upto, tc.n)
		if p.Earlier != tc.was || len(p.Msgs) != tc.to-tc.from || (len(p.Msgs) > 0 && &p.Msgs[0] != &msgs[tc.from]) {
			t.Errorf("upto %d n %d: %d messages, %d earlier; want msgs[%d:%d], %d earlier", tc.upto, tc.n, len(p.Msgs), p.Earlier, tc.from, tc.to, tc.was)
		}
	}
}
