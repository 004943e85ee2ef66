package runview

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
)

const laidOut = "# Transcript\n\n## user\n\nfix it\n\n## assistant\n\nI'll write and edit.\n\n" +
	"**tool call** `write_file` (c1)\n\n    {\"path\":\"a.txt\",\"content\":\"one\\ntwo\\n\"}\n\n" +
	"**tool call** `edit_file` (c2)\n\n    {\"path\":\"b.go\",\"search\":\"x\\ny := 1\\nz\",\"replace\":\"x\\ny := 2\\nz\"}\n\n" +
	"**tool call** `run_command` (c3)\n\n    {\"command\":\"rm -rf /\",\"timeout_s\":5,\"env\":{\"A\":\"1\"}}\n" +
	"\n## tool write_file (c1)\n\n    wrote a.txt\n" +
	"\n## tool edit_file (c2)\n\n    error: search text not found\n" +
	"\n## tool run_command (c3) — denied by rita: no\n\n    (empty)\n" +
	"\n## assistant\n\nDone.\n"

func ev(seq int64, at int, typ string, data any) bundle.Event {
	raw, _ := json.Marshal(data)
	return bundle.Event{Seq: seq, Time: time.Date(2026, 12, 6, 10, 0, at, 0, time.UTC), Type: typ, Data: raw}
}

func TestLayoutLaysOutCallsResultsAndModelCalls(t *testing.T) {
	events := []bundle.Event{
		ev(1, 0, bundle.EventModelResponse, bundle.ModelResponseEvent{Turn: 0, ToolCalls: 0, PromptTokens: 9}), // a side request (a title)
		ev(2, 1, bundle.EventModelResponse, bundle.ModelResponseEvent{Turn: 1, PromptTokens: 100, CompletionTokens: 20, ToolCalls: 3, DurationMS: 1500}),
		ev(3, 1, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c1", Name: "write_file"}),
		ev(4, 2, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c1", Name: "write_file", OK: true}),
		ev(5, 2, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c2", Name: "edit_file"}),
		ev(6, 2, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c2", Name: "edit_file", OK: false}),
		ev(7, 3, bundle.EventApprovalDecided, bundle.ApprovalDecidedEvent{ID: "c3", Approved: false, By: "rita"}),
		ev(8, 3, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c3", Name: "run_command"}),
		ev(9, 3, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c3", Name: "run_command", OK: false}),
		ev(10, 4, bundle.EventModelResponse, bundle.ModelResponseEvent{Turn: 0, PromptTokens: 7}), // another side request
		ev(11, 5, bundle.EventModelResponse, bundle.ModelResponseEvent{Turn: 2, PromptTokens: 150, CompletionTokens: 3, DurationMS: 250, FinishReason: "stop"}),
	}
	msgs := Layout(bundle.ParseTranscript(laidOut), events)
	if len(msgs) != 6 {
		t.Fatalf("%d messages, want 6: %+v", len(msgs), msgs)
	}
	first := msgs[1]
	if first.Text != "I'll write and edit." || len(first.Calls) != 3 {
		t.Fatalf("assistant text %q, %d calls", first.Text, len(first.Calls))
	}
	if first.Model == nil || first.Model.Turn != 1 || first.Model.Took != 1500*time.Millisecond || first.Model.PromptTokens != 100 {
		t.Errorf("first model call = %+v", first.Model)
	}
	write := first.Calls[0]
	if write.Name != "write_file" || write.ID != "c1" || len(write.Args) != 0 {
		t.Errorf("write call = %+v", write)
	}
	if c := write.Change; c == nil || !c.Write || c.Path != "a.txt" || !reflect.DeepEqual(c.Lines, []ChangeLine{{'+', "one"}, {'+', "two"}}) {
		t.Errorf("write change = %+v", c)
	}
	if c := first.Calls[1].Change; c == nil || c.Write || !reflect.DeepEqual(c.Lines, []ChangeLine{{' ', "x"}, {'-', "y := 1"}, {'+', "y := 2"}, {' ', "z"}}) {
		t.Errorf("edit change = %+v", c)
	}
	run := first.Calls[2]
	if run.Change != nil || !reflect.DeepEqual(run.Args, []Arg{{Key: "command", Value: "rm -rf /"}, {Key: "timeout_s", Value: "5"}, {Key: "env", Value: "{\n  \"A\": \"1\"\n}", Block: true}}) {
		t.Errorf("command call = %+v", run)
	}
	results := []*Result{msgs[2].Result, msgs[3].Result, msgs[4].Result}
	for i, want := range []Result{
		{ID: "c1", Name: "write_file", Output: "wrote a.txt", Took: time.Second},
		{ID: "c2", Name: "edit_file", Output: "error: search text not found", Failed: true},
		{ID: "c3", Name: "run_command", Note: "denied by rita: no", Failed: true, Refused: true},
	} {
		if results[i] == nil || *results[i] != want {
			t.Errorf("result %d = %+v, want %+v", i, results[i], want)
		}
	}
	if last := msgs[5]; last.Model == nil || last.Model.Turn != 2 || last.Model.Finish != "stop" {
		t.Errorf("the answer's model call = %+v, want turn 2 (not the side request before it)", last.Model)
	}
}

func TestLayoutShowsWhatItCannotReadAsText(t *testing.T) {
	for _, tc := range []struct{ name, transcript, text string }{
		{"arguments not JSON", "## assistant\n\nok\n\n**tool call** `x` (c1)\n\n    not json\n", "ok"},
		{"no calls", "## assistant\n\n**tool call** is a phrase\n", "**tool call** is a phrase"},
		{"tool heading without an id", "## tool x\n\n    out\n", "    out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := Layout(bundle.ParseTranscript(tc.transcript), nil)
			if len(msgs) != 1 || msgs[0].Text != tc.text || msgs[0].Model != nil || msgs[0].Result != nil {
				t.Fatalf("got %+v", msgs)
			}
			for _, c := range msgs[0].Calls {
				if len(c.Args) != 1 || c.Args[0].Value != "not json" {
					t.Errorf("arguments = %+v, want the raw text", c.Args)
				}
			}
		})
	}
}

func FuzzLayout(f *testing.F) {
	f.Add(laidOut)
	f.Add("## assistant\n\n**tool call** `a` (b)\n\n    {\"path\":1,\"content\":[]}\n## tool a (b) — denied\n")
	f.Add("## assistant\n**tool call** `e` (1)\n    {\"old_string\":\"a\\nb\",\"new_string\":\"b\",\"file_path\":\"x\"}\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range Layout(bundle.ParseTranscript(text), nil) {
			for _, c := range m.Calls {
				if c.Change != nil && len(c.Change.Lines) > 2*len(text)+2 {
					t.Fatalf("a change of %d lines from %d bytes", len(c.Change.Lines), len(text))
				}
			}
		}
	})
}

// An external agent's tools keep their own names, and its edits and writes
// are read from the argument names each agent uses.
func TestLayoutReadsTheChangesOfExternalAgentsTools(t *testing.T) {
	for _, tc := range []struct {
		name, call string
		write      bool
		path       string
	}{
		{"Claude Code Edit", "`Edit` (toolu_1)\n\n    {\"file_path\":\"/w/a.go\",\"old_string\":\"a\",\"new_string\":\"b\"}", false, "/w/a.go"},
		{"Claude Code Write", "`Write` (toolu_2)\n\n    {\"file_path\":\"/w/n.go\",\"content\":\"b\"}", true, "/w/n.go"},
		{"Gemini CLI replace", "`replace` (g1)\n\n    {\"file_path\":\"a.go\",\"old_string\":\"a\",\"new_string\":\"b\"}", false, "a.go"},
		{"opencode edit", "`edit` (o1)\n\n    {\"filePath\":\"a.go\",\"oldString\":\"a\",\"newString\":\"b\"}", false, "a.go"},
		{"opencode write", "`write` (o2)\n\n    {\"filePath\":\"n.go\",\"content\":\"b\"}", true, "n.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := Layout(bundle.ParseTranscript("## assistant\n\n**tool call** "+tc.call+"\n"), nil)
			if len(msgs) != 1 || len(msgs[0].Calls) != 1 {
				t.Fatalf("got %+v", msgs)
			}
			c := msgs[0].Calls[0]
			if c.Change == nil || c.Change.Write != tc.write || c.Change.Path != tc.path || c.Change.Lines[len(c.Change.Lines)-1] != (ChangeLine{'+', "b"}) || len(c.Args) != 0 {
				t.Errorf("%s: change %+v, args %+v", c.Name, c.Change, c.Args)
			}
		})
	}
}

func TestLayoutReadsAPatchArgumentAsADiff(t *testing.T) {
	for _, body := range []string{
		"    {\"input\":\"*** Begin Patch\\n*** Update File: a.go\\n@@\\n-a\\n+b\\n*** End Patch\"}", // Codex's apply_patch
		"    *** Begin Patch\n    *** Add File: n.go\n    +b\n    *** End Patch",                     // its custom tool: raw text
		"    {\"patch\":\"--- a/a.go\\n+++ b/a.go\\n@@ -1 +1 @@\\n-a\\n+b\\n\"}",
	} {
		msgs := Layout(bundle.ParseTranscript("## assistant\n\n**tool call** `apply_patch` (c)\n\n"+body+"\n"), nil)
		if len(msgs) != 1 || len(msgs[0].Calls) != 1 || len(msgs[0].Calls[0].Args) != 1 || !msgs[0].Calls[0].Args[0].Patch {
			t.Errorf("%s: got %+v", body, msgs)
		}
	}
	msgs := Layout(bundle.ParseTranscript("## assistant\n\n**tool call** `x` (c)\n\n    {\"text\":\"--- not a patch\\nat all\"}\n"), nil)
	if msgs[0].Calls[0].Args[0].Patch {
		t.Error("a text that starts with --- but has no hunk is read as a patch")
	}
}

// A write that is the only change to its file shows as the run's diff of
// that file; a file written twice keeps each write's content.
func TestWritesAsDiffs(t *testing.T) {
	files, err := patch.Parse("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n")
	if err != nil {
		t.Fatal(err)
	}
	msgs := Layout(bundle.ParseTranscript("## assistant\n\n"+
		"**tool call** `Write` (c1)\n\n    {\"file_path\":\"/work/a.txt\",\"content\":\"one\\n2\\n\"}\n\n"+
		"**tool call** `write_file` (c2)\n\n    {\"path\":\"b.txt\",\"content\":\"x\"}\n\n"+
		"**tool call** `write_file` (c3)\n\n    {\"path\":\"b.txt\",\"content\":\"y\"}\n"), nil)
	WritesAsDiffs(msgs, files)
	a := msgs[0].Calls[0].Change
	if !a.Diff || !reflect.DeepEqual(a.Lines, []ChangeLine{{'@', "@@ -1,2 +1,2 @@"}, {' ', "one"}, {'-', "two"}, {'+', "2"}}) {
		t.Errorf("the write of a.txt = %+v", a)
	}
	if b := msgs[0].Calls[1].Change; b.Diff || !reflect.DeepEqual(b.Lines, []ChangeLine{{'+', "x"}}) {
		t.Errorf("the first of two writes of b.txt = %+v", b)
	}
}

// A session's earlier turns may have a tool heading without the tool's
// name: its output is still a result.
func TestLayoutReadsAToolHeadingWithoutAName(t *testing.T) {
	msgs := Layout(bundle.ParseTranscript("## tool  (c1)\n\n    wrote a.txt\n"), nil)
	if len(msgs) != 1 || msgs[0].Result == nil || msgs[0].Result.ID != "c1" || msgs[0].Result.Output != "wrote a.txt" {
		t.Fatalf("got %+v", msgs)
	}
}

// A command that exited other than 0 is a failed call, whatever the agent
// said of it (tool.result ok may be true: the tool ran), and its heading
// says how it exited; one that exited 0, or whose exit is not known, is
// not. The run's failed calls are listed for the review box, refused ones
// left out.
func TestACommandThatExitedNonZeroIsAFailedCall(t *testing.T) {
	one, zero := 1, 0
	text := "# Run\n\n## tool run_command (c1)\n\n    exit 1\n\n## tool run_command (c2)\n\n    ok\n\n## tool Bash (c3)\n\n    ?\n\n## tool edit_file (c4)\n\n    error\n\n## tool run_command (c5) — denied by rita: no\n\n    (empty)\n"
	events := []bundle.Event{
		ev(1, 1, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c1", Name: "run_command", OK: true, Exit: &one}),
		ev(2, 1, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c2", Name: "run_command", OK: true, Exit: &zero}),
		ev(3, 1, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c3", Name: "Bash", OK: true}),
		ev(4, 1, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c4", Name: "edit_file", OK: false}),
		ev(5, 1, bundle.EventApprovalDecided, bundle.ApprovalDecidedEvent{ID: "c5", Approved: false, By: "rita"}),
		ev(6, 1, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c5", Name: "run_command", OK: false}),
	}
	msgs := Layout(bundle.ParseTranscript(text), events)
	want := []struct {
		failed bool
		note   string
	}{{true, "exit 1"}, {false, ""}, {false, ""}, {true, ""}, {true, ""}}
	for i, w := range want {
		r := msgs[i].Result
		if r == nil || r.Failed != w.failed || r.ExitNote() != w.note {
			t.Errorf("call %d: %+v, want failed %v, note %q", i+1, r, w.failed, w.note)
		}
	}
	v := &View{Transcript: msgs}
	var ids []string
	for _, r := range v.FailedCalls() {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "c1,c4" {
		t.Errorf("failed calls %v, want c1,c4 (the refused one is not a failure of the agent's)", ids)
	}
}

// A session's later run carries the conversation before it: its model
// calls go to its own messages only (not the earlier turns'), and an
// earlier tool result whose heading has no name is named by its call.
func TestALaterRunsStatsGoToItsOwnMessages(t *testing.T) {
	text := "# Run\n\n## user\n\nfirst task\n\n## assistant\n\nI'll write.\n\n**tool call** `write_file` (c1)\n\n    {\"path\":\"a.txt\",\"content\":\"x\"}\n\n" +
		"## tool (c1)\n\n    wrote a.txt\n\n## assistant\n\nDone before.\n\n## user\n\nChanges requested: say why\n\n## assistant\n\nBecause.\n"
	events := []bundle.Event{
		ev(1, 1, bundle.EventModelResponse, bundle.ModelResponseEvent{Turn: 1, PromptTokens: 500, CompletionTokens: 4, DurationMS: 300, FinishReason: "stop"}),
	}
	msgs := Layout(bundle.ParseTranscript(text), events)
	if len(msgs) != 6 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs[:5] {
		if m.Model != nil {
			t.Errorf("earlier message %d (%s) has this run's model call %+v", i, m.Role, m.Model)
		}
	}
	if m := msgs[5].Model; m == nil || m.Took != 300*time.Millisecond || m.PromptTokens != 500 {
		t.Errorf("this run's answer: %+v", m)
	}
	if r := msgs[2].Result; r == nil || r.Name != "write_file" {
		t.Errorf("the earlier tool result: %+v", r)
	}
}

// A turn of several calls reads call, result, call, result: each tool
// message is put under the call it answers, by id, and is not shown in
// its own place; a result without its call stays where it is.
func TestEachResultIsShownUnderItsCall(t *testing.T) {
	msgs := Layout(bundle.ParseTranscript(laidOut), nil)
	var asst *Message
	for i := range msgs {
		if len(msgs[i].Calls) == 3 {
			asst = &msgs[i]
		}
	}
	if asst == nil {
		t.Fatal("no message with three calls")
	}
	for _, c := range asst.Calls {
		if c.Answer == nil || c.Answer.Result == nil || c.Answer.Result.ID != c.ID || c.Answer.Answered {
			t.Errorf("call %s: answer %+v", c.ID, c.Answer)
		}
	}
	answered := 0
	for _, m := range msgs {
		if m.Answered {
			answered++
		}
	}
	if answered != 3 {
		t.Errorf("%d tool messages answered in place of 3", answered)
	}
	orphan := Layout(bundle.ParseTranscript("# Run\n\n## tool run_command (zz)\n\n    ok\n"), nil)
	if len(orphan) != 1 || orphan[0].Answered {
		t.Errorf("a result without its call: %+v", orphan)
	}
}

// A call of the last assistant message that started and has no result
// yet is running, with what its command wrote so far; one that answered,
// or one an earlier message left without a result, is not.
func TestARunningCallCarriesItsOutputSoFar(t *testing.T) {
	text := "# Run\n\n## assistant\n\n**tool call** `run_command` (c0)\n\n    {\"command\":\"true\"}\n\n" +
		"## assistant\n\n**tool call** `run_command` (c1)\n\n    {\"command\":\"make\"}\n\n**tool call** `read_file` (c2)\n\n    {\"path\":\"a\"}\n\n## tool read_file (c2)\n\n    x\n"
	events := []bundle.Event{
		ev(1, 1, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c0", Name: "run_command"}),
		ev(2, 2, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c2", Name: "read_file"}),
		ev(3, 2, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c2", Name: "read_file", OK: true}),
		ev(4, 3, bundle.EventToolCall, bundle.ToolCallEvent{ID: "c1", Name: "run_command"}),
		ev(5, 4, bundle.EventToolOutput, bundle.ToolOutputEvent{ID: "c1", Text: "compiling\n"}),
		ev(6, 5, bundle.EventToolOutput, bundle.ToolOutputEvent{ID: "c1", Text: "linking\n"}),
		ev(7, 5, bundle.EventToolOutput, bundle.ToolOutputEvent{ID: "c9", Text: "another call's\n"}),
	}
	msgs := Layout(bundle.ParseTranscript(text), events)
	var running []string
	for _, m := range msgs {
		for _, c := range m.Calls {
			if c.Running != nil {
				running = append(running, fmt.Sprintf("%s %q seq %d", c.ID, c.Running.Output, c.Running.Seq))
			}
		}
	}
	if want := `c1 "compiling\nlinking" seq 7`; strings.Join(running, "|") != want {
		t.Fatalf("running %v, want %s", running, want)
	}
	events = append(events, ev(8, 6, bundle.EventToolResult, bundle.ToolResultEvent{ID: "c1", Name: "run_command", OK: true}))
	for _, m := range Layout(bundle.ParseTranscript(text), events) {
		for _, c := range m.Calls {
			if c.Running != nil {
				t.Errorf("%s still running after its result", c.ID)
			}
		}
	}
}
