package bundle

import "strings"

// TranscriptSection is one "## " section of transcript.md: a message by a
// role (system, user, assistant, tool, error) and its text.
type TranscriptSection struct {
	Role  string // first word of the heading: system, user, assistant, tool, error, ...
	Title string // the heading without "## "
	Body  string
}

// ParseTranscript splits transcript.md into its sections. Text before the
// first "## " heading (the "# Run" title) is dropped. Tool arguments and
// output are indented by four spaces in the file, so a "## " inside them
// never starts a section.
func ParseTranscript(text string) []TranscriptSection {
	var out []TranscriptSection
	var cur *TranscriptSection
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Body = strings.Trim(body.String(), "\n")
			out = append(out, *cur)
		}
		body.Reset()
	}
	for line := range strings.Lines(text) {
		trimmed := strings.TrimRight(line, "\r\n")
		if title, ok := strings.CutPrefix(trimmed, "## "); ok {
			flush()
			title = strings.TrimSpace(title)
			role, _, _ := strings.Cut(title, " ")
			cur = &TranscriptSection{Role: strings.ToLower(role), Title: title}
			continue
		}
		if cur != nil {
			body.WriteString(trimmed)
			body.WriteByte('\n')
		}
	}
	flush()
	return out
}
