// Package highlight owns syntax highlighting of source lines for the diff
// view: it picks a lexer by file name (alecthomas/chroma) and splits each
// line into tokens with short style classes. It produces text and class
// names only — the page escapes the text like any other.
package highlight

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// Token is a piece of a line and its style class ("" for plain text).
type Token struct {
	Class string
	Text  string
}

// Limits beyond which lines are left plain: highlighting is for reading,
// and a huge file or line is not read anyway.
const (
	maxLineBytes = 1000
	maxLines     = 5000
)

// Highlighter highlights the lines of one file.
type Highlighter struct {
	lexer chroma.Lexer
}

// For returns a highlighter for a file name, or nil when no lexer knows it.
func For(filename string) *Highlighter {
	l := lexers.Match(filename)
	if l == nil {
		return nil
	}
	return &Highlighter{lexer: chroma.Coalesce(l)}
}

// Lines highlights lines one by one (a line is tokenised on its own, so a
// construct spanning lines may be coloured as plain text). A nil
// highlighter, or too many lines, leaves every line plain.
func (h *Highlighter) Lines(lines []string) [][]Token {
	out := make([][]Token, len(lines))
	for i, line := range lines {
		if h == nil || len(lines) > maxLines || len(line) > maxLineBytes {
			out[i] = []Token{{Text: line}}
			continue
		}
		out[i] = h.line(line)
	}
	return out
}

func (h *Highlighter) line(line string) []Token {
	it, err := h.lexer.Tokenise(nil, line)
	if err != nil {
		return []Token{{Text: line}}
	}
	var toks []Token
	for t := it(); t != chroma.EOF; t = it() {
		text := strings.TrimSuffix(t.Value, "\n")
		if text == "" {
			continue
		}
		toks = append(toks, Token{Class: class(t.Type), Text: text})
	}
	if len(toks) == 0 {
		return []Token{{Text: line}}
	}
	return toks
}

// class maps a token type to one of a few style classes.
func class(t chroma.TokenType) string {
	switch {
	case t.InCategory(chroma.Keyword):
		return "hl-k"
	case t.InCategory(chroma.Comment):
		return "hl-c"
	case t.InSubCategory(chroma.LiteralString):
		return "hl-s"
	case t.InSubCategory(chroma.LiteralNumber):
		return "hl-m"
	case t == chroma.NameFunction || t == chroma.NameBuiltin:
		return "hl-f"
	case t.InCategory(chroma.Operator):
		return "hl-o"
	}
	return ""
}
