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

// Each language's line is split where a reader expects: a comment marker
// inside a string is string, an escaped quote does not end it, a block
// comment ends where it closes, a digit inside a name is the name.
func TestLanguages(t *testing.T) {
	for _, tc := range []struct {
		file, line string
		want       []string // class:text of the coloured tokens, in order
	}{
		{"a.py", `def f(x): return "a # b"  # done`, []string{"hl-k:def", "hl-f:f", "hl-o::", "hl-k:return", `hl-s:"a # b"`, "hl-c:# done"}},
		{"a.js", `const s = 'it\'s'; /* c */ x2 = 0x1F`, []string{"hl-k:const", "hl-o:=", `hl-s:'it\'s'`, "hl-c:/* c */", "hl-o:=", "hl-m:0x1F"}},
		{"q.sql", `SELECT id FROM runs -- all`, []string{"hl-k:SELECT", "hl-k:FROM", "hl-c:-- all"}},
		{"run.sh", `if [ -f "$x" ]; then echo ok; fi`, []string{"hl-k:if", "hl-o:-", `hl-s:"$x"`, "hl-k:then", "hl-f:echo", "hl-k:fi"}},
		{"Makefile", `test: ## run`, []string{"hl-o::", "hl-c:## run"}},
		{"a.go", "s := `raw \\ text` + len(x)", []string{"hl-o::=", "hl-s:`raw \\ text`", "hl-o:+", "hl-f:len"}},
		{"c.yml", `on: [push] # why`, []string{"hl-k:on", "hl-o::", "hl-c:# why"}},
	} {
		toks := highlight.For(tc.file).Lines([]string{tc.line})[0]
		var got []string
		text := ""
		for _, tk := range toks {
			text += tk.Text
			if tk.Class != "" {
				got = append(got, tk.Class+":"+strings.TrimSpace(tk.Text))
			}
		}
		if text != tc.line {
			t.Errorf("%s: the tokens read %q, not the line", tc.file, text)
		}
		if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("%s: %q\n got  %s\n want %s", tc.file, tc.line, strings.Join(got, " | "), strings.Join(tc.want, " | "))
		}
	}
}

// Whatever the line, its tokens are the line.
func FuzzLines(f *testing.F) {
	f.Add("a.go", "x := \"a\\\"b\" // c")
	f.Add("a.sql", "select 'it''s' /* open")
	f.Add("a.py", "\xff\xfe # é")
	f.Fuzz(func(t *testing.T, name, line string) {
		text := ""
		for _, tk := range highlight.For(name).Lines([]string{line})[0] {
			text += tk.Text
		}
		if text != line {
			t.Fatalf("%s: %q tokenised as %q", name, line, text)
		}
	})
}
