package runview

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/patch"
)

// Message is one message of the transcript, laid out for reading: the
// section of transcript.md it is, and for an assistant's message its text,
// the tool calls it made and the model call that wrote it; for a tool's,
// the result and what became of the call.
type Message struct {
	bundle.TranscriptSection
	Text   string     // an assistant's words without its tool calls; the body of the others
	Model  *ModelCall // the model call that wrote an assistant's message, when the events say
	Calls  []ToolCall // an assistant's tool calls
	Result *Result    // a tool's message
	// Answered says a tool message is shown under the call it answers (an
	// assistant message's ToolCall.Answer), not in its own place: a turn
	// of many calls reads call, result, call, result.
	Answered bool
}

// ModelCall is one call to the model, as its model.response event says.
type ModelCall struct {
	Turn             int
	Took             time.Duration // 0 when not recorded
	PromptTokens     int64
	CompletionTokens int64
	CacheReadTokens  int64
	Finish           string
}

// ToolCall is a tool call of an assistant's message: the agent's own name
// for the tool, its arguments laid out, and the change it asks for when it
// writes or edits a file.
type ToolCall struct {
	ID, Name string
	Args     []Arg
	Change   *Change
	Answer   *Message // the tool message with its result, shown under the call
	Running  *Running // a call that started and has no result yet
}

// Running is a tool call that has not answered yet: when it started, and
// what its command wrote so far (its tool.output events up to Seq; the
// last maxRunningOutput bytes).
type Running struct {
	Since  time.Time
	Output string
	Seq    int64
}

// maxRunningOutput is how much of a running command's output a page shows.
const maxRunningOutput = 16000

// Arg is one argument of a tool call: a one-line value, or a block (a
// multi-line text, or a JSON object or array indented); Patch when the
// text is a patch (Codex's apply_patch, a unified diff), read as a diff.
type Arg struct {
	Key, Value string
	Block      bool
	Patch      bool
}

// isPatch reports whether a text is a patch: Codex's "*** Begin Patch"
// format, or a unified diff.
func isPatch(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "*** Begin Patch") ||
		(strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "diff --git ")) && strings.Contains(s, "\n@@")
}

// Change is what a write or an edit does to a file, as lines of a diff.
type Change struct {
	Path  string
	Write bool // the whole file is written
	Diff  bool // the lines are the run's diff of the file (a write the only change to it): what the write made
	Lines []ChangeLine
}

// ChangeLine is a line of a Change: Op is '+', '-' or ' ', or '@' for a
// hunk's header in a Diff.
type ChangeLine struct {
	Op   byte
	Text string
}

// Result is a tool's answer to a call, and what became of the call.
type Result struct {
	ID, Name string
	Note     string        // the heading's note: how the call was approved or denied
	Failed   bool          // the tool said it failed (tool.result ok false), or its command exited other than 0
	Exit     *int          // the exit status of the command it ran, when known
	Refused  bool          // a person or a rule denied the call
	Took     time.Duration // from the call to its result, when both were recorded
	Output   string
}

// ExitNote says how a command that failed exited ("exit 1"), "" when it
// exited 0 or is not known.
func (r *Result) ExitNote() string {
	if r.Exit == nil || *r.Exit == 0 {
		return ""
	}
	return "exit " + strconv.Itoa(*r.Exit)
}

// Lines is how many lines the output has.
func (r *Result) Lines() int {
	if r.Output == "" {
		return 0
	}
	return strings.Count(r.Output, "\n") + 1
}

var (
	callLine  = regexp.MustCompile("^\\*\\*tool call\\*\\* `(.*)` \\((.*)\\)$")
	toolTitle = regexp.MustCompile(`^tool +(?:(\S+) )?\(([^)]*)\)(?: — (.*))?$`) // a session's earlier turns may lack the name
)

// Layout lays out a transcript's sections with what the run's events say
// of them: each assistant message's model call (its tokens and time), each
// tool call's result (failed, refused, how long it took). Sections that do
// not have the documented shape are shown as their text.
func Layout(sections []bundle.TranscriptSection, events []bundle.Event) []Message {
	ev := readEvents(events)
	out := make([]Message, 0, len(sections))
	for _, s := range sections {
		m := Message{TranscriptSection: s, Text: s.Body}
		switch s.Role {
		case "assistant":
			m.Text, m.Calls = splitCalls(s.Body)
		case "tool":
			if g := toolTitle.FindStringSubmatch(s.Title); g != nil {
				r := &Result{Name: g[1], ID: g[2], Note: g[3], Output: dedent(s.Body)}
				r.Failed, r.Exit = ev.failed[r.ID], ev.exits[r.ID]
				r.Refused = ev.refused[r.ID] || strings.HasPrefix(r.Note, "denied")
				if call, ok := ev.called[r.ID]; ok {
					if end, ok := ev.ended[r.ID]; ok && end.After(call) {
						r.Took = end.Sub(call)
					}
				}
				m.Result = r
			}
		}
		out = append(out, m)
	}
	nameResults(out)
	start := runStart(out, ev.called)
	matchModelCalls(out[start:], ev.responses)
	answerCalls(out)
	markRunning(out, ev)
	return out
}

// markRunning marks the calls of the last assistant message that started
// and have no result yet (not in the transcript, nor in the events) with
// their output so far; a call of an earlier message was left behind, not
// running.
func markRunning(msgs []Message, ev timeline) {
	last := -1
	for i, m := range msgs {
		if m.Role == "assistant" {
			last = i
		}
	}
	for i := max(last, 0); i < len(msgs); i++ {
		for k := range msgs[i].Calls {
			c := &msgs[i].Calls[k]
			since, called := ev.called[c.ID]
			if _, ended := ev.ended[c.ID]; c.Answer != nil || !called || ended {
				continue
			}
			out := clip.Tail(strings.Join(ev.output[c.ID], "\n"), maxRunningOutput)
			c.Running = &Running{Since: since, Output: out, Seq: ev.lastSeq}
		}
	}
}

// answerCalls puts each tool message under the call it answers: the first
// one after the call's message with the call's id.
func answerCalls(msgs []Message) {
	for i := range msgs {
		for k := range msgs[i].Calls {
			c := &msgs[i].Calls[k]
			for j := i + 1; j < len(msgs); j++ {
				if r := msgs[j].Result; r != nil && r.ID == c.ID && c.ID != "" && !msgs[j].Answered {
					msgs[j].Answered = true
					answer := msgs[j]
					answer.Answered = false
					c.Answer = &answer
					break
				}
			}
		}
	}
}

// runStart is where this run's part of a transcript begins: a session's
// later run carries the conversation of the runs before it, whose model
// calls are not in this run's events. It is the user message before the
// first assistant message whose tool calls this run recorded, else (a run
// that called no tool) the last user message; 0 when there is none.
func runStart(msgs []Message, called map[string]time.Time) int {
	lastUser := -1
	for i, m := range msgs {
		switch {
		case m.Role == "user":
			lastUser = i
		case m.Role == "assistant" && len(m.Calls) > 0:
			if _, ours := called[m.Calls[0].ID]; ours {
				return max(lastUser, 0)
			}
		}
	}
	return max(lastUser, 0)
}

// nameResults names the tool results whose heading does not (an earlier
// turn's, in a session's later run) by the call they answer.
func nameResults(msgs []Message) {
	names := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.Calls {
			names[c.ID] = c.Name
		}
	}
	for _, m := range msgs {
		if r := m.Result; r != nil && r.Name == "" {
			r.Name = names[r.ID]
		}
	}
}

// timeline is what Layout reads from the events.
type timeline struct {
	lastSeq   int64
	output    map[string][]string // a call's tool.output texts, in order
	responses []response
	called    map[string]time.Time
	ended     map[string]time.Time
	failed    map[string]bool
	refused   map[string]bool
	exits     map[string]*int
}

// response is a model.response event and the ids of the tool calls that
// followed it.
type response struct {
	call ModelCall
	ids  []string
	used bool
}

func readEvents(events []bundle.Event) timeline {
	t := timeline{called: map[string]time.Time{}, ended: map[string]time.Time{}, failed: map[string]bool{}, refused: map[string]bool{}, exits: map[string]*int{}, output: map[string][]string{}}
	for _, e := range events {
		t.lastSeq = max(t.lastSeq, e.Seq)
		switch e.Type {
		case bundle.EventToolOutput:
			var d bundle.ToolOutputEvent
			if json.Unmarshal(e.Data, &d) == nil && d.ID != "" {
				t.output[d.ID] = append(t.output[d.ID], strings.TrimRight(d.Text, "\n"))
			}
		case bundle.EventModelResponse:
			var d bundle.ModelResponseEvent
			if json.Unmarshal(e.Data, &d) == nil {
				t.responses = append(t.responses, response{call: ModelCall{Turn: d.Turn, Took: time.Duration(d.DurationMS) * time.Millisecond,
					PromptTokens: d.PromptTokens, CompletionTokens: d.CompletionTokens, CacheReadTokens: d.CacheReadTokens, Finish: d.FinishReason}})
			}
		case bundle.EventToolCall:
			var d bundle.ToolCallEvent
			if json.Unmarshal(e.Data, &d) == nil && d.ID != "" {
				t.called[d.ID] = e.Time
				if n := len(t.responses); n > 0 {
					t.responses[n-1].ids = append(t.responses[n-1].ids, d.ID)
				}
			}
		case bundle.EventToolResult:
			var d bundle.ToolResultEvent
			if json.Unmarshal(e.Data, &d) == nil && d.ID != "" {
				t.ended[d.ID], t.failed[d.ID], t.exits[d.ID] = e.Time, !d.OK || (d.Exit != nil && *d.Exit != 0), d.Exit
			}
		case bundle.EventApprovalDecided:
			var d bundle.ApprovalDecidedEvent
			if json.Unmarshal(e.Data, &d) == nil && d.ID != "" && !d.Approved {
				t.refused[d.ID] = true
			}
		}
	}
	return t
}

// matchModelCalls gives each assistant message the model call that wrote
// it: a message with tool calls the response its first call followed; a
// message without, the last response without tool calls before the next
// matched one (an external agent's side requests, such as a title, come
// before its answer).
func matchModelCalls(msgs []Message, rs []response) {
	byID := map[string]int{}
	for i, r := range rs {
		for _, id := range r.ids {
			byID[id] = i
		}
	}
	from := 0
	for i := range msgs {
		m := &msgs[i]
		if m.Role != "assistant" {
			continue
		}
		if len(m.Calls) > 0 {
			if j, ok := byID[m.Calls[0].ID]; ok && !rs[j].used {
				rs[j].used = true
				m.Model, from = &rs[j].call, j+1
			}
			continue
		}
		to := len(rs)
		for _, later := range msgs[i+1:] {
			if later.Role == "assistant" && len(later.Calls) > 0 {
				if j, ok := byID[later.Calls[0].ID]; ok && j >= from {
					to = j
					break
				}
			}
		}
		for j := to - 1; j >= from; j-- {
			if !rs[j].used && len(rs[j].ids) == 0 {
				rs[j].used = true
				m.Model, from = &rs[j].call, j+1
				break
			}
		}
	}
}

// splitCalls splits an assistant section's body into its words and its
// tool calls (the "**tool call** `name` (id)" lines, each followed by its
// arguments indented by four spaces).
func splitCalls(body string) (string, []ToolCall) {
	lines := strings.Split(body, "\n")
	first := -1
	var calls []ToolCall
	var args []string
	flush := func() {
		if n := len(calls); n > 0 {
			calls[n-1].Args, calls[n-1].Change = layoutArgs(calls[n-1].Name, dedent(strings.Join(args, "\n")))
		}
		args = nil
	}
	for i, l := range lines {
		if g := callLine.FindStringSubmatch(l); g != nil {
			flush()
			if first < 0 {
				first = i
			}
			calls = append(calls, ToolCall{Name: g[1], ID: g[2]})
			continue
		}
		if first >= 0 {
			args = append(args, l)
		}
	}
	flush()
	if first < 0 {
		return body, nil
	}
	return strings.TrimRight(strings.Join(lines[:first], "\n"), "\n"), calls
}

// dedent removes the four spaces transcript.md indents tool text by.
func dedent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "    ")
	}
	out := strings.Join(lines, "\n")
	if out == "(empty)" {
		return ""
	}
	return out
}

// layoutArgs lays out a call's arguments in the order the model wrote
// them, and reads the change a write or an edit asks for. Arguments that
// are not a JSON object are one block of text.
func layoutArgs(tool, raw string) ([]Arg, *Change) {
	fields, ok := objectFields(raw)
	if !ok {
		if strings.TrimSpace(raw) == "" {
			return nil, nil
		}
		return []Arg{{Value: raw, Block: strings.Contains(raw, "\n"), Patch: isPatch(raw)}}, nil
	}
	var args []Arg
	texts := map[string]string{}
	for _, f := range fields {
		var s string
		if json.Unmarshal(f.value, &s) == nil {
			texts[f.key] = s
			args = append(args, Arg{Key: f.key, Value: s, Block: strings.Contains(s, "\n"), Patch: isPatch(s)})
			continue
		}
		var out bytes.Buffer
		if (f.value[0] == '{' || f.value[0] == '[') && json.Indent(&out, f.value, "", "  ") == nil {
			args = append(args, Arg{Key: f.key, Value: out.String(), Block: strings.Contains(out.String(), "\n")})
			continue
		}
		args = append(args, Arg{Key: f.key, Value: string(f.value)})
	}
	change, shown := changeOf(tool, texts)
	if change != nil { // the change shows these texts
		args = slices.DeleteFunc(args, func(a Arg) bool { return slices.Contains(shown, a.Key) })
	}
	return args, change
}

type field struct {
	key   string
	value json.RawMessage
}

// objectFields reads a JSON object's fields in order.
func objectFields(raw string) ([]field, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return out, true
}

// The argument names agents give a file's path, an edit's two texts and a
// write's content (proctor's own tools, Claude Code, Gemini CLI, opencode).
var (
	pathKeys = []string{"path", "file_path", "filePath", "absolute_path"}
	editKeys = [][2]string{{"search", "replace"}, {"old_string", "new_string"}, {"oldString", "newString"}, {"old_str", "new_str"}}
)

// changeOf is the change a call asks for, and the arguments it shows: an
// edit (the replaced text and its replacement, lines they share at either
// end shown once), or a write of a whole file (a tool named for writing or
// creating, with a content).
func changeOf(tool string, texts map[string]string) (*Change, []string) {
	path, pathKey := "", ""
	for _, k := range pathKeys {
		if p, ok := texts[k]; ok {
			path, pathKey = p, k
			break
		}
	}
	for _, k := range editKeys {
		old, okOld := texts[k[0]]
		repl, okNew := texts[k[1]]
		if okOld && okNew {
			return &Change{Path: path, Lines: editLines(old, repl)}, []string{pathKey, k[0], k[1]}
		}
	}
	name := strings.ToLower(tool)
	if content, ok := texts["content"]; ok && path != "" && (strings.Contains(name, "write") || strings.Contains(name, "create")) {
		c := &Change{Path: path, Write: true}
		for _, l := range splitLines(content) {
			c.Lines = append(c.Lines, ChangeLine{'+', l})
		}
		return c, []string{pathKey, "content"}
	}
	return nil, nil
}

// editLines is the diff of an edit: the lines old and new share at their
// start and end as context, the others removed and added.
func editLines(old, new string) []ChangeLine {
	a, b := splitLines(old), splitLines(new)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var out []ChangeLine
	for _, l := range a[:p] {
		out = append(out, ChangeLine{' ', l})
	}
	for _, l := range a[p : len(a)-s] {
		out = append(out, ChangeLine{'-', l})
	}
	for _, l := range b[p : len(b)-s] {
		out = append(out, ChangeLine{'+', l})
	}
	for _, l := range a[len(a)-s:] {
		out = append(out, ChangeLine{' ', l})
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// WritesAsDiffs shows a write that is the only change a transcript's calls
// make to a file as the run's diff of that file: what it changed, not the
// whole content it wrote. A path matches the diff's (relative to the
// workspace) as it is or as its end (an external agent's absolute path).
func WritesAsDiffs(msgs []Message, files []patch.File) {
	changes := map[string]int{}
	for _, m := range msgs {
		for _, c := range m.Calls {
			if c.Change != nil {
				changes[c.Change.Path]++
			}
		}
	}
	for _, m := range msgs {
		for _, c := range m.Calls {
			ch := c.Change
			if ch == nil || !ch.Write || changes[ch.Path] != 1 {
				continue
			}
			for _, f := range files {
				if p := f.Path(); f.Binary || p == "" || (ch.Path != p && !strings.HasSuffix(ch.Path, "/"+p)) {
					continue
				}
				ch.Lines, ch.Diff = nil, true
				for _, h := range f.Hunks {
					ch.Lines = append(ch.Lines, ChangeLine{'@', h.Header})
					for _, l := range h.Lines {
						if op := byte(l.Kind); op == '+' || op == '-' || op == ' ' {
							ch.Lines = append(ch.Lines, ChangeLine{op, l.Text})
						}
					}
				}
				break
			}
		}
	}
}
