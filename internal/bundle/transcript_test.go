package bundle_test

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func TestParseTranscript(t *testing.T) {
	text := "# Run x\n\nintro\n\n## system\n\nbe careful\n\n## assistant\n\nlooking\n\n**tool call** `read_file` (c1)\n\n    {\"path\": \"a\"}\n\n## tool read_file (c1)\n\n    ## not a heading\n    line 2\n\n## error\n\nboom\n"
	got := bundle.ParseTranscript(text)
	want := []bundle.TranscriptSection{
		{Role: "system", Title: "system", Body: "be careful"},
		{Role: "assistant", Title: "assistant", Body: "looking\n\n**tool call** `read_file` (c1)\n\n    {\"path\": \"a\"}"},
		{Role: "tool", Title: "tool read_file (c1)", Body: "    ## not a heading\n    line 2"},
		{Role: "error", Title: "error", Body: "boom"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sections: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("section %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
