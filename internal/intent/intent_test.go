package intent_test

import (
	"regexp"
	"testing"

	"github.com/proctor-dev/proctor/internal/intent"
)

// Every agent's tool call for an intent reads back as that intent, and as
// proctor's own tool's call; a call of another tool, or with another
// agent's arguments, is none.
func TestACallReadsAsTheIntentItCarriesOut(t *testing.T) {
	for _, tc := range []struct{ tool, args, native string }{
		{"Bash", `{"command":"go test ./...","description":"x"}`, `run_command {"command":"go test ./..."}`},
		{"run_shell_command", `{"command":"go test ./..."}`, `run_command {"command":"go test ./..."}`},
		{"bash", `{"command":"go test ./..."}`, `run_command {"command":"go test ./..."}`},
		{"exec_command", `{"cmd":"go test ./..."}`, `run_command {"command":"go test ./..."}`},
		{"shell", `{"command":["bash","-lc","go test ./..."]}`, `run_command {"command":"go test ./..."}`},
		{"shell", `{"command":["ls","-la"]}`, `run_command {"command":"ls -la"}`},
		{"Read", `{"file_path":"/ws/a.go"}`, `read_file {"path":"/ws/a.go"}`},
		{"write", `{"filePath":"/ws/a.go","content":"x"}`, `write_file {"content":"x","path":"/ws/a.go"}`},
		{"replace", `{"file_path":"a.go","old_string":"x","new_string":"y","instruction":"i"}`, `edit_file {"path":"a.go","replace":"y","search":"x"}`},
		{"edit", `{"filePath":"a.go","oldString":"x","newString":"y"}`, `edit_file {"path":"a.go","replace":"y","search":"x"}`},
		{"edit", `{"file_path":"a.go","old_string":"x","new_string":"y"}`, `edit_file {"path":"a.go","replace":"y","search":"x"}`},
		{"Bash", `{"cmd":"ls"}`, ""},
		{"Grep", `{"pattern":"x"}`, ""},
		{"Bash", `not json`, ""},
	} {
		in, ok := intent.Of(tc.tool, tc.args)
		got := ""
		if ok {
			name, args := in.Native()
			got = name + " " + args
		}
		if got != tc.native {
			t.Errorf("%s %s: %q, want %q", tc.tool, tc.args, got, tc.native)
		}
	}
}

// A tool of the same name as another agent's fits only the schema whose
// properties its arguments use.
func TestAToolFitsItsOwnSchemaOnly(t *testing.T) {
	var native, gemini intent.Tool
	for _, tool := range intent.Tools(intent.Read) {
		switch tool.Agent {
		case "native":
			native = tool
		case "gemini, qwen":
			gemini = tool
		}
	}
	schema := []byte(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)
	if native.Fits(schema) || !gemini.Fits(schema) {
		t.Fatal("read_file of the wrong agent fits")
	}
	if !regexp.MustCompile("run go test").MatchString(intent.Tools(intent.Run)[1].Args(intent.Intent{Kind: intent.Run, Command: "go test"}, "")["description"].(string)) {
		t.Fatal("no description for a tool that takes one")
	}
}
