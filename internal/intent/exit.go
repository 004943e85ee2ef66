package intent

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Killed is the exit status of a command stopped by a signal or a time
// limit.
const Killed = -1

// Exit is the exit status of the command a call of tool ran, as the
// agent told its model in the call's result (isError: the agent marked
// the result a failure); nil when the result does not say. Each agent
// words it its own way, so the result is read as the table's agent words
// it (For), never by the tool's name alone: Copilot CLI's bash and
// opencode's share a name, and a command's output under opencode could
// otherwise end with the line Copilot CLI's results end with.
//
//   - proctor's run_command: a first line "exit N" ("killed after …");
//   - Claude Code's Bash: a first line "Exit code N" when it is not 0, and
//     a result not marked an error when it is;
//   - Codex's exec_command and shell: "Process exited with code N" before
//     the output ("Process running with session ID …": not ended yet);
//   - Gemini CLI's and Qwen Code's run_shell_command: a trailer of fields
//     after the output ("Exit Code: N", "Signal: …", "Error: …", "Process
//     Group PGID: …"), read from the end, so no output can forge it;
//   - Copilot CLI's bash: a last line "<shellId: ID completed with exit
//     code N>" after the output;
//   - Continue CLI's Bash: "Error executing tool Bash: Error (exit code
//     N): …" when it is not 0, the output alone when it is;
//   - Cline's run_commands: a JSON list of each command's success, and
//     "Command exited with code N" when it failed;
//   - opencode's bash says nothing of it to the model (its plugin tells
//     proctor; internal/external).
//
// An agents.yaml entry's own command tool is read with the pattern the
// entry gives. A result that is none of these (a call refused before it
// ran, an agent that changed its wording, an agent proctor does not know)
// is not known: a check that needs the command to have succeeded does not
// take it as a success.
func (tb Table) Exit(tool, result string, isError bool) *int {
	for _, t := range tb.own {
		if t.Name == tool && t.Kind == Run && t.ExitCode != nil {
			if m := t.ExitCode.FindStringSubmatch(result); len(m) > 1 {
				if code, ok := number(m[1], true); ok {
					return &code
				}
			}
			return nil
		}
	}
	if tool == pollTool && tb.agent == "codex" {
		tool = "exec_command" // it answers as the command it waited on
	}
	for _, t := range all() {
		if t.Name == tool && t.said != nil && t.of(tb.agent) {
			if code, ok := t.said(result, isError); ok {
				return &code
			}
			return nil
		}
	}
	return nil
}

// nativeExit reads proctor's run_command.
func nativeExit(result string, _ bool) (int, bool) {
	first, _, _ := strings.Cut(result, "\n")
	if strings.HasPrefix(first, "killed after") {
		return Killed, true
	}
	return number(strings.CutPrefix(first, "exit "))
}

// claudeExit reads Claude Code's Bash.
func claudeExit(result string, isError bool) (int, bool) {
	first, _, _ := strings.Cut(result, "\n")
	if rest, ok := strings.CutPrefix(first, "Exit code "); ok {
		return number(rest, true)
	}
	return 0, !isError
}

// continueExit reads Continue CLI's Bash.
func continueExit(result string, isError bool) (int, bool) {
	first, _, _ := strings.Cut(result, "\n")
	if m := continueCode.FindStringSubmatch(first); m != nil {
		return number(m[1], true)
	}
	if strings.HasPrefix(first, "Error executing tool") {
		return 0, false // it did not run, or did not end
	}
	return 0, !isError
}

// codexExit reads Codex's exec_command, shell and write_stdin.
func codexExit(result string, _ bool) (int, bool) {
	head, _, _ := strings.Cut(result, "\nOutput:")
	if m := codexCode.FindStringSubmatch(head); m != nil {
		return number(m[1], true)
	}
	return 0, false
}

// copilotExit reads Copilot CLI's bash: its last line.
func copilotExit(result string, _ bool) (int, bool) {
	lines := strings.Split(strings.TrimRight(result, "\n"), "\n")
	if m := copilotCode.FindStringSubmatch(lines[len(lines)-1]); m != nil {
		return number(m[1], true)
	}
	return 0, false
}

var (
	continueCode = regexp.MustCompile(`^Error executing tool Bash: Error \(exit code (-?\d+)\)`)
	clineCode    = regexp.MustCompile(`^(?:\[)?Command exited with code (-?\d+)`)
	copilotCode  = regexp.MustCompile(`^<shellId: \S+ completed with exit code (-?\d+)>$`)
	codexCode    = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$`)
	codexRunning = regexp.MustCompile(`(?m)^Process running with session ID (\d+)$`)
)

// Codex answers a command that has not ended when it stops waiting (30 s
// at most) with "Process running with session ID N"; its model waits for
// the rest with write_stdin, writing nothing, in that session.
const pollTool = "write_stdin"

// Running is the session of a command that Codex's result of a call of
// tool (exec_command, or a write_stdin that waited on it) says is still
// running.
func Running(tool, result string) (int, bool) {
	if tool != "exec_command" && tool != pollTool {
		return 0, false
	}
	head, _, _ := strings.Cut(result, "\nOutput:")
	if m := codexRunning.FindStringSubmatch(head); m != nil {
		return number(m[1], true)
	}
	return 0, false
}

// Poll is the call that waits for the command running in Codex's session:
// write_stdin writing nothing, for as long as Codex lets one wait (5 min),
// answered as soon as the command ends.
func Poll(session int) (name string, args map[string]any) {
	return pollTool, map[string]any{"session_id": session, "chars": "", "yield_time_ms": 300000}
}

// Polled is the session a call of tool with args waits on, when it is a
// Poll.
func Polled(tool, args string) (int, bool) {
	if tool != pollTool {
		return 0, false
	}
	var a struct {
		SessionID *int `json:"session_id"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.SessionID == nil {
		return 0, false
	}
	return *a.SessionID, true
}

// clineExit reads Cline's result of run_commands: a JSON list, one entry
// a command, each saying whether it succeeded and, when not, "Command
// exited with code N". The call's exit is its first command that failed,
// else 0; a command whose end is not said makes it unknown.
func clineExit(result string, _ bool) (int, bool) {
	var cmds []struct {
		Result  string `json:"result"`
		Error   string `json:"error"`
		Success *bool  `json:"success"`
	}
	if json.Unmarshal([]byte(result), &cmds) != nil || len(cmds) == 0 {
		return 0, false
	}
	for _, c := range cmds {
		switch {
		case c.Success == nil:
			return 0, false
		case *c.Success:
			continue
		}
		if m := clineCode.FindStringSubmatch(c.Error); m != nil {
			return number(m[1], true)
		}
		return 0, false
	}
	return 0, true
}

// shellTrailer reads Gemini CLI's and Qwen Code's result of a command:
// its last lines are "Field: value" lines after the output, "(none)" for
// a field with nothing to say. The trailer always ends with the process
// group; without one the result is not a command's.
func shellTrailer(result string, isError bool) (int, bool) {
	if isError {
		return 0, false
	}
	lines := strings.Split(strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(result), "</untrusted_context>"), "\n"), "\n")
	fields := map[string]string{}
	for i := len(lines) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(lines[i], ": ")
		if !ok || !trailerFields[k] {
			break
		}
		if _, seen := fields[k]; seen {
			break
		}
		fields[k] = strings.TrimSpace(v)
	}
	if _, ok := fields["Process Group PGID"]; !ok {
		return 0, false
	}
	set := func(k string) bool { v, ok := fields[k]; return ok && v != "(none)" && v != "" }
	switch {
	case set("Exit Code"):
		return number(fields["Exit Code"], true)
	case set("Signal"):
		return Killed, true
	case set("Error"):
		return 0, false // it could not be started
	}
	return 0, true
}

var trailerFields = map[string]bool{"Error": true, "Exit Code": true, "Signal": true, "Background PIDs": true, "Process Group PGID": true}

func number(s string, ok bool) (int, bool) {
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}
