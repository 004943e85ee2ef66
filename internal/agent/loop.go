package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/tools"
)

// Stop says why the loop ended.
type Stop string

// Reasons the loop ends.
const (
	StopFinal        Stop = "final_answer"
	StopMaxTurns     Stop = "max_turns"
	StopMaxToolCalls Stop = "max_tool_calls"
	StopAskUser      Stop = "ask_user"
	StopInterrupted  Stop = "interrupted"
	StopBound        Stop = "workspace_bound"
	StopError        Stop = "error"
)

// Question is the question of an ask_user call's arguments ("" when they
// hold none).
func Question(args string) string {
	var a struct {
		Question string `json:"question"`
	}
	json.Unmarshal([]byte(args), &a)
	return a.Question
}

// CodeTokensExceeded is the failure code of a loop stopped by max_tokens
// or max_cost_usd.
const CodeTokensExceeded = "bound_exceeded"

// AskUserTool is the tool the agent yields a question with.
const AskUserTool = "ask_user"

// maxMalformed is how many tool-call rounds in a row may be malformed (invalid
// JSON arguments, unknown tools) before the loop gives up on the model.
const maxMalformed = 3

// Config is what one run of the loop needs.
type Config struct {
	Model        model.Completer
	Tools        *tools.Toolbox
	Approver     Approver // nil denies every gated call (fail closed)
	MaxTurns     int
	MaxToolCalls int
	MaxTokens    int64 // the tokens the replies may report in this loop; 0 no limit, negative none left
	// MaxCostUSD is what the replies may cost in this loop at Price; 0 no
	// limit, negative nothing left.
	MaxCostUSD float64
	Price      pricing.Price
	Stream     bool
	// Pending are tool calls of the history's last assistant message that
	// have no result yet (a run resumed after a restart): they are run —
	// gated ones asked about again — before the model is called.
	Pending []model.ToolCall
	// Emit receives every event as it happens (bundle.ModelRequestEvent,
	// bundle.ToolResultEvent, …). It must not block for long.
	Emit func(bundle.EventData)
	// Progress, when set, receives the conversation each time it grows by
	// a model's message or a tool's result (a run writes its transcript so
	// far, so that a page shows the call that is running). It is called
	// from the loop's goroutine and must not keep the slice.
	Progress func([]model.Message)
}

// Outcome is how the loop ended and the conversation so far.
type Outcome struct {
	Messages  []model.Message
	Final     string // the final answer, on StopFinal
	Stop      Stop
	Question  string // on StopAskUser
	Usage     model.Usage
	Calls     int // model calls
	ToolCalls int
	Err       error // on StopError and StopBound: what went wrong
	// Bound is the bound that stopped the loop before a model call:
	// "max_tokens" or "max_cost_usd" ("" none).
	Bound string
}

// Specs are the tools offered to the model: the workspace tools and ask_user.
func Specs() []model.ToolSpec {
	return append(tools.Specs(), model.ToolSpec{
		Name:        AskUserTool,
		Description: "Ask the user a question and end your turn; the answer comes in the next user message. Use it only when you cannot go on without the answer.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"],"additionalProperties":false}`),
	})
}

// Run continues the conversation history (which ends with a user message)
// until the agent answers, asks, or is stopped.
func Run(ctx context.Context, cfg Config, history []model.Message) Outcome {
	emit := cfg.Emit
	if emit == nil {
		emit = func(bundle.EventData) {}
	}
	out := Outcome{Messages: slices.Clone(history)}
	specs := Specs()
	names := map[string]bool{}
	for _, s := range specs {
		names[s.Name] = true
	}
	malformed := 0
	if len(cfg.Pending) > 0 {
		if stop, _ := runCalls(ctx, cfg, cfg.Pending, specs, names, &out, emit); stop != "" || ctx.Err() != nil {
			out.Stop = cmp.Or(stop, StopInterrupted)
			return out
		}
	}
	for turn := 1; ; turn++ {
		if ctx.Err() != nil {
			out.Stop = StopInterrupted
			return out
		}
		if cfg.MaxTurns > 0 && turn > cfg.MaxTurns {
			out.Stop = StopMaxTurns
			out.Err = fmt.Errorf("the agent used all %d turns (max_turns) without a final answer", cfg.MaxTurns)
			return out
		}
		if cfg.MaxTokens != 0 && out.Usage.TotalTokens >= cfg.MaxTokens {
			out.Stop, out.Bound = StopError, "max_tokens"
			out.Err = &model.Error{Domain: model.DomainAgent, Code: CodeTokensExceeded,
				Message: fmt.Sprintf("the replies reported %d tokens, past the run's bound max_tokens", out.Usage.TotalTokens)}
			return out
		}
		if spent := bounds.Cost(cfg.Price, out.Usage); cfg.MaxCostUSD != 0 && spent >= cfg.MaxCostUSD {
			out.Stop, out.Bound = StopError, "max_cost_usd"
			out.Err = &model.Error{Domain: model.DomainAgent, Code: CodeTokensExceeded,
				Message: fmt.Sprintf("the replies cost %s, past the run's bound max_cost_usd", pricing.Format(spent, true))}
			return out
		}
		emit(bundle.ModelRequestEvent{Turn: turn, Messages: len(out.Messages)})
		sent := time.Now()
		resp, err := cfg.Model.Complete(ctx, model.Request{Messages: out.Messages, Tools: specs, Stream: cfg.Stream})
		out.Calls++
		if ctx.Err() != nil {
			out.Stop = StopInterrupted
			return out
		}
		if err != nil {
			out.Stop, out.Err = StopError, err
			ev := bundle.ModelErrorEvent{Turn: turn, Error: err.Error()}
			if me, ok := model.AsError(err); ok {
				ev.Domain, ev.Code = string(me.Domain), me.Code
			}
			emit(ev)
			return out
		}
		out.Usage.Add(resp.Usage)
		emit(bundle.ModelResponseEvent{Turn: turn, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
			CacheReadTokens: resp.Usage.CacheReadTokens, CacheWriteTokens: resp.Usage.CacheWriteTokens, ToolCalls: len(resp.Message.ToolCalls), FinishReason: resp.FinishReason,
			DurationMS: time.Since(sent).Milliseconds()})
		msg := resp.Message
		msg.Role = model.RoleAssistant
		out.Messages = append(out.Messages, msg)
		progress(cfg, out.Messages)
		if len(msg.ToolCalls) == 0 {
			out.Stop, out.Final = StopFinal, msg.Content
			return out
		}

		stopAfter, roundMalformed := runCalls(ctx, cfg, msg.ToolCalls, specs, names, &out, emit)
		if roundMalformed {
			malformed++
			if malformed >= maxMalformed {
				out.Stop = StopError
				out.Err = &model.Error{Domain: model.DomainAgent, Code: "malformed_tool_calls",
					Message: fmt.Sprintf("the model sent malformed tool calls (invalid JSON arguments or unknown tools) %d turns in a row", malformed)}
				return out
			}
		} else {
			malformed = 0
		}
		if ctx.Err() != nil {
			out.Stop = StopInterrupted
			return out
		}
		if stopAfter != "" {
			out.Stop = stopAfter
			return out
		}
	}
}

// runCalls runs one turn's tool calls in order, adding their results to
// out. It returns the stop the turn ends with ("" to go on) and whether
// every call was malformed (invalid JSON arguments or an unknown tool).
func runCalls(ctx context.Context, cfg Config, calls []model.ToolCall, specs []model.ToolSpec, names map[string]bool, out *Outcome, emit func(bundle.EventData)) (stopAfter Stop, roundMalformed bool) {
	roundMalformed = true
	for _, call := range calls {
		if stopAfter == StopMaxToolCalls || stopAfter == StopBound || stopAfter == StopError || ctx.Err() != nil {
			out.Messages = append(out.Messages, toolMessage(call, "not run: the run is stopping"))
			continue
		}
		if cfg.MaxToolCalls > 0 && out.ToolCalls >= cfg.MaxToolCalls {
			stopAfter = StopMaxToolCalls
			out.Err = fmt.Errorf("the agent made %d tool calls (max_tool_calls) without a final answer", cfg.MaxToolCalls)
			out.Messages = append(out.Messages, toolMessage(call, "not run: max_tool_calls reached"))
			continue
		}
		out.ToolCalls++
		emit(bundle.ToolCallEvent{ID: call.ID, Name: call.Name, Args: EventArgs(call.Arguments)})
		result, isErr := "", true
		switch {
		case !names[call.Name]:
			result = fmt.Sprintf("error: unknown tool %q; the tools are: %s", call.Name, strings.Join(toolNames(specs), ", "))
		case !json.Valid([]byte(orEmptyObject(call.Arguments))):
			result = fmt.Sprintf("error: the arguments of %s are not valid JSON: %s", call.Name, clip.Head(call.Arguments, 200))
		case call.Name == AskUserTool:
			roundMalformed = false
			q := Question(call.Arguments)
			if strings.TrimSpace(q) == "" {
				result = "error: question: missing"
				break
			}
			out.Question = q
			stopAfter = StopAskUser
			result, isErr = "the question was sent to the user; their answer comes in the next message", false
			emit(bundle.AgentQuestionEvent{ID: call.ID, Question: q})
		default:
			roundMalformed = false
			r := runTool(ctx, cfg, call, emit)
			result, isErr = r.Output, r.IsError
			switch {
			case stopAfter != "":
			case r.Harness != nil:
				stopAfter, out.Err = StopError, r.Harness
			case r.Bound != nil:
				stopAfter, out.Err = StopBound, r.Bound
			}
		}
		emit(bundle.ToolResultEvent{ID: call.ID, Name: call.Name, OK: !isErr, Chars: len([]rune(result)), Exit: intent.For(intent.Native).Exit(call.Name, result, isErr)})
		out.Messages = append(out.Messages, toolMessage(call, result))
		progress(cfg, out.Messages)
	}
	return stopAfter, roundMalformed
}

// progress tells cfg.Progress of the conversation so far.
func progress(cfg Config, msgs []model.Message) {
	if cfg.Progress != nil {
		cfg.Progress(msgs)
	}
}

// runTool asks for approval when the tool is gated, then runs it: the
// text for the model, whether it is an error, and a workspace bound the
// call breached or a sandbox that could not start it.
func runTool(ctx context.Context, cfg Config, call model.ToolCall, emit func(bundle.EventData)) tools.Result {
	if tools.Gated(call.Name) {
		d := Decide(ctx, cfg.Approver, ApprovalRequest{CallID: call.ID, Tool: call.Name, Args: call.Arguments}, emit)
		if !d.Approved {
			if ctx.Err() != nil {
				return tools.Result{Output: "not run: the run was interrupted", IsError: true}
			}
			return tools.Result{Output: DeniedText(call.Name, d), IsError: true}
		}
	}
	if !tools.Gated(call.Name) { // only a command writes output as it runs
		return cfg.Tools.Run(ctx, call.Name, call.Arguments, nil)
	}
	out := newOutputStream(call.ID, emit)
	r := cfg.Tools.Run(ctx, call.Name, call.Arguments, out)
	out.Close()
	return r
}

// Decide asks the approver about a gated call, failing closed (no approver,
// or one that fails, denies), and emits the request and the decision.
func Decide(ctx context.Context, a Approver, req ApprovalRequest, emit func(bundle.EventData)) Decision {
	emit(bundle.ApprovalRequestedEvent{ID: req.CallID, Tool: req.Tool, Args: EventArgs(req.Args)})
	var d Decision
	var err error
	if a == nil {
		d = Decision{By: "none", Reason: "no approver is configured, so gated tools are denied (fail closed)"}
	} else if d, err = a.Approve(ctx, req); err != nil {
		d = Decision{By: "error", Reason: "the approver failed, so the call is denied: " + err.Error()}
	}
	emit(bundle.ApprovalDecidedEvent{ID: req.CallID, Approved: d.Approved, By: d.By, Reason: d.Reason})
	return d
}

// DeniedText is what the model is told about a denied call.
func DeniedText(tool string, d Decision) string {
	return fmt.Sprintf("error: %s was denied by %s: %s", tool, d.By, d.Reason)
}

func toolMessage(call model.ToolCall, content string) model.Message {
	return model.Message{Role: model.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content}
}

func toolNames(specs []model.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func orEmptyObject(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// EventArgs is a tool call's arguments as JSON when they are valid, else as
// text, with long values shortened so events stay small.
func EventArgs(args string) json.RawMessage {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		out, _ := bundle.PlainJSON(clip.Head(args, 300))
		return out
	}
	for k, val := range v {
		if s, ok := val.(string); ok && len(s) > 300 {
			v[k] = clip.Head(s, 300)
		}
	}
	out, _ := bundle.PlainJSON(v)
	return out
}
