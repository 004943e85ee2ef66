package model

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestEncoderMatchesPlainEncoding(t *testing.T) {
	var e requestEncoder
	tools := []ToolSpec{{Name: "read_file", Description: "r", Parameters: json.RawMessage(`{"type":"object"}`)}}
	msgs := []Message{{Role: RoleSystem, Content: "s"}, {Role: RoleUser, Content: "u \"q\" <x>"}}
	for turn := range 4 {
		req := Request{Messages: msgs, Tools: tools, Stream: turn%2 == 1}
		got, err := e.encode("m", req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := encodeRequest("m", req)
		if string(got) != string(want) {
			t.Fatalf("turn %d:\n got %s\nwant %s", turn, got, want)
		}
		msgs = append(msgs, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "read_file", Arguments: `{}`}}},
			Message{Role: RoleTool, ToolCallID: "c", Name: "read_file", Content: "out"})
	}
	// A different conversation through the same encoder.
	other := Request{Messages: []Message{{Role: RoleUser, Content: "other"}}}
	got, _ := e.encode("m", other)
	want, _ := encodeRequest("m", other)
	if string(got) != string(want) {
		t.Fatalf("other:\n got %s\nwant %s", got, want)
	}
	if got, _ := e.encode("m", Request{}); string(got) != `{"model":"m","messages":[]}` {
		t.Fatalf("empty: %s", got)
	}
	// The tools, the model or the schema changing is seen, though the
	// request without messages is reused while they do not.
	for _, req := range []struct {
		model string
		tools []ToolSpec
	}{
		{"m", tools}, {"m", tools},
		{"m", []ToolSpec{{Name: "read_file", Description: "changed", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		{"m", []ToolSpec{{Name: "read_file", Description: "changed", Parameters: json.RawMessage(`{"type":"array"}`)}}},
		{"n", tools},
	} {
		r := Request{Messages: msgs[:2], Tools: req.tools}
		got, _ := e.encode(req.model, r)
		want, _ := encodeRequest(req.model, r)
		if string(got) != string(want) {
			t.Fatalf("tools %v model %s:\n got %s\nwant %s", req.tools, req.model, got, want)
		}
	}
}

func TestDecodeRequestSummary(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Request
		err        string
	}{
		{"last message and tool names", `{"model":"m","stream":true,"messages":[{"role":"system","content":"be careful"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}],"tools":[{"type":"function","function":{"name":"read_file","description":"d","parameters":{"type":"object"}}}]}`,
			Request{Stream: true, Messages: []Message{{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}}}, Tools: []ToolSpec{{Name: "read_file"}}}, ""},
		{"no messages", `{"model":"m","messages":[]}`, Request{}, ""},
		{"not JSON", `{"model":`, Request{}, "not a chat completion request"},
		{"a bad last message", `{"messages":[{"role":"user","content":"x"},{"role":7}]}`, Request{}, "messages[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRequestSummary([]byte(tc.body))
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
