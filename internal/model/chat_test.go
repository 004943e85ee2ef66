package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// The request body is the Chat Completions wire format: an assistant's
// tool calls with a null content, tools as functions, usage asked for in a
// stream; a role or tool parameters that are not the format's are refused.
func TestChatRequestBody(t *testing.T) {
	body, err := chatRequestBody("m", Request{Stream: true, Messages: []Message{
		{Role: RoleSystem, Content: "be careful"},
		{Role: RoleUser, Content: "hi"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Content: "x"},
		{Role: RoleAssistant, Content: ""},
	}, Tools: []ToolSpec{{Name: "read_file", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[{"role":"system","content":"be careful"},{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},` +
		`{"role":"tool","content":"x","tool_call_id":"c1"},{"role":"assistant","content":""}],` +
		`"tools":[{"type":"function","function":{"name":"read_file","description":"d","parameters":{"type":"object"}}}],"stream":true,"stream_options":{"include_usage":true}}`
	if string(body) != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
	// What proctor sends, its own reader of requests reads back.
	if model, req, err := DecodeRequest(body); err != nil || model != "m" || len(req.Messages) != 5 || req.Messages[2].ToolCalls[0].Name != "read_file" || !req.IncludeUsage {
		t.Fatalf("read back: %q %+v %v", model, req, err)
	}
	if _, err := chatRequestBody("m", Request{Messages: []Message{{Role: "developer", Content: "x"}}}); err == nil || !strings.Contains(err.Error(), `role "developer"`) {
		t.Errorf("a role the format lacks: %v", err)
	}
	if _, err := chatRequestBody("m", Request{Tools: []ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}); err == nil || !strings.Contains(err.Error(), "parameters of tool t") {
		t.Errorf("parameters that are not an object: %v", err)
	}
}

// Server-sent events are read as the format says: data lines joined,
// comments and other fields skipped, CRLF as LF, the last event without a
// blank line after it kept, a long line whole.
func TestReadEvents(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	stream := ": a comment\nevent: chunk\ndata: one\r\ndata: two\r\n\r\nid: 7\nretry: 10\n\ndata:three\n\ndata: " + long + "\n\ndata: last"
	var got []string
	if err := readEvents(strings.NewReader(stream), func(d []byte) error { got = append(got, string(d)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != "one\ntwo" || got[1] != "three" || got[2] != long || got[3] != "last" {
		t.Fatalf("events %q", got)
	}
	huge := "data: " + strings.Repeat("y", maxEventBytes+10) + "\n\n"
	if err := readEvents(strings.NewReader(huge), func([]byte) error { return nil }); err == nil {
		t.Error("an event over the bound was read")
	}
}

func TestAToolsParametersMustBeAJSONObject(t *testing.T) {
	for _, c := range []struct {
		params string
		ok     bool
	}{
		{`{"type":"object"}`, true},
		{" \n{\"type\":\"object\",\"properties\":{}}", true},
		{`[1,2]`, false},
		{`"object"`, false},
		{`{"type":`, false},
		{`{} {}`, false},
	} {
		_, err := chatRequestBody("m", Request{Tools: []ToolSpec{{Name: "read_file", Parameters: json.RawMessage(c.params)}}})
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "read_file")) {
			t.Errorf("parameters %q: %v, want ok=%v and an error naming the tool", c.params, err, c.ok)
		}
	}
}
