package web

import (
	"context"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
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

// A transcript too large to read whole says so above its newest messages,
// with the size it leaves out and a link to the whole file.
func TestATranscriptCutIsSaid(t *testing.T) {
	for _, cut := range []int64{0, 3 << 20} {
		run := &store.RunDetail{RunSummary: store.RunSummary{RunID: "20260101-000000-large"}}
		p := RunPage{View: &runview.View{Run: run, TranscriptCut: cut, Transcript: []runview.Message{{TranscriptSection: bundle.TranscriptSection{Role: "user", Body: "newest"}}}}}
		var b strings.Builder
		if err := TranscriptView(p).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		said := strings.Contains(html, `id="transcript-cut"`)
		if said != (cut > 0) || (said && (!strings.Contains(html, "leaves out the 3 MiB") || !strings.Contains(html, `/runs/20260101-000000-large/files/transcript.md`))) {
			t.Errorf("cut %d: the notice said %v:\n%s", cut, said, html)
		}
	}
}
