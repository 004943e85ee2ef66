// Package highlight owns syntax highlighting of source lines for the diff
// view: it picks a language by file name and splits each line into tokens
// with short style classes (keywords, comments, strings, numbers,
// functions, operators). It produces text and class names only — the page
// escapes the text like any other.
//
// It is proctor's own small lexer, not a general one: every start of the
// proctor binary (each sandboxed command's init among them) pays for the
// package initialisation of what it links, and a library that registers
// hundreds of languages at start costs each of them milliseconds.
package highlight

import (
	"path/filepath"
	"strings"
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

// The style classes.
const (
	keyword  = "hl-k"
	comment  = "hl-c"
	str      = "hl-s"
	number   = "hl-m"
	function = "hl-f"
	operator = "hl-o"
)

// Highlighter highlights the lines of one file.
type Highlighter struct {
	lang *language
}

// For returns a highlighter for a file name, or nil when no language is
// known for it.
func For(filename string) *Highlighter {
	base := strings.ToLower(filepath.Base(filename))
	lang := byName[base]
	if lang == nil {
		lang = byExt[strings.TrimPrefix(filepath.Ext(base), ".")]
	}
	if lang == nil {
		return nil
	}
	return &Highlighter{lang: lang}
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
		out[i] = h.lang.line(line)
	}
	return out
}

// line splits one line into tokens: a comment to its end (or a block
// comment's close), a quoted string to its closing quote, a number, a
// word (a keyword, or a function when a "(" follows it), a run of
// operator characters; plain text between them.
func (l *language) line(s string) []Token {
	var toks []Token
	add := func(class, text string) {
		if text == "" {
			return
		}
		if n := len(toks); n > 0 && toks[n-1].Class == class {
			toks[n-1].Text += text
			return
		}
		toks = append(toks, Token{Class: class, Text: text})
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		if end, ok := l.comment(rest); ok {
			add(comment, rest[:end])
			i += end
			continue
		}
		c := s[i]
		switch {
		case strings.IndexByte(l.quotes, c) >= 0:
			end := quoted(rest)
			add(str, rest[:end])
			i += end
		case isDigit(c) && (i == 0 || !isWord(s[i-1])):
			end := 1
			for end < len(rest) && (isWord(rest[end]) || rest[end] == '.' && end+1 < len(rest) && isDigit(rest[end+1])) {
				end++
			}
			add(number, rest[:end])
			i += end
		case isWord(c):
			end := 1
			for end < len(rest) && isWord(rest[end]) {
				end++
			}
			word := rest[:end]
			class := ""
			switch {
			case l.keywords[l.fold(word)]:
				class = keyword
			case strings.HasPrefix(strings.TrimLeft(rest[end:], " "), "(") || l.builtins[word]:
				class = function
			}
			add(class, word)
			i += end
		case strings.IndexByte(operators, c) >= 0:
			end := 1
			for end < len(rest) && strings.IndexByte(operators, rest[end]) >= 0 {
				if _, ok := l.comment(rest[end:]); ok {
					break
				}
				end++
			}
			add(operator, rest[:end])
			i += end
		default:
			add("", rest[:1])
			i++
		}
	}
	if len(toks) == 0 {
		return []Token{{Text: s}}
	}
	return toks
}

// comment reports whether s starts with a comment, and where it ends.
func (l *language) comment(s string) (int, bool) {
	for _, m := range l.lineComments {
		if strings.HasPrefix(s, m) {
			return len(s), true
		}
	}
	if l.blockOpen != "" && strings.HasPrefix(s, l.blockOpen) {
		if end := strings.Index(s[len(l.blockOpen):], l.blockClose); end >= 0 {
			return len(l.blockOpen) + end + len(l.blockClose), true
		}
		return len(s), true
	}
	return 0, false
}

// quoted is where the string s starts with ends: after its closing quote
// (a backslash escapes), or at the line's end.
func quoted(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case q:
			return i + 1
		}
	}
	return len(s)
}

const operators = "+-*/%=<>!&|^~?:"

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWord(c byte) bool {
	return c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
