package model_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/model"
)

// Requests as Claude Code and Gemini CLI send them read as one
// conversation: system first, tool calls on the assistant's message, tool
// results last even when reminders ride beside them.
func TestRequestsOfEachAPIReadAsOneConversation(t *testing.T) {
	for _, tc := range []struct {
		api, body string
		want      []string // role:content|calls per message
		tools     int
	}{
		{model.APIMessages, `{"model":"claude","system":[{"type":"text","text":"You are Claude Code."},{"type":"text","text":"Be brief."}],
			"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"fix it"}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a.go"}]},{"type":"text","text":"<system-reminder>y</system-reminder>"}]}],
			"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],"stream":true}`,
			[]string{"system:You are Claude Code.\nBe brief.", "user:<system-reminder>x</system-reminder>\nfix it", `assistant:|Bash{"command":"ls"}#t1`, "user:<system-reminder>y</system-reminder>", "tool:a.go#t1"}, 2},
		{model.APIGemini, `{"systemInstruction":{"parts":[{"text":"You are Gemini CLI."}]},
			"contents":[{"role":"user","parts":[{"text":"fix it"}]},
			{"role":"model","parts":[{"text":"thinking","thought":true},{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}},{"functionCall":{"name":"read_file","args":{"path":"a"}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"A"}}},{"functionResponse":{"name":"run_shell_command","response":{"output":"a.go","exit":0}}}]}],
			"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object"}},{"name":"read_file"}]}]}`,
			[]string{"system:You are Gemini CLI.", "user:fix it", `assistant:|run_shell_command{"command":"ls"}#gemini-call-1,read_file{"path":"a"}#gemini-call-2`, "tool:A#gemini-call-2", `tool:{"output":"a.go","exit":0}#gemini-call-1`}, 2},
	} {
		t.Run(tc.api, func(t *testing.T) {
			_, req, err := model.DecodeAnyRequest(tc.api, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range req.Messages {
				s := m.Role + ":" + m.Content
				var calls []string
				for _, c := range m.ToolCalls {
					calls = append(calls, c.Name+c.Arguments+"#"+c.ID)
				}
				if len(calls) > 0 {
					s += "|" + strings.Join(calls, ",")
				}
				if m.Role == model.RoleTool {
					s += "#" + m.ToolCallID
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n---\n") != strings.Join(tc.want, "\n---\n") {
				t.Fatalf("read as\n%s\nwant\n%s", strings.Join(got, "\n---\n"), strings.Join(tc.want, "\n---\n"))
			}
			if len(req.Tools) != tc.tools || req.API != tc.api {
				t.Fatalf("tools %d api %q", len(req.Tools), req.API)
			}
		})
	}
}

// A stream that stops before its end is cut, in every API; an error event
// says what the provider said.
func TestStreamsOfEachAPIFoldOrAreCut(t *testing.T) {
	msgStart := `event: message_start
data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"and\":\"ls\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}

`
	gem := "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"a\"}]}}]}\n\ndata: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"b\"}]}}]}\n\n"
	for _, tc := range []struct {
		name, api, stream, want string
		cut                     bool
	}{
		{"messages whole", model.APIMessages, msgStart + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", `Bash{"command":"ls"} out 9 finish tool_calls`, false},
		{"messages cut", model.APIMessages, msgStart, "", true},
		{"messages error", model.APIMessages, msgStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "overloaded_error: Overloaded", false},
		{"gemini whole", model.APIGemini, gem + "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"c\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"totalTokenCount\":5}}\n\n", "text abc out 2 finish stop", false},
		{"gemini cut", model.APIGemini, gem, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := model.FoldStream(tc.api, []byte(tc.stream))
			if tc.cut {
				if !errors.Is(err, model.ErrStreamCut) {
					t.Fatalf("want a cut stream, got %v", err)
				}
				return
			}
			if err != nil {
				if strings.Contains(err.Error(), tc.want) {
					return
				}
				t.Fatal(err)
			}
			r, err := model.DecodeReply(tc.api, raw)
			if err != nil {
				t.Fatal(err)
			}
			got := "text " + r.Message.Content
			if len(r.Message.ToolCalls) > 0 {
				got = r.Message.ToolCalls[0].Name + r.Message.ToolCalls[0].Arguments
			}
			got += " out " + strconv.FormatInt(r.Usage.CompletionTokens, 10) + " finish " + r.FinishReason
			if got != tc.want {
				t.Fatalf("folded to %q, want %q", got, tc.want)
			}
		})
	}
}
