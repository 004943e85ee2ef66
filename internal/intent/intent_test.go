package intent_test

import (
	"regexp"
	"strings"
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
		in, ok := intent.For("").Of(tc.tool, tc.args)
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
	for _, tool := range intent.For("").Tools(intent.Read) {
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
	if !regexp.MustCompile("run go test").MatchString(intent.For("").Tools(intent.Run)[1].Args(intent.Intent{Kind: intent.Run, Command: "go test"}, "")["description"].(string)) {
		t.Fatal("no description for a tool that takes one")
	}
}

// The commands proctor gives Codex for a file are known for what they are,
// and nothing more is: a command with anything else in it is a command.
func TestReadAndPatchCommandsAreKnownExactly(t *testing.T) {
	patch := intent.PatchCommand(intent.Intent{Kind: intent.Write, Path: "x\nEOF", Content: "EOF\nx\n"}, "")
	if !strings.HasPrefix(patch, "apply_patch <<'EOF_X'\n") || !intent.IsPatchCommand(patch) {
		t.Fatalf("a line EOF in the patch needs another delimiter: %q", patch)
	}
	for _, tc := range []struct {
		cmd        string
		read, isPa bool
	}{
		{intent.ReadCommand("a.txt"), true, false},
		{intent.ReadCommand("dir/a b.txt"), true, false},
		{intent.PatchCommand(intent.Intent{Kind: intent.Edit, Path: "a", Old: "x", New: "y"}, "x\n"), false, true},
		{"cat -- 'a.txt'; rm -rf /", false, false},
		{"cat -- 'a.txt' > b", false, false},
		{"cat -- '/etc/passwd'", false, false},
		{"cat -- '../x'", false, false},
		{intent.ReadCommand("it's"), false, false}, // quoted with '\'' — not a read proctor gives
		{"cat -- $(rm x)", false, false},
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\nrm -rf /\n", false, false},
		{"apply_patch <<'EOF'\n*** Begin Patch\nEOF\nrm x\n*** End Patch\nEOF\n", false, false},
		{"apply_patch <<EOF\n*** Begin Patch\n$(rm x)\n*** End Patch\nEOF\n", false, false},
		{"apply_patch <<'E$F'\n*** Begin Patch\n*** End Patch\nE$F\n", false, false},
		{"apply_patch <<'EOF' && rm x\n*** Begin Patch\n*** End Patch\nEOF\n", false, false},
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF", false, true},
	} {
		if intent.IsReadCommand(tc.cmd) != tc.read || intent.IsPatchCommand(tc.cmd) != tc.isPa {
			t.Errorf("%q: read %v patch %v, want %v %v", tc.cmd, intent.IsReadCommand(tc.cmd), intent.IsPatchCommand(tc.cmd), tc.read, tc.isPa)
		}
	}
}

func TestAQuestionIsAskedWithProctorsTool(t *testing.T) {
	in, ok := intent.For("").Of("ask_user", `{"question":"Which?"}`)
	if !ok || in.Kind != intent.Ask || in.Question != "Which?" {
		t.Fatalf("%+v %v", in, ok)
	}
	if name, args := in.Native(); name+args != `ask_user{"question":"Which?"}` {
		t.Fatal(name, args)
	}
}
