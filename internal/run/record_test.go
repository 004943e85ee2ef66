package run

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// An event line written by hand is the line json.Marshal writes (for data
// that json.Marshal encoded, as the recorder's is).
func TestAppendEventMatchesMarshal(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"stage": "running", "x": "<a&b>", "n": 1.5})
	for _, ev := range []bundle.Event{
		{Seq: 1, Time: time.Date(2026, 12, 2, 15, 10, 0, 123456789, time.UTC), Type: "stage.started", Data: data},
		{Seq: 42, Time: time.Date(2026, 12, 2, 15, 10, 0, 0, time.UTC), Type: `odd "type"`},
	} {
		want, _ := json.Marshal(ev)
		if got := appendEvent(nil, ev); string(got) != string(want)+"\n" {
			t.Errorf("appendEvent = %s, want %s", got, want)
		}
	}
}
