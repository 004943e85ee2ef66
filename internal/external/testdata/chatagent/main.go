// chatagent is a small coding agent for proctor's tests, a process of its
// own that proctor runs as an agent command: it drives Chat Completions with
// the official openai-go SDK (streamed, with parallel tool calls and
// content-part arrays) and offers the model proctor's own tools
// (internal/tools, and ask_user), so that proctor's scenarios can run with
// it as with the native agent. The SDK reads OPENAI_BASE_URL and
// OPENAI_API_KEY; the model is OPENAI_MODEL.
//
//	chatagent TASK             start a conversation
//	chatagent --resume MESSAGE continue it (a next turn, or the answer to its question)
//
// It keeps its conversation in $PROCTOR_AGENT_HOME/chatagent.json. A call of
// ask_user ends its turn: it prints the question and exits 0; with
// CHATAGENT_NO_ASK=1 it offers no ask_user, as no agent but proctor's own
// does. Before a gated
// tool (run_command) it asks proctor through POST /v1/proctor/approvals.
// With CHATAGENT_SHELL=1 its command tool is an agent's own that proctor
// does not know: "shell", its commands a list ("cmd": ["…"]), its result
// the output and then "status: N" — an agents.yaml entry names it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/tools"
)

// message is one message of the conversation as the agent keeps it.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct{ ID, Name, Arguments string }

const asked = "the question was sent to the user; their answer comes in the next message"

func main() {
	args := os.Args[1:]
	resume := len(args) == 2 && args[0] == "--resume"
	if resume {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: chatagent [--resume] TASK")
		os.Exit(2)
	}
	if err := run(context.Background(), args[0], resume); err != nil {
		fmt.Fprintln(os.Stderr, "chatagent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, task string, resume bool) error {
	state := filepath.Join(os.Getenv("PROCTOR_AGENT_HOME"), "chatagent.json")
	msgs := []message{{Role: "system", Content: "You are a coding agent. Use the tools."}}
	if resume {
		data, err := os.ReadFile(state)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--resume: no conversation in %s", state)
		}
		if err != nil || json.Unmarshal(data, &msgs) != nil {
			return fmt.Errorf("--resume: cannot read %s: %v", state, err)
		}
	}
	msgs = append(msgs, message{Role: "user", Content: task})
	tb, err := tools.New(".", tools.Limits{MaxToolOutputChars: 20000, MaxFiles: 10000, MaxWorkspaceBytes: 512 << 20, MaxFileBytes: 4 << 20}, os.Environ())
	if err != nil {
		return err
	}
	defer tb.Close()
	client := openai.NewClient()
	defer func() { save(state, msgs) }()
	for turn := 1; turn <= 30; turn++ {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: os.Getenv("OPENAI_MODEL"), Messages: params(msgs), Tools: specs(), ParallelToolCalls: openai.Bool(true),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		if len(acc.Choices) == 0 {
			return fmt.Errorf("turn %d: no choices", turn)
		}
		reply := acc.Choices[0].Message
		m := message{Role: "assistant", Content: reply.Content}
		for _, c := range reply.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, toolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		msgs = append(msgs, m)
		if len(m.ToolCalls) == 0 {
			fmt.Println("final:", m.Content)
			return nil
		}
		question := ""
		for _, c := range m.ToolCalls {
			out := asked
			if c.Name == agent.AskUserTool {
				var a struct{ Question string }
				json.Unmarshal([]byte(c.Arguments), &a)
				question = a.Question
			} else if c.Name == "shell" {
				out = shell(ctx, tb, c.Arguments)
			} else if d := approve(ctx, client, c); tools.Gated(c.Name) && !d.Approved {
				out = agent.DeniedText(c.Name, agent.Decision{Approved: false, By: d.By, Reason: d.Reason})
			} else {
				out = tb.Run(ctx, c.Name, c.Arguments, nil).Output
			}
			fmt.Printf("tool %s %s -> %s\n", c.Name, c.Arguments, out)
			msgs = append(msgs, message{Role: "tool", Content: out, ToolCallID: c.ID})
		}
		if question != "" {
			fmt.Println("question:", question)
			return nil
		}
	}
	return fmt.Errorf("no final answer in 30 turns")
}

// shell runs the first of a shell call's commands with run_command, and
// answers as such an agent would: the output, then "status: N".
func shell(ctx context.Context, tb *tools.Toolbox, args string) string {
	var a struct{ Cmd []string }
	if json.Unmarshal([]byte(args), &a) != nil || len(a.Cmd) == 0 {
		return "shell: want {\"cmd\": [\"command\"]}"
	}
	run, _ := json.Marshal(map[string]string{"command": a.Cmd[0]})
	out := tb.Run(ctx, "run_command", string(run), nil).Output
	head, rest, _ := strings.Cut(out, "\n")
	return rest + "\nstatus: " + strings.TrimPrefix(head, "exit ")
}

// decision is proctor's answer to POST /v1/proctor/approvals.
type decision struct {
	Approved   bool
	By, Reason string
}

// approve asks proctor, through its model proxy, whether a gated call may
// run (the answer may wait for a person); other calls need no answer.
func approve(ctx context.Context, client openai.Client, c toolCall) decision {
	if !tools.Gated(c.Name) {
		return decision{Approved: true}
	}
	var d decision
	body := map[string]string{"call_id": c.ID, "tool": c.Name, "arguments": c.Arguments}
	if err := client.Post(ctx, "proctor/approvals", body, &d); err != nil {
		return decision{By: "chatagent", Reason: "proctor could not be asked: " + err.Error()}
	}
	return d
}

func save(path string, msgs []message) {
	if data, err := json.Marshal(msgs); err == nil && os.Getenv("PROCTOR_AGENT_HOME") != "" {
		os.WriteFile(path, data, 0o600)
	}
}

// params are the messages as the SDK sends them: system, user and tool
// messages as content-part arrays.
func params(msgs []message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	for _, m := range msgs {
		switch m.Role {
		case "system":
			out = append(out, openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{Text: m.Content}}))
		case "user":
			out = append(out, openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}))
		case "tool":
			out = append(out, openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: m.Content}}, m.ToolCallID))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}

// specs are proctor's agent tools, as function tools.
func specs() []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, s := range agent.Specs() {
		if s.Name == agent.AskUserTool && os.Getenv("CHATAGENT_NO_ASK") == "1" {
			continue
		}
		if s.Name == "run_command" && os.Getenv("CHATAGENT_SHELL") == "1" {
			s.Name, s.Parameters = "shell", json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"array","items":{"type":"string"}}},"required":["cmd"]}`)
		}
		var p shared.FunctionParameters
		json.Unmarshal(s.Parameters, &p)
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: s.Name, Description: openai.String(s.Description), Parameters: p}))
	}
	return out
}
