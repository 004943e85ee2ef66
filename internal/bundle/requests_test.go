package bundle_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// record writes requests as a recorder does (one kind each, "" the same)
// into a bundle folder, and reads them back.
func record(t testing.TB, reqs []string, kinds []string, clean func([]byte) []byte) (string, *bundle.ExchangeLog) {
	t.Helper()
	dir := t.TempDir()
	w, err := bundle.NewRequestWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	for i, r := range reqs {
		kind := ""
		if kinds != nil {
			kind = kinds[i]
		}
		x := bundle.Exchange{Seq: int64(i + 1), Response: json.RawMessage(`{}`)}
		if x.Base, x.Keep, x.Pieces, err = w.Record(x.Seq, kind, []byte(r), clean); err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(x)
		lines.Write(append(line, '\n'))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bundle.ExchangesFile), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	log, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
	if err != nil || len(probs) > 0 {
		t.Fatalf("read back: %v %v", probs, err)
	}
	return dir, log
}

func same(b []byte) []byte { return b }

// chat is a chat completions request of the messages.
func chat(msgs ...string) string {
	return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `],"tools":[{"type":"function","function":{"name":"read_file"}}],"stream":false}`
}

func msg(role, content string) string {
	c, _ := json.Marshal(content)
	return `{"role":"` + role + `","content":` + string(c) + `}`
}

// Every request rebuilds byte for byte, whatever the agent did to its
// history between requests, and its gist is its model and last message.
func TestRequestsRebuildByteForByte(t *testing.T) {
	sys := msg("system", strings.Repeat("You are careful. ", 40))
	u1, a1, t1 := msg("user", "fix it"), `{"role":"assistant","tool_calls":[{"id":"c1"}]}`, msg("tool", strings.Repeat("file text\n", 500))
	for _, tc := range []struct {
		name  string
		reqs  []string
		kinds []string
	}{
		{"a growing conversation", []string{chat(sys, u1), chat(sys, u1, a1, t1), chat(sys, u1, a1, t1, msg("user", "go on"))}, nil},
		{"history compacted", []string{chat(sys, u1, a1, t1), chat(sys, msg("user", "summary: read the file")), chat(sys, msg("user", "summary: read the file"), u1)}, nil},
		{"a moved cache marker", []string{
			`{"model":"c","system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}],"messages":[` + u1 + `,{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]}`,
			`{"model":"c","system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}],"messages":[` + u1 + `,{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]}`}, nil},
		{"white space and nesting", []string{" {\n \"model\" : \"m\" ,\n \"messages\" : [ " + u1 + " , " + a1 + " ]\n}\n", "{\"a\":[[1,2],[3]],\"b\":{\"c\":[\"]\\\"[\"]}}"}, nil},
		{"not JSON, or not an object", []string{"not json at all", `[1,2,3]`, `"just a string"`, `{"open": [1, 2`, ""}, nil},
		{"bytes that are not UTF-8", []string{"{\"model\":\"\xff\xfe\",\"messages\":[\"\xc3\x28\"]}", "{\"model\":\"\xff\xfe\",\"messages\":[\"\xc3\x28\",\"x\"]}"}, nil},
		{"two kinds of call interleaved", []string{chat(u1), `{"model":"m","messages":[` + u1 + `],"count":true}`, chat(u1, a1), `{"model":"m","messages":[` + u1 + `,` + a1 + `],"count":true}`}, []string{"chat ", "chat count_tokens", "chat ", "chat count_tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := tc.reqs
			if tc.name == "not JSON, or not an object" {
				reqs = reqs[:len(reqs)-1] // an empty request records nothing
			}
			_, log := record(t, reqs, tc.kinds, same)
			for i, want := range reqs {
				got, err := log.Request(i)
				if err != nil || string(got) != want {
					t.Errorf("request %d rebuilds as %q (%v), want %q", i+1, got, err, want)
				}
			}
			// and again, out of order: each rebuilds alone
			for i := len(reqs) - 1; i >= 0; i-- {
				if got, err := log.Request(i); err != nil || string(got) != reqs[i] {
					t.Errorf("request %d read after a later one: %q (%v)", i+1, got, err)
				}
			}
		})
	}
	_, log := record(t, []string{chat(sys, u1, a1, t1, msg("user", "last"))}, nil, same)
	gist, err := log.Gist(0)
	if err != nil || string(gist) != chat(msg("user", "last")) {
		t.Errorf("gist %s (%v), want the model, the last message and the last tool", gist, err)
	}
}

// Redaction is applied to each piece as it is written: the rebuilt request
// is the whole request redacted.
func TestRequestsAreRecordedRedacted(t *testing.T) {
	clean := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("sk-secret-1"), []byte("[REDACTED]")) }
	reqs := []string{chat(msg("user", "key sk-secret-1")), chat(msg("user", "key sk-secret-1"), msg("assistant", "sk-secret-1 again")),
		// a secret in a small top-level value: in the glue between segments
		`{"model":"m","api_key":"sk-secret-1","messages":[` + msg("user", "hi") + `]}`}
	dir, log := record(t, reqs, nil, clean)
	for i, r := range reqs {
		got, err := log.Request(i)
		if err != nil || string(got) != string(clean([]byte(r))) {
			t.Errorf("request %d: %q %v", i+1, got, err)
		}
	}
	for _, name := range []string{bundle.SegmentsFile, bundle.ExchangesFile} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if bytes.Contains(data, []byte("sk-secret-1")) {
			t.Errorf("%s holds the secret", name)
		}
	}
}

// A long run's recording grows with its conversation, not its square: 200
// calls that each read a 16 KB file keep about the conversation once.
func TestARunsRecordingGrowsWithItsConversation(t *testing.T) {
	var msgs []string
	var reqs []string
	conversation := 0
	for i := range 200 {
		m := msg("tool", fmt.Sprintf("%03d", i)+strings.Repeat("x", 16<<10))
		msgs = append(msgs, `{"role":"assistant","tool_calls":[{"id":"c`+fmt.Sprint(i)+`"}]}`, m)
		conversation += len(m)
		reqs = append(reqs, chat(msgs...))
	}
	dir, log := record(t, reqs, nil, same)
	var size int64
	for _, name := range []string{bundle.SegmentsFile, bundle.ExchangesFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		size += info.Size()
	}
	if size > int64(conversation)*11/10 {
		t.Errorf("the recording is %d bytes for a conversation of %d", size, conversation)
	}
	if got, err := log.Request(199); err != nil || string(got) != reqs[199] {
		t.Errorf("the last request does not rebuild: %v", err)
	}
}

// A hostile exchanges.jsonl is refused line by line, or at the request
// that cannot be rebuilt: never read past segments.bin, never a loop.
func TestHostileRequestPieces(t *testing.T) {
	for _, tc := range []struct {
		name, lines, problem, rebuild string
	}{
		{"a base after it", `{"seq":1,"base":2,"keep":1,"pieces":["x"]}` + "\n", "base 2: no exchange before it", ""},
		{"a base that is itself", `{"seq":1,"pieces":["{}"]}` + "\n" + `{"seq":2,"base":2,"keep":1,"pieces":["x"]}` + "\n", "base 2: no exchange before it", ""},
		{"keep without a base", `{"seq":1,"keep":3,"pieces":["x"]}` + "\n", "want both or neither", ""},
		{"whole and in pieces", `{"seq":1,"request":{},"pieces":["x"]}` + "\n", "given whole and in pieces", ""},
		{"a segment out of bounds", `{"seq":1,"pieces":[[-1,5]]}` + "\n", "out of bounds", ""},
		{"a seq going back", `{"seq":2,"pieces":["{}"]}` + "\n" + `{"seq":1,"pieces":["{}"]}` + "\n", "does not follow", ""},
		{"a segment past the end", `{"seq":1,"pieces":[[0,99]]}` + "\n", "", "past the end of segments.bin"},
		{"keeping more than its base has", `{"seq":1,"pieces":["{}"]}` + "\n" + `{"seq":2,"base":1,"keep":5,"pieces":[]}` + "\n", "keep 5: exchange 1's request has 1 pieces", ""},
		{"a base that is a whole request", `{"seq":1,"request":{}}` + "\n" + `{"seq":2,"base":1,"keep":1,"pieces":["x"]}` + "\n", "keep 1: exchange 1's request has 0 pieces", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, bundle.ExchangesFile), []byte(tc.lines), 0o644)
			os.WriteFile(filepath.Join(dir, bundle.SegmentsFile), []byte("0123456789"), 0o644)
			log, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if tc.problem != "" {
				if !strings.Contains(fmt.Sprint(probs), tc.problem) {
					t.Fatalf("problems %v, want one saying %q", probs, tc.problem)
				}
				return
			}
			_, err = log.Request(len(log.Exchanges) - 1)
			if err == nil || !strings.Contains(err.Error(), tc.rebuild) {
				t.Fatalf("rebuild: %v, want %q", err, tc.rebuild)
			}
		})
	}
}

// An older bundle, each request whole, still reads.
func TestOlderBundlesHoldRequestsWhole(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, bundle.ExchangesFile), []byte(`{"seq":1,"request":{"model":"m","messages":[{"role":"user","content":"hi"}]},"response":{}}`+"\n"), 0o644)
	log, probs, err := bundle.ReadExchanges(dir, bundle.DefaultLimits())
	if err != nil || len(probs) > 0 {
		t.Fatal(probs, err)
	}
	for _, read := range []func(int) ([]byte, error){log.Request, log.Gist} {
		if got, err := read(0); err != nil || string(got) != `{"model":"m","messages":[{"role":"user","content":"hi"}]}` {
			t.Errorf("%s %v", got, err)
		}
	}
}

// Whatever bytes a request holds, its pieces put together are those
// bytes: the split never loses or moves one.
func FuzzRecordRequests(f *testing.F) {
	f.Add([]byte(chat(msg("user", "a"))), []byte(chat(msg("user", "a"), msg("assistant", "b"))))
	f.Add([]byte(`{"a":"\"]","b":[1,{"c":"]"}]}`), []byte(`{"a":"\"]","b":[1,{"c":"]"},2]}`))
	f.Add([]byte("\xff{"), []byte(`[ ]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) == 0 || len(b) == 0 {
			return
		}
		_, log := record(t, []string{string(a), string(b)}, nil, same)
		for i, want := range [][]byte{a, b} {
			if got, err := log.Request(i); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("request %d: %q (%v), want %q", i+1, got, err, want)
			}
		}
	})
}
