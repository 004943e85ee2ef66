package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/bounds"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// errWallClock is the cause of a conversation stopped by its wall_clock_s
// budget.
var errWallClock = errors.New("wall clock budget exceeded")

// converse plays the turns through the agent loop. After each reply it
// answers, in this order: a yielded question (with the yield reply, up to
// its budget), a turn that stopped on a bound (with the continue message,
// up to its budget); otherwise it plays the next turn. (Gated tool calls are
// decided inside the loop by the approver.) max_messages and wall_clock_s
// abort the conversation and name the budget.
func (l *live) converse(ctx context.Context, cfg agent.Config, history []model.Message) agent.Outcome {
	conv := l.spec.Conversation
	if conv.WallClock > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, conv.WallClock, errWallClock)
		defer cancel()
	}
	turns := append([]string{l.spec.Task}, l.spec.Turns...)
	total := agent.Outcome{Messages: history}
	yields, continues := 0, 0
	add := func(res agent.Outcome) {
		total.Messages = res.Messages
		total.Usage.Add(res.Usage)
		total.Calls += res.Calls
		total.ToolCalls += res.ToolCalls
		total.Stop, total.Final, total.Question, total.Err = res.Stop, res.Final, res.Question, res.Err
	}
	for i := 0; i < len(turns); i++ {
		l.rec.event(bundle.ConversationTurnEvent{Turn: i + 1, Of: len(turns)})
		msgs := append(total.Messages, model.Message{Role: model.RoleUser, Content: turns[i]})
		if i == 0 && l.spec.Resumes != "" {
			msgs = total.Messages // a resumed run goes on from its conversation: the task is in it
		}
		for {
			c := cfg
			if conv.MaxMessages > 0 {
				left := conv.MaxMessages - total.Calls
				if left <= 0 {
					l.abort(fmt.Sprintf("max_messages=%d", conv.MaxMessages))
					return total
				}
				if c.MaxTurns == 0 || left < c.MaxTurns {
					c.MaxTurns = left
				}
			}
			if limit := l.spec.Bounds.MaxTokens; limit > 0 {
				if c.MaxTokens = limit - total.Usage.TotalTokens; c.MaxTokens <= 0 {
					c.MaxTokens = -1 // spent: the loop stops before its first call
				}
			}
			if limit := l.spec.Bounds.MaxCostUSD; limit > 0 {
				if c.MaxCostUSD = limit - bounds.Cost(c.Price, total.Usage); c.MaxCostUSD <= 0 {
					c.MaxCostUSD = -1
				}
			}
			res := agent.Run(ctx, c, msgs)
			cfg.Pending = nil // run once, in the first loop
			add(res)
			switch res.Bound {
			case "max_tokens":
				l.abort(fmt.Sprintf("max_tokens=%d", l.spec.Bounds.MaxTokens))
				return total
			case "max_cost_usd":
				l.abort(fmt.Sprintf("max_cost_usd=%g", l.spec.Bounds.MaxCostUSD))
				return total
			}
			msgs = total.Messages
			switch {
			case res.Stop == agent.StopInterrupted && errors.Is(context.Cause(ctx), errWallClock):
				l.abort(fmt.Sprintf("wall_clock_s=%d", int(conv.WallClock.Seconds())))
				return total
			case res.Stop == agent.StopAskUser && yields < conv.MaxYieldReplies && conv.YieldReply != "":
				yields++
				l.rec.event(bundle.ConversationYieldReplyEvent{Question: res.Question, Reply: conv.YieldReply, N: yields})
				msgs = append(msgs, model.Message{Role: model.RoleUser, Content: conv.YieldReply})
				continue
			case res.Stop == agent.StopMaxTurns && conv.MaxMessages > 0 && total.Calls >= conv.MaxMessages:
				l.abort(fmt.Sprintf("max_messages=%d", conv.MaxMessages))
				return total
			case (res.Stop == agent.StopMaxTurns || res.Stop == agent.StopMaxToolCalls) && continues < conv.MaxContinues:
				continues++
				msg := conv.Continue
				if msg == "" {
					msg = "Please continue."
				}
				l.rec.event(bundle.ConversationContinueEvent{After: string(res.Stop), N: continues})
				msgs = append(msgs, model.Message{Role: model.RoleUser, Content: msg})
				continue
			case res.Stop == agent.StopFinal:
			default:
				return total
			}
			break
		}
	}
	return total
}

func (l *live) abort(budget string) {
	if l.aborted == "" {
		l.aborted = budget
		l.rec.event(bundle.ConversationAbortedEvent{Budget: budget})
		l.progress("  budget exceeded: %s", budget)
	}
}

// judge runs the scenario's checks on the finished workspace and writes
// verdict.json. An aborted or failed conversation is judged all the same.
func (l *live) judge(ctx context.Context, ws *workspace.Workspace, res agent.Outcome) outcome {
	out := outcome{loop: &res}
	if res.Stop == agent.StopInterrupted && l.aborted == "" {
		out.status, out.errText = bundle.StatusInterrupted, "Run interrupted."
		return out
	}
	l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageChecking, Checks: len(l.spec.ScenarioChecks)})
	results := check.Run(ctx, l.spec.ScenarioChecks, check.Input{Workspace: ws.Dir, RunDir: l.dir, Changed: l.receipt.Changed,
		Final: lastAssistant(res.Messages), Calls: l.calls.List(), Tools: l.spec.Agent.Intents(), Questions: l.asked, Aborted: l.aborted, Env: l.env(ws.Dir), Confine: l.confine(ws.Dir, nil)})
	for i := range results {
		// A check's output (a command's, an executable's) may print a
		// secret; the verdict is stored, printed and shown.
		results[i].Detail = l.redact.String(results[i].Detail)
	}
	v := &bundle.Verdict{Schema: bundle.VerdictSchema, Passed: true, Results: results, Aborted: l.aborted,
		Exchanges: res.Calls, ScenarioFile: l.spec.ScenarioFile, RunDir: l.dir}
	if l.spec.Scenario != nil {
		v.Scenario = l.spec.Scenario.ID
	}
	var failed, broken []string
	for _, r := range results {
		l.rec.event(bundle.CheckResultEvent{Phase: r.Phase, Name: r.Name, Passed: r.Passed, Broken: r.Broken})
		mark := "PASS"
		switch {
		case r.Broken:
			mark = "BROKEN"
			broken = append(broken, r.Name)
		case !r.Passed:
			mark = "FAIL"
			failed = append(failed, r.Name)
		}
		if !r.Passed && v.FirstFailure == "" {
			v.FirstFailure = r.Name
		}
		first, _, _ := strings.Cut(r.Detail, "\n")
		l.progress("    %s %s.%s: %s", mark, r.Phase, r.Name, first)
	}
	switch {
	case res.Stop == agent.StopError:
		domain, code, err, _ := loopError(res.Err)
		o := l.fail(ctx, domain, code, err, false)
		o.loop = &res
		out = o
	case len(broken) > 0:
		o := l.fail(ctx, bundle.DomainCheck, "check_broken", fmt.Errorf("broken check(s): %s — the scenario's checks could not judge; fix them", strings.Join(broken, ", ")), false)
		o.status, o.loop = bundle.StatusError, &res
		out = o
	case len(failed) > 0 || l.aborted != "":
		reason := fmt.Sprintf("failed check(s): %s", strings.Join(failed, ", "))
		if l.aborted != "" {
			reason = "budget exceeded: " + l.aborted
			if len(failed) > 0 {
				reason += "; " + fmt.Sprintf("failed check(s): %s", strings.Join(failed, ", "))
			}
		}
		o := l.fail(ctx, bundle.DomainAgent, "checks_failed", errors.New(reason), false)
		o.loop = &res
		out = o
	default:
		out.status = bundle.StatusPassed
	}
	v.Passed = out.status == bundle.StatusPassed
	if err := v.Validate(filepath.Join(l.dir, bundle.VerdictFile)); err != nil {
		l.progress("  warning: %v", err)
	} else if err := l.rec.jsonFile(bundle.VerdictFile, v); err != nil {
		l.progress("  warning: %v", err)
	}
	l.verdict = v
	return out
}

func lastAssistant(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant && msgs[i].Content != "" {
			return msgs[i].Content
		}
	}
	return ""
}

// env is the environment of tools and checks.
func (l *live) env(workspace string) []string {
	if l.envFor == workspace && l.envCache != nil {
		return l.envCache
	}
	env := scrubbedEnv(l.r.Environ, workspace)
	if l.spec.Env != nil {
		env = append(append([]string{}, l.spec.Env...), "PROCTOR_WORKSPACE="+workspace)
	}
	names, keys := l.spec.modelKeys()
	l.envCache = l.sandboxEnv(withoutKeys(env, append(names, l.r.KeyEnvNames...), keys))
	l.envFor = workspace
	return l.envCache
}
