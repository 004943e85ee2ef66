package model

import (
	"encoding/json"
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
}
