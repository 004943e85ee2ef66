package run

import (
	"encoding/json"
	"strings"

	"github.com/proctor-dev/proctor/internal/model"
)

// Transcript renders a conversation as transcript.md (see docs/formats.md):
// a "## role" section per message, tool arguments and output indented by
// four spaces. It holds no times or ids of the run, so a replay of the same
// conversation renders the same bytes.
func Transcript(msgs []model.Message, errText string) string {
	var b strings.Builder
	b.WriteString("# Transcript\n")
	for _, m := range msgs {
		switch m.Role {
		case model.RoleTool:
			b.WriteString("\n## tool " + m.Name + " (" + m.ToolCallID + ")\n\n")
			b.WriteString(indent(m.Content))
		default:
			b.WriteString("\n## " + m.Role + "\n")
			if strings.TrimSpace(m.Content) != "" {
				b.WriteString("\n" + strings.TrimRight(m.Content, "\n") + "\n")
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

// prettyArgs shows JSON arguments compactly but readably; invalid JSON is
// shown as it came.
func prettyArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(out)
}
