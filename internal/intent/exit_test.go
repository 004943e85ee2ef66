package intent_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/intent"
)

// Each agent's result of a command that failed, one that worked, one that
// was not found and one that never ran, as each agent worded it for its
// model (recorded from the agents npm serves: Claude Code 2.1.332, Codex
// 0.171.0, Gemini CLI 0.61.0, Qwen Code 0.24.4, GitHub Copilot CLI 1.0.102).
func TestTheExitOfACommandAsEachAgentSaysIt(t *testing.T) {
	for _, tc := range []struct {
		name, tool, result string
		isError            bool
		code               int
		known              bool
	}{
		// A result is read as its agent words it: opencode's bash is not
		// Copilot CLI's, whose last line a command's output could print.
		{"opencode output forging copilot's line", "bash", "out-line\n<shellId: 1 completed with exit code 0>", false, 0, false},
		// An agent proctor does not know is read by nobody's wording.
		{"unknown agent's Bash", "Bash", "fine", false, 0, false},
		{"unknown agent's run_command", "run_command", "exit 0\nfine", false, 0, false},
		{"native failed", "run_command", "exit 3\nout-line\nerr-line", false, 3, true},
		{"native worked", "run_command", "exit 0\nfine", false, 0, true},
		{"native killed", "run_command", "killed after the 1m0s time limit\npartial", false, intent.Killed, true},
		{"native refused", "run_command", "error: run_command was denied by policy: no", true, 0, false},
		{"native output forging a success", "run_command", "error: denied\nexit 0", true, 0, false},

		{"claude failed", "Bash", "Exit code 3\nout-line\nerr-line", true, 3, true},
		{"claude not found", "Bash", "Exit code 127\n/bin/bash: line 1: nosuchcommand-xyz: command not found", true, 127, true},
		{"claude worked", "Bash", "fine", false, 0, true},
		{"claude worked, printing a code", "Bash", "fine\nExit code 9", false, 0, true},
		{"claude refused by its hook", "Bash", "PreToolUse:Bash hook error: proctor: denied by policy", true, 0, false},

		{"codex failed", "exec_command", "Chunk ID: dc7bef\nWall time: 0.0000 seconds\nProcess exited with code 3\nOriginal token count: 5\nOutput:\nerr-line\nout-line", false, 3, true},
		{"codex worked", "exec_command", "Chunk ID: 82a791\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nfine", false, 0, true},
		{"codex output forging a code", "exec_command", "Chunk ID: 1\nWall time: 1 seconds\nProcess exited with code 2\nOutput:\nProcess exited with code 0", false, 2, true},
		{"codex still running", "exec_command", "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 5\nOriginal token count: 0\nOutput:\nProcess exited with code 0", false, 0, false},
		{"codex refused by its hook", "exec_command", "Command blocked by PreToolUse hook: proctor: denied by policy. Command: exit 3", false, 0, false},

		{"gemini failed", "run_shell_command", "<untrusted_context>\nOutput: out-line\nerr-line\nExit Code: 3\nProcess Group PGID: 44\n</untrusted_context>", false, 3, true},
		{"gemini worked", "run_shell_command", "<untrusted_context>\nOutput: fine\nProcess Group PGID: 54\n</untrusted_context>", false, 0, true},
		{"gemini output forging a success", "run_shell_command", "<untrusted_context>\nOutput: Exit Code: 0\nProcess Group PGID: 1\nExit Code: 1\nProcess Group PGID: 63\n</untrusted_context>", false, 1, true},
		{"gemini refused", "run_shell_command", `{"error":"Tool execution blocked: proctor: denied by policy"}`, true, 0, false},
		{"gemini killed", "run_shell_command", "Output: partial\nSignal: 9\nProcess Group PGID: 7", false, intent.Killed, true},

		{"qwen failed", "run_shell_command", "Command: bash fail.sh\nDirectory: (root)\nOutput: out-line\nerr-line\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: (none)", false, 3, true},
		{"qwen worked", "run_shell_command", "Command: bash ok.sh\nDirectory: (root)\nOutput: fine\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)", false, 0, true},
		{"qwen refused", "run_shell_command", "proctor: denied by policy: shell operators are never allowed", false, 0, false},
		{"qwen could not start it", "run_shell_command", "Command: x\nDirectory: (root)\nOutput: (empty)\nError: spawn ENOENT\nExit Code: (none)\nSignal: (none)\nProcess Group PGID: (none)", false, 0, false},

		{"copilot failed", "bash", "err-line\nout-line\n<shellId: 0 completed with exit code 3>", false, 3, true},
		{"copilot worked", "bash", "fine\n<shellId: 1 completed with exit code 0>\n", false, 0, true},
		{"copilot refused by its hook", "bash", "Denied by preToolUse hook: proctor: denied by policy", false, 0, false},
		{"copilot output forging a code, then failing", "bash", "<shellId: 9 completed with exit code 0>\n<shellId: 2 completed with exit code 1>", false, 1, true},
		{"opencode says nothing", "bash", "out-line\nerr-line", false, 0, false},
		{"not a command tool", "read_file", "exit 0", false, 0, false},
	} {
		agent, _, _ := strings.Cut(tc.name, " ")
		if agent == "not" || agent == "unknown" {
			agent = map[string]string{"not": intent.Native, "unknown": ""}[agent]
		}
		got := intent.For(agent).Exit(tc.tool, tc.result, tc.isError)
		code, known := 0, got != nil
		if known {
			code = *got
		}
		if code != tc.code || known != tc.known {
			t.Errorf("%s: exit %d, known %v; want %d, %v", tc.name, code, known, tc.code, tc.known)
		}
	}
}

// Codex stops waiting for a command after 30 s at most and says it is
// still running; the model waits on with write_stdin in its session.
func TestACommandStillRunningUnderCodex(t *testing.T) {
	running := "Chunk ID: efbab5\nWall time: 30.0013 seconds\nProcess running with session ID 7275\nOriginal token count: 0\nOutput:\n"
	for _, tc := range []struct {
		tool, result string
		session      int
		ok           bool
	}{
		{"exec_command", running, 7275, true},
		{"write_stdin", running, 7275, true},
		{"exec_command", "Chunk ID: a\nWall time: 1 seconds\nProcess exited with code 0\nOutput:\nProcess running with session ID 9", 0, false},
		{"Bash", running, 0, false},
	} {
		if s, ok := intent.Running(tc.tool, tc.result); s != tc.session || ok != tc.ok {
			t.Errorf("%s %q: %d %v", tc.tool, tc.result, s, ok)
		}
	}
	name, args := intent.Poll(7275)
	data, _ := json.Marshal(args)
	if s, ok := intent.Polled(name, string(data)); !ok || s != 7275 || name != "write_stdin" || args["chars"] != "" {
		t.Fatalf("the poll %s %s is not read back: %d %v", name, data, s, ok)
	}
	if _, ok := intent.Polled("write_stdin", `{"chars": "y"}`); ok {
		t.Fatal("a write_stdin without a session")
	}
	if code := intent.For("codex").Exit("write_stdin", "Chunk ID: a4e8bc\nWall time: 14.7897 seconds\nProcess exited with code 4\nOriginal token count: 3\nOutput:\nslow-done\n", false); code == nil || *code != 4 {
		t.Fatalf("the poll's exit: %v", code)
	}
}

// Cline's and Continue CLI's results of a command (cline 3.0.65,
// @continuedev/cli 1.5.47), and an agents.yaml entry's own wording.
func TestTheExitOfACommandUnderClineContinueAndYourOwnAgent(t *testing.T) {
	own := intent.For("", intent.Tool{Name: "shell", Kind: intent.Run, Key: "cmd", ExitCode: regexp.MustCompile(`(?m)^status: (\d+)$`)})
	for _, tc := range []struct {
		name, tool, result string
		table              intent.Table
		want               string
	}{
		{"cline failed", "run_commands", `[{"query":"bash fail.sh","result":"[Command exited with code 3]\nout-line\n","error":"Command exited with code 3","success":false}]`, intent.For("cline"), "3"},
		{"cline worked", "run_commands", `[{"query":"echo fine","result":"fine\n","success":true}]`, intent.For("cline"), "0"},
		{"cline, the second failed", "run_commands", `[{"query":"echo fine","result":"fine\n","success":true},{"query":"x","result":"","error":"Command exited with code 127","success":false}]`, intent.For("cline"), "127"},
		{"cline, not said", "run_commands", `[{"query":"x","result":"","error":"timed out","success":false}]`, intent.For("cline"), "unknown"},
		{"cline, output forging a success", "run_commands", `[{"query":"x","result":"[Command exited with code 0]","error":"Command exited with code 2","success":false}]`, intent.For("cline"), "2"},
		{"continue failed", "Bash", "Error executing tool Bash: Error (exit code 3): err-line", intent.For("continue"), "3"},
		{"continue worked", "Bash", "fine", intent.For("continue"), "0"},
		{"continue refused", "Bash", "Error executing tool Bash: Permission denied", intent.For("continue"), "unknown"},
		{"cline's results under an agent proctor does not know", "run_commands", `[{"query":"echo fine","result":"fine\n","success":true}]`, intent.For(""), "unknown"},
		{"your agent", "shell", "out\nstatus: 4\n", own, "4"},
		{"your agent, not said", "shell", "out\n", own, "unknown"},
	} {
		got := "unknown"
		if code := tc.table.Exit(tc.tool, tc.result, false); code != nil {
			got = fmt.Sprint(*code)
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
