package agent

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func TestOutputStreamSendsWholeLinesBoundedAndValid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string // all the events' texts
	}{
		{"lines", []string{"one\ntw", "o\nthree"}, "one\ntwo\nthree"},
		{"nothing", nil, ""},
		{"bounded", []string{strings.Repeat("x", maxStreamed-1) + "\n", "more\n"}, strings.Repeat("x", maxStreamed-1) + "\n"},
		{"a long line cut between characters", []string{strings.Repeat("é", streamLine)}, strings.Repeat("é", streamLine)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var texts []string
			o := newOutputStream("c1", func(ev bundle.EventData) {
				mu.Lock()
				defer mu.Unlock()
				e := ev.(bundle.ToolOutputEvent)
				if e.ID != "c1" {
					t.Errorf("id %q", e.ID)
				}
				texts = append(texts, e.Text)
			})
			for _, w := range tc.writes {
				o.Write([]byte(w))
				o.flush(false)
			}
			o.Close()
			if got := strings.Join(texts, ""); got != tc.want {
				t.Errorf("sent %d bytes, want %d", len(got), len(tc.want))
			}
			for i, s := range texts {
				if !utf8.ValidString(s) {
					t.Errorf("event %d is not valid UTF-8", i)
				}
				if i < len(texts)-1 && tc.name == "lines" && !strings.HasSuffix(s, "\n") {
					t.Errorf("event %d %q is not whole lines", i, s)
				}
			}
		})
	}
}
