package highlight_test

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/highlight"
)

func TestGoLine(t *testing.T) {
	toks := highlight.For("money.go").Lines([]string{`	return int64(math.Round(euros * 100)) // cents`})[0]
	var classes []string
	text := ""
	for _, tk := range toks {
		text += tk.Text
		if tk.Class != "" {
			classes = append(classes, tk.Class+":"+strings.TrimSpace(tk.Text))
		}
	}
	got := strings.Join(classes, " ")
	if text != `	return int64(math.Round(euros * 100)) // cents` {
		t.Fatalf("text changed: %q", text)
	}
	for _, want := range []string{"hl-k:return", "hl-m:100", "hl-c:// cents"} {
		if !strings.Contains(got, want) {
			t.Errorf("classes %q lack %q", got, want)
		}
	}
}

func TestUnknownAndHugeStayPlain(t *testing.T) {
	if h := highlight.For("notes.unknown-ext"); h != nil {
		t.Fatal("a lexer for an unknown extension")
	}
	var h *highlight.Highlighter
	if toks := h.Lines([]string{"x"}); len(toks[0]) != 1 || toks[0][0].Class != "" {
		t.Fatal("nil highlighter coloured a line")
	}
	long := strings.Repeat("a", 2000)
	if toks := highlight.For("a.go").Lines([]string{long}); len(toks[0]) != 1 || toks[0][0].Text != long {
		t.Fatal("a huge line was tokenised")
	}
}
