package web

import (
	"strings"

	"github.com/proctor-dev/proctor/internal/clip"
)

func isLong(s string) bool { return len(s) > longText || strings.Count(s, "\n") > 40 }

// shown is what a page shows of a text from a bundle: terminal colour codes
// removed, invalid UTF-8 replaced, cut at maxShown characters.
func shown(s string) string {
	return clip.Bytes(strings.ToValidUTF8(ansiEscape.ReplaceAllString(s, ""), "\uFFFD"), maxShown)
}

func isCut(s string) bool { return len(s) > maxShown }

// inlinePart is a piece of a transcript message: plain text, **strong** or
// `code` (markdown's two inline marks that transcript.md uses).
type inlinePart struct {
	Text string
	Kind string // "", "strong" or "code"
}

// inlineParts splits text at its **strong** and `code` spans (each closed on
// its own line; an unclosed mark is text), so the page shows them as such
// rather than as raw markdown. Nothing else is interpreted, and every part
// is escaped by the template.
func inlineParts(text string) []inlinePart {
	var out []inlinePart
	plain := 0
	for i := 0; i < len(text); {
		mark, kind := "", ""
		switch {
		case text[i] == '`':
			mark, kind = "`", "code"
		case strings.HasPrefix(text[i:], "**"):
			mark, kind = "**", "strong"
		default:
			i++
			continue
		}
		rest := text[i+len(mark):]
		end := strings.Index(rest, mark)
		if nl := strings.IndexByte(rest, '\n'); end <= 0 || (nl >= 0 && nl < end) {
			i += len(mark)
			continue
		}
		if plain < i {
			out = append(out, inlinePart{Text: text[plain:i]})
		}
		out = append(out, inlinePart{Text: rest[:end], Kind: kind})
		i += len(mark) + end + len(mark)
		plain = i
	}
	if plain < len(text) {
		out = append(out, inlinePart{Text: text[plain:]})
	}
	return out
}

// findParts splits text into plain parts and the parts that match find
// (case-insensitive), so the template can mark the matches and escape all.
func findParts(text, find string) []snippetPart {
	if find == "" {
		return []snippetPart{{Text: text}}
	}
	hay, needle := strings.ToLower(text), strings.ToLower(find)
	if len(hay) != len(text) { // case folding changed lengths: match as typed
		hay, needle = text, find
	}
	var out []snippetPart
	for {
		i := strings.Index(hay, needle)
		if i < 0 || needle == "" {
			break
		}
		if i > 0 {
			out = append(out, snippetPart{Text: text[:i]})
		}
		out = append(out, snippetPart{Text: text[i : i+len(needle)], Match: true})
		text, hay = text[i+len(needle):], hay[i+len(needle):]
	}
	if text != "" {
		out = append(out, snippetPart{Text: text})
	}
	return out
}

// splitSnippet splits an FTS snippet at its «match» markers into plain and
// highlighted parts, so the template can escape each part.
func splitSnippet(s string) []snippetPart {
	var out []snippetPart
	for s != "" {
		i := strings.Index(s, "«")
		if i < 0 {
			out = append(out, snippetPart{Text: s})
			break
		}
		if i > 0 {
			out = append(out, snippetPart{Text: s[:i]})
		}
		s = s[i+len("«"):]
		j := strings.Index(s, "»")
		if j < 0 {
			out = append(out, snippetPart{Text: s, Match: true})
			break
		}
		out = append(out, snippetPart{Text: s[:j], Match: true})
		s = s[j+len("»"):]
	}
	return out
}

type snippetPart struct {
	Text  string
	Match bool
}
