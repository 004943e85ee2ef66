package model

import (
	"encoding/json"
	"fmt"
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

// Encoders over one SDK client share the head last encoded, and each
// still sends exactly what it would alone, whatever the others offer
// (run with -race).
func TestEncodersShareHeads(t *testing.T) {
	toolsA := []ToolSpec{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}
	toolsB := []ToolSpec{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object","required":["path"]}`)}}
	shared := new(heads)
	done := make(chan error)
	for w := range 4 {
		go func() {
			e := requestEncoder{shared: shared}
			for turn := range 50 {
				tools := toolsA
				if (w+turn)%3 == 0 {
					tools = toolsB
				}
				req := Request{Messages: []Message{{Role: RoleUser, Content: fmt.Sprint("turn ", turn)}}, Tools: tools, Stream: w%2 == 0}
				got, err := e.encode(fmt.Sprint("model-", w%2), req)
				want, _ := encodeRequest(fmt.Sprint("model-", w%2), req)
				if err != nil || string(got) != string(want) {
					done <- fmt.Errorf("worker %d turn %d:\n got %s\nwant %s", w, turn, got, want)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// A head's key is its own copy: changing the caller's schema in place
	// does not make the old head fit.
	params := json.RawMessage(`{"type":"object"}`)
	e := requestEncoder{shared: shared}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "u"}}, Tools: []ToolSpec{{Name: "x", Parameters: params}}}
	e.encode("m", req)
	copy(params, `{"type":"array" }`)
	got, _ := e.encode("m", req)
	if want, _ := encodeRequest("m", req); string(got) != string(want) {
		t.Fatalf("after the schema changed in place:\n got %s\nwant %s", got, want)
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
