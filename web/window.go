package web

import (
	"net/url"
	"strconv"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
)

// A long run's page opens on its newest work: the last transcriptPage
// messages of its transcript and the last timelinePage events of its
// timeline. Earlier ones load a part at a time at a press of the loader
// above them (HTMX), or all at once without JavaScript (?all=1). They do
// not load by themselves when the loader comes into view: a loader at the
// top of a page that is not scrolled would load one part after another
// until the whole run was there. A search, an exported page and a shared page show
// everything: nothing loads more where they are read.
const (
	transcriptPage = 100
	timelinePage   = 300
)

// TranscriptPart is the part of a transcript a page shows: Msgs, and how
// many messages shown on their own (not a result shown under its call)
// come before them — the loader's count, and where it loads up to.
type TranscriptPart struct {
	Msgs    []runview.Message
	Earlier int
}

// partOfTranscript is the part ending before the upto-th message shown on
// its own (-1: the end), at most n of them.
func partOfTranscript(msgs []runview.Message, upto, n int) TranscriptPart {
	var own []int // the messages shown on their own
	for i, m := range msgs {
		if !m.Answered {
			own = append(own, i)
		}
	}
	if upto < 0 || upto > len(own) {
		upto = len(own)
	}
	k := max(0, upto-n)
	from, to := 0, len(msgs)
	if k > 0 {
		from = own[k]
	}
	if upto < len(own) {
		to = own[upto]
	}
	return TranscriptPart{Msgs: msgs[from:to], Earlier: k}
}

// TranscriptShown is the part of the transcript the page opens with.
func (p RunPage) TranscriptShown() TranscriptPart {
	if p.All || p.Detached || p.Find != "" {
		return TranscriptPart{Msgs: p.View.Transcript}
	}
	return partOfTranscript(p.View.Transcript, -1, transcriptPage)
}

// TranscriptCutNote says, for a transcript too large to read whole, what
// the page leaves out; "" when it shows every message.
func (p RunPage) TranscriptCutNote() string {
	if p.View.TranscriptCut <= 0 {
		return ""
	}
	return "The transcript is too large to show whole: this page has its newest messages, and leaves out the " + formatBytes(p.View.TranscriptCut) + " before them. The whole of it is in "
}

// TranscriptBefore is the part a loader asks for: the messages shown on
// their own before the upto-th.
func (p RunPage) TranscriptBefore(upto int) TranscriptPart {
	return partOfTranscript(p.View.Transcript, upto, transcriptPage)
}

// EventsPart is the part of a timeline a page shows, and how many events
// come before it.
type EventsPart struct {
	Events  []bundle.Event
	Earlier int
}

// TimelineShown is the part of the timeline the page opens with (a live
// run's stream goes on after it).
func (p RunPage) TimelineShown() EventsPart {
	if p.All || p.Detached {
		return EventsPart{Events: p.Events}
	}
	return p.TimelineBefore(len(p.Events))
}

// TimelineBefore is the part a loader asks for: the events before the
// upto-th.
func (p RunPage) TimelineBefore(upto int) EventsPart {
	upto = min(max(upto, 0), len(p.Events))
	k := max(0, upto-timelinePage)
	return EventsPart{Events: p.Events[k:upto], Earlier: k}
}

func earlierURL(id, what string, upto int) string {
	return runURL(id) + "/" + what + "?upto=" + url.QueryEscape(strconv.Itoa(upto))
}
