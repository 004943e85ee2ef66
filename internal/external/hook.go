package external

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/proctor-dev/proctor/internal/intent"
)

// HookKinds are the agents whose permission hook proctor answers.
func HookKinds() []string { return []string{KindCodex, KindClaude, KindGemini, KindQwen, KindCopilot} }

// Hook is `proctor agent-hook KIND`, the hook proctor writes into the
// settings of an agent that offers one before its commands run (Claude
// Code's and Qwen Code's PreToolUse, Gemini CLI's BeforeTool): it reads the
// tool call the agent is about to make from in, asks the run's approvals
// through the proxy (POST $OPENAI_BASE_URL/proctor/approvals; a command as
// run_command, as proctor's rules and pages name it), waiting for the rules
// or a person on the run page, and writes the decision to out as the agent
// reads it. Anything that goes wrong denies the call (fail closed), with
// the reason.
func Hook(ctx context.Context, kind string, in io.Reader, out io.Writer, getenv func(string) string) error {
	decide := func(allow bool, reason string) error {
		d := "deny"
		if allow {
			d = "allow"
		}
		switch {
		case kind == KindGemini:
			return json.NewEncoder(out).Encode(map[string]any{"decision": d, "reason": reason})
		case kind == KindCopilot && allow:
			return nil // no decision: the call goes on (Copilot CLI may ask again of an "allow")
		case kind == KindCopilot:
			return json.NewEncoder(out).Encode(map[string]any{"permissionDecision": d, "permissionDecisionReason": reason})
		case kind == KindCodex && allow:
			return nil // Codex takes no "allow" from a PreToolUse hook: saying nothing lets the command run
		}
		return json.NewEncoder(out).Encode(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": d, "permissionDecisionReason": reason}})
	}
	var call struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
		ToolUseID string          `json:"tool_use_id"`
		// Copilot CLI's names of the same.
		CopilotName string          `json:"toolName"`
		CopilotArgs json.RawMessage `json:"toolArgs"`
	}
	if err := json.NewDecoder(io.LimitReader(in, 8<<20)).Decode(&call); err != nil {
		return decide(false, "proctor could not read the tool call from the agent: "+err.Error())
	}
	if kind == KindCopilot {
		call.ToolName, call.ToolInput = call.CopilotName, call.CopilotArgs
		if call.ToolName != "bash" {
			return decide(true, "") // its file tools: proctor's approvals gate commands (the diff is reviewed)
		}
	}
	tool, args := call.ToolName, string(call.ToolInput)
	if call.ToolName == "Bash" || call.ToolName == "run_shell_command" || (kind == KindCopilot && call.ToolName == "bash") {
		var input struct {
			Command string `json:"command"`
		}
		json.Unmarshal(call.ToolInput, &input)
		if kind == KindCodex && (intent.IsPatchCommand(input.Command) || intent.IsReadCommand(input.Command)) {
			// Codex's way to read a file (cat) or write one (a patch it
			// applies itself): a file tool's call, which proctor's
			// approvals do not gate, as they do not gate read_file or
			// edit_file (the diff is reviewed).
			return decide(true, "")
		}
		a, _ := json.Marshal(map[string]string{"command": input.Command})
		tool, args = "run_command", string(a) // as proctor's rules and pages name a command
	}
	body, _ := json.Marshal(map[string]string{"call_id": call.ToolUseID, "tool": tool, "arguments": args})
	ctx, cancel := context.WithTimeout(ctx, 24*time.Hour) // a person may take a while; Claude Code's own timeout is the hook's
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, getenv("OPENAI_BASE_URL")+"/proctor/approvals", bytes.NewReader(body))
	if err != nil {
		return decide(false, "proctor's approvals cannot be asked: "+err.Error())
	}
	req.Header.Set("Authorization", "Bearer "+getenv("OPENAI_API_KEY"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return decide(false, "proctor's approvals did not answer: "+err.Error())
	}
	defer resp.Body.Close()
	var d struct {
		Approved bool   `json:"approved"`
		By       string `json:"by"`
		Reason   string `json:"reason"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&d) != nil {
		return decide(false, fmt.Sprintf("proctor's approvals answered HTTP %d", resp.StatusCode))
	}
	reason := fmt.Sprintf("proctor: %s by %s", map[bool]string{true: "approved", false: "denied"}[d.Approved], d.By)
	if d.Reason != "" {
		reason += ": " + d.Reason
	}
	return decide(d.Approved, reason)
}
