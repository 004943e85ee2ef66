package model

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// bigRequest is a request as the agent loop sends it: tool schemas and a
// few turns of conversation.
func bigRequest(tb testing.TB) []byte {
	tb.Helper()
	var tools []ToolSpec
	for _, name := range []string{"read_file", "write_file", "list_files", "search", "run_command", "ask_user"} {
		params := fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"A path relative to the workspace root, e.g. \"src/main.go\"."},"limit":{"type":"integer","minimum":1,"maximum":1e6}},"required":["path"],"additionalProperties":false,"x-tool":%q}`, name)
		tools = append(tools, ToolSpec{Name: name, Description: "Does " + name + " — with care.", Parameters: json.RawMessage(params)})
	}
	msgs := []Message{
		{Role: RoleSystem, Content: "You are a careful coding agent.\nWork only in the workspace."},
		{Role: RoleUser, Content: "Fix the failing test in ./calc (ünïcode, \"quotes\", <tags> & tabs\t)."},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"calc/calc.go"}`}}},
		{Role: RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "package calc\n\nfunc Add(a, b int) int { return a - b }\n"},
	}
	body, err := encodeRequest("scripted", Request{Messages: msgs, Tools: tools})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func TestSummaryFastPathIsTaken(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		fast       bool
	}{
		{"a request as sent", string(bigRequest(t)), true},
		{"streamed, no tools", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, true},
		{"white space everywhere", " {\n\t\"stream\" : false , \"messages\" : [ 1 , {\"role\":\"user\"} ] } \r\n", true},
		{"numbers of every form", `{"x":[0,-0,1.5,-2e10,3E+2,4e-1,12345678901234567890],"messages":[]}`, true},
		{"escapes in skipped values", `{"x":"a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00","messages":[]}`, true},
		{"a tool without a name", `{"tools":[{"type":"function","function":{"description":"d"}}]}`, true},
		{"an escaped tool name", `{"tools":[{"function":{"name":"read\u005ffile"}}]}`, true},
		// Left to encoding/json:
		{"a key in other case", `{"Stream":true}`, false},
		{"a key folded by Unicode", "{\"\u017ftream\":true}", false},
		{"an escaped key", `{"str\u0065am":true}`, false},
		{"a repeated field", `{"tools":[],"tools":[]}`, false},
		{"null stream", `{"stream":null}`, false},
		{"a tool that is not an object", `{"tools":[null]}`, false},
		{"messages not a list", `{"messages":{}}`, false},
		{"trailing comma", `{"messages":[1,],"stream":true}`, false},
		{"leading zero", `{"x":01}`, false},
		{"control character in a string", "{\"x\":\"a\nb\"}", false},
		{"bad escape", `{"x":"\q"}`, false},
		{"short unicode escape", `{"x":"\u12"}`, false},
		{"trailing garbage", `{"messages":[]}x`, false},
		{"two values", `{} {}`, false},
		{"not an object", `[1]`, false},
		{"empty", ``, false},
		{"cut short", `{"messages":[{"role":"us`, false},
		{"bare minus", `{"x":-}`, false},
		{"dot without digits", `{"x":1.}`, false},
		{"exponent without digits", `{"x":1e}`, false},
		{"too deep", `{"x":` + strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1) + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, _, fast := scanSummary([]byte(tc.body))
			if fast != tc.fast {
				t.Fatalf("fast path taken = %v, want %v", fast, tc.fast)
			}
			if fast && !json.Valid([]byte(tc.body)) {
				t.Fatal("the fast path took invalid JSON")
			}
			assertSameSummary(t, []byte(tc.body))
		})
	}
}

// assertSameSummary checks that DecodeRequestSummary answers as
// encoding/json does.
func assertSameSummary(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := DecodeRequestSummary(body)
	want, wantErr := decodeSummaryJSON(body)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
		t.Fatalf("body %q:\n got %+v, %v\nwant %+v, %v", body, got, gotErr, want, wantErr)
	}
}

func FuzzRequestSummary(f *testing.F) {
	f.Add(bigRequest(f))
	for _, s := range []string{
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]}`,
		`{"Stream":true,"MESSAGES":[1],"tools":[{"FUNCTION":{"NAME":"x"}}]}`,
		`{"tools":[{"function":{"name":"a","name":"b"}},{"function":null}]}`,
		`{"messages":[{"role":"user","content":"\ud800"}],"x":[-0.0e+0,true,false,null,{}]}`,
		"{\"tools\":[{\"function\":{\"name\":\"\xff\"}}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, _, _, _, fast := scanSummary(body); fast && !json.Valid(body) {
			t.Fatalf("the fast path took invalid JSON %q", body)
		}
		assertSameSummary(t, body)
	})
}

// BenchmarkRequestSummary compares the fast path with encoding/json on a
// request as the agent loop sends it.
func BenchmarkRequestSummary(b *testing.B) {
	body := bigRequest(b)
	var base float64
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for range b.N {
			if _, err := decodeSummaryJSON(body); err != nil {
				b.Fatal(err)
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for range b.N {
			if _, err := DecodeRequestSummary(body); err != nil {
				b.Fatal(err)
			}
		}
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "ratio-to-encoding-json")
		}
	})
}
