package intent

import (
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/tools"
)

// ReadCommand is the command that reads a file of the workspace for an
// agent that has no tool of its own for it.
func ReadCommand(path string) string { return "cat -- " + tools.ShellQuote(path) }

// IsReadCommand says whether a command only reads a file inside the
// workspace, as ReadCommand writes one: cat of one quoted relative path
// with no "..", and nothing else.
func IsReadCommand(cmd string) bool {
	p, ok := strings.CutPrefix(cmd, "cat -- '")
	if !ok {
		return false
	}
	p, ok = strings.CutSuffix(p, "'")
	return ok && p != "" && !strings.ContainsAny(p, "'\x00") && filepath.IsLocal(p)
}

// Codex has no tool of its own to write or edit a file when it does not
// know the model; it runs apply_patch instead, the patch as a quoted
// here-document, and applies it itself without a shell:
//
//	apply_patch <<'EOF'
//	*** Begin Patch
//	*** Update File: greeting.txt
//	@@
//	 hello
//	-world
//	+there
//	*** End Patch
//	EOF

// PatchCommand is the apply_patch command that does in (Write or Edit).
// An edit is made a hunk of the lines of old (the file's current content,
// "" when it cannot be read) that hold the text replaced, with up to three
// lines of context each side; a text the file does not hold is patched as
// given, and Codex tells the model it is not there, as proctor's own
// edit_file does.
func PatchCommand(in Intent, old string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	switch in.Kind {
	case Write:
		b.WriteString("*** Add File: " + in.Path + "\n")
		prefixed(&b, '+', lines(in.Content))
	case Edit:
		b.WriteString("*** Update File: " + in.Path + "\n@@\n")
		i := strings.Index(old, in.Old)
		if in.Old == "" || i < 0 {
			prefixed(&b, '-', lines(in.Old))
			prefixed(&b, '+', lines(in.New))
			break
		}
		start := strings.LastIndexByte(old[:i], '\n') + 1
		end := len(old)
		if j := strings.IndexByte(old[i+len(in.Old):], '\n'); j >= 0 {
			end = i + len(in.Old) + j + 1
		}
		before := lines(old[:start])
		after := lines(old[end:])
		prefixed(&b, ' ', before[max(0, len(before)-3):])
		prefixed(&b, '-', lines(old[start:end]))
		prefixed(&b, '+', lines(old[start:i]+in.New+old[i+len(in.Old):end]))
		prefixed(&b, ' ', after[:min(3, len(after))])
	}
	b.WriteString("*** End Patch\n")
	patch := b.String()
	delim := "EOF"
	for n := 1; strings.Contains("\n"+patch, "\n"+delim+"\n"); n++ {
		delim = "EOF_" + strings.Repeat("X", n)
	}
	return "apply_patch <<'" + delim + "'\n" + patch + delim + "\n"
}

// IsPatchCommand says whether a command is only a patch for Codex to apply,
// as PatchCommand writes one: apply_patch, a quoted here-document holding
// one patch, and nothing else — no other command, no expansion, no second
// here-document.
func IsPatchCommand(cmd string) bool {
	first, rest, ok := strings.Cut(cmd, "\n")
	if !ok {
		return false
	}
	delim, ok := strings.CutPrefix(first, "apply_patch <<'")
	if !ok {
		return false
	}
	delim, ok = strings.CutSuffix(delim, "'")
	if !ok || delim == "" || strings.ContainsFunc(delim, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_') }) {
		return false
	}
	ls := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	n := len(ls)
	if n < 3 || ls[0] != "*** Begin Patch" || ls[n-2] != "*** End Patch" || ls[n-1] != delim {
		return false
	}
	for _, l := range ls[:n-1] {
		if l == delim {
			return false
		}
	}
	return true
}

// prefixed writes each line with the mark before it.
func prefixed(b *strings.Builder, mark byte, ls []string) {
	for _, l := range ls {
		b.WriteByte(mark)
		b.WriteString(l + "\n")
	}
}

// lines are text's lines, without their newlines ("" has none; a last
// line without a newline is a line).
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}
