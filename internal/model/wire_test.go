package model

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Request
		err        string
	}{
		{"messages and tools", `{"model":"m","stream":true,"messages":[{"role":"system","content":"be careful"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}],"tools":[{"type":"function","function":{"name":"read_file","description":"d","parameters":{"type":"object"}}}]}`,
			Request{Stream: true, API: APIChat, Messages: []Message{{Role: "system", Content: "be careful"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}}},
				Tools: []ToolSpec{{Name: "read_file", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}}, ""},
		{"no messages", `{"model":"m","messages":[]}`, Request{API: APIChat}, ""},
		{"not JSON", `{"model":`, Request{}, "not a chat completion request"},
		{"a bad last message", `{"messages":[{"role":"user","content":"x"},{"role":7}]}`, Request{}, "messages.role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := DecodeRequest([]byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// Content may be a text, null, or an array of content parts (system, user
// and tool messages); the text parts are joined.
func TestDecodeRequestContentParts(t *testing.T) {
	for _, tc := range []struct{ content, want, err string }{
		{`"plain"`, "plain", ""},
		{`null`, "", ""},
		{`[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]`, "a\nb", ""},
		{`7`, "", "content: want a text or an array of content parts"},
	} {
		_, req, err := DecodeRequest([]byte(`{"model":"m","messages":[{"role":"tool","tool_call_id":"c","content":` + tc.content + `}],"stream":true,"stream_options":{"include_usage":true}}`))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v", tc.content, err)
			}
			continue
		}
		if err != nil || req.Messages[0].Content != tc.want || !req.IncludeUsage {
			t.Errorf("%s: %+v %v", tc.content, req, err)
		}
	}
}
