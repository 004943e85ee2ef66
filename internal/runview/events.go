package runview

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
)

// Field is one thing a timeline row says of its event: a key and its value
// in words, Bad when it says that something failed or was refused.
type Field struct {
	Key, Value string
	Bad        bool
	Block      bool // a command's output: lines shown as lines
}

// maxOutputText is how much of one tool.output event a timeline row shows.
const maxOutputText = 8000

// maxFieldText is how much of a text a timeline row shows; the transcript
// has it whole.
const maxFieldText = 160

// Describe is what a timeline row says of an event: the fields of its data
// in the order they were written, a tool call's arguments among them, each
// text on one line and clipped; a duration in words; a false ok, approved
// or passed, or a true broken, marked; a command's output as its lines.
// Data that is not a JSON object is one field of text.
func Describe(ev bundle.Event) []Field {
	if len(ev.Data) == 0 {
		return nil
	}
	var output bundle.ToolOutputEvent
	if ev.Type == bundle.EventToolOutput && json.Unmarshal(ev.Data, &output) == nil {
		return []Field{{Key: "id", Value: output.ID}, {Value: clip.Head(strings.TrimRight(output.Text, "\n"), maxOutputText), Block: true}}
	}
	fields, ok := objectFields(string(ev.Data))
	if !ok {
		return []Field{{Value: oneLine(string(ev.Data))}}
	}
	var out []Field
	for _, f := range fields {
		if f.key == "args" {
			if args, ok := objectFields(string(f.value)); ok {
				for _, a := range args {
					out = append(out, Field{Key: a.key, Value: value(a.value)})
				}
				continue
			}
		}
		fl := Field{Key: f.key, Value: value(f.value)}
		switch f.key {
		case "duration_ms":
			if ms, err := strconv.ParseInt(fl.Value, 10, 64); err == nil {
				fl.Key, fl.Value = "took", (time.Duration(ms) * time.Millisecond).String()
			}
		case "ok", "approved", "passed":
			fl.Bad = fl.Value == "false"
		case "broken":
			fl.Bad = fl.Value == "true"
		}
		out = append(out, fl)
	}
	return out
}

// value is a JSON value in words: a string's text on one line, anything
// else compact.
func value(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return oneLine(s)
	}
	return oneLine(string(raw))
}

// oneLine is a text's first line, clipped, with how many more lines it has.
func oneLine(s string) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(s), "\n")
	first = clip.Head(first, maxFieldText)
	if multi {
		first += " … (" + strconv.Itoa(strings.Count(rest, "\n")+2) + " lines)"
	}
	return first
}

// CallOf says which tool call an event is about, for the page that follows
// a run: the call it starts (tool.call), the call it ends (tool.result),
// or the call whose output so far it carries (tool.output).
func CallOf(ev bundle.Event) (starts, ends, writes string) {
	var d struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(ev.Data, &d) != nil {
		return "", "", ""
	}
	switch ev.Type {
	case bundle.EventToolCall:
		return d.ID, "", ""
	case bundle.EventToolResult:
		return "", d.ID, ""
	case bundle.EventToolOutput:
		return "", "", d.ID
	}
	return "", "", ""
}
