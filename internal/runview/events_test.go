package runview

import (
	"reflect"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func TestDescribeSaysAnEventInWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want []Field
	}{
		{"none", ``, nil},
		{"model response", `{"turn":2,"prompt_tokens":10,"duration_ms":1500}`,
			[]Field{{Key: "turn", Value: "2"}, {Key: "prompt_tokens", Value: "10"}, {Key: "took", Value: "1.5s"}}},
		{"tool call arguments one by one", `{"id":"c1","name":"write_file","args":{"path":"a.txt","content":"one\ntwo\nthree"}}`,
			[]Field{{Key: "id", Value: "c1"}, {Key: "name", Value: "write_file"}, {Key: "path", Value: "a.txt"}, {Key: "content", Value: "one … (3 lines)"}}},
		{"arguments not an object", `{"args":"raw text"}`, []Field{{Key: "args", Value: "raw text"}}},
		{"failure marked", `{"ok":false,"approved":false,"passed":true,"broken":true}`,
			[]Field{{Key: "ok", Value: "false", Bad: true}, {Key: "approved", Value: "false", Bad: true}, {Key: "passed", Value: "true"}, {Key: "broken", Value: "true", Bad: true}}},
		{"nested object compact", `{"stage":"x","more":{"a":[1, 2]}}`, []Field{{Key: "stage", Value: "x"}, {Key: "more", Value: `{"a":[1, 2]}`}}},
		{"not an object", `[1,2]`, []Field{{Value: "[1,2]"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Describe(bundle.Event{Type: "x", Data: []byte(tc.data)})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Describe(%s) = %+v, want %+v", tc.data, got, tc.want)
			}
		})
	}
}

func TestDescribeShowsACommandsOutputAsLines(t *testing.T) {
	got := Describe(bundle.Event{Type: bundle.EventToolOutput, Data: []byte(`{"id":"c1","text":"ok\tpkg\nFAIL x\n"}`)})
	want := []Field{{Key: "id", Value: "c1"}, {Value: "ok\tpkg\nFAIL x", Block: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
