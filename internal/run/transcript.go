package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/model"
)

// maxTranscriptText is where a message is cut in transcript.md; the whole
// text stays in exchanges.jsonl.
const maxTranscriptText = 4000

// Transcript renders a conversation as transcript.md (see docs/formats.md):
// a "## role" section per message, tool arguments and output indented by
// four spaces, a tool section's heading flagged with its approval decision
// or question (notes, by tool call id), texts over 4,000 characters cut
// with a marker. It holds no times or ids of the run, so a replay of the
// same conversation renders the same bytes.
func Transcript(msgs []model.Message, notes map[string]string, errText string) string {
	var b strings.Builder
	b.WriteString("# Transcript\n")
	for _, m := range msgs {
		switch m.Role {
		case model.RoleTool:
			head := "\n## tool " + m.Name + " (" + m.ToolCallID + ")"
			if n := notes[m.ToolCallID]; n != "" {
				head += " — " + n
			}
			b.WriteString(head + "\n\n")
			b.WriteString(indent(cutText(m.Content)))
		default:
			b.WriteString("\n## " + m.Role + "\n")
			if strings.TrimSpace(m.Content) != "" {
				b.WriteString("\n" + strings.TrimRight(cutText(m.Content), "\n") + "\n")
			}
			for _, c := range m.ToolCalls {
				b.WriteString("\n**tool call** `" + c.Name + "` (" + c.ID + ")\n\n")
				b.WriteString(indent(prettyArgs(c.Arguments)))
			}
		}
	}
	if errText != "" {
		b.WriteString("\n## error\n\n" + strings.TrimRight(errText, "\n") + "\n")
	}
	return b.String()
}

func cutText(s string) string {
	kept, cut, total := clip.Cut(s, maxTranscriptText)
	if cut == 0 {
		return s
	}
	return kept + fmt.Sprintf("\n[… cut: %d of %d characters not shown; the whole text is in exchanges.jsonl …]", cut, total)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (empty)\n"
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// prettyArgs shows JSON arguments compactly, on one line, their keys in
// the order the model wrote them; invalid JSON is shown as it came.
func prettyArgs(args string) string {
	var out bytes.Buffer
	if json.Compact(&out, []byte(args)) != nil {
		return args
	}
	return out.String()
}
