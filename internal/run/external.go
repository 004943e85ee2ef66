package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/proxy"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// runExternal lets an external agent do the run's work: it talks to the
// run's model through a recording proxy, in the workspace, until it exits
// or a bound stops it. What it did is read back from the recorded calls.
func (l *live) runExternal(ctx context.Context, ws *workspace.Workspace) agent.Outcome {
	a := l.spec.Agent
	l.receipt.Agent = &bundle.Agent{Kind: a.Kind, Name: a.Name, Command: a.Command, Log: bundle.AgentLogFile}
	up, stopModel, err := l.endpoint(l.spec.Model)
	if err != nil {
		return agent.Outcome{Stop: agent.StopError, Err: err}
	}
	defer stopModel()
	lim := proxy.Limits{MaxCalls: l.spec.Bounds.MaxTurns, MaxTokens: l.spec.Bounds.MaxTokens}
	if wall := l.spec.Bounds.WallClockS; wall > 0 {
		lim.Deadline = l.r.now().Add(time.Duration(wall) * time.Second)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, lim.Deadline, errWallClock)
		defer cancel()
	}
	w := &watcher{l: l, open: map[string]string{}}
	p, err := proxy.Start(proxy.Config{Upstream: up, Limits: lim, Record: w.record, Now: l.r.now})
	if err != nil {
		return agent.Outcome{Stop: agent.StopError, Err: err}
	}
	defer p.Close()

	l.progress("  agent %s (%s) on %s", a.Name, a.Kind, p.URL)
	res := external.Run(ctx, a, external.Options{Dir: ws.Dir, Env: l.env(ws.Dir), Task: l.agentTask(), BaseURL: p.URL, Key: p.Key,
		Model: l.spec.Model.name(), Home: filepath.Join(l.dir, "agent-home")})
	l.receipt.Agent.Version = res.Version
	log := string(res.Log)
	if res.Cut > 0 {
		log += fmt.Sprintf("\n[proctor: %d more bytes of output were not kept]\n", res.Cut)
	}
	if err := l.rec.text(bundle.AgentLogFile, log); err != nil {
		l.progress("  warning: %v", err)
	}

	out := w.outcome()
	switch bound := p.Exceeded(); {
	case errors.Is(context.Cause(ctx), errWallClock):
		l.abort(fmt.Sprintf("wall_clock_s=%d", l.spec.Bounds.WallClockS))
		out.Stop, out.Err = agent.StopError, &model.Error{Domain: model.Domain(bundle.DomainAgent), Code: "wall_clock", Message: fmt.Sprintf("the agent ran past wall_clock_s=%d and was stopped", l.spec.Bounds.WallClockS)}
	case ctx.Err() != nil:
		out.Stop = agent.StopInterrupted
	case bound != "":
		l.abort(strings.SplitN(bound, " ", 2)[0])
		out.Stop, out.Err = agent.StopMaxTurns, fmt.Errorf("the agent was refused a model call past the bound %s", bound)
		if !strings.HasPrefix(bound, "max_turns") {
			out.Stop, out.Err = agent.StopError, &model.Error{Domain: model.Domain(bundle.DomainAgent), Code: "bound_exceeded", Message: out.Err.Error()}
		}
	case res.Err != nil:
		out.Stop, out.Err = agent.StopError, res.Err
	default:
		out.Stop, out.Final = agent.StopFinal, lastAssistant(out.Messages)
	}
	return out
}

// agentTask is the first message an external agent gets: the task, with
// the criteria and what is out of scope.
func (l *live) agentTask() string {
	var b strings.Builder
	b.WriteString(l.spec.Task)
	for _, part := range []struct {
		title string
		items []string
	}{{"Criteria", l.spec.Criteria}, {"Out of scope", l.spec.OutOfScope}} {
		if len(part.items) > 0 {
			b.WriteString("\n\n" + part.title + ":")
			for _, c := range part.items {
				b.WriteString("\n- " + c)
			}
		}
	}
	return b.String()
}

// watcher turns the proxy's recorded calls into the run's exchanges and
// events as they happen (model requests and replies, the tool calls the
// model asked for, and the results the agent sent back), and keeps them
// for the transcript.
type watcher struct {
	l     *live
	mu    sync.Mutex
	calls []external.Call
	open  map[string]string // tool call id → name, until its result comes
	usage model.Usage
	tools int
}

func (w *watcher) record(x model.Exchange, reply *model.Response) {
	w.l.rec.exchange(x)
	_, req, err := model.DecodeAnyRequest(x.API, x.Request)
	w.mu.Lock()
	defer w.mu.Unlock()
	turn := len(w.calls) + 1
	if err == nil {
		for _, m := range req.Messages {
			if name, ok := w.open[m.ToolCallID]; ok && m.Role == model.RoleTool {
				delete(w.open, m.ToolCallID)
				w.l.emit(bundle.ToolResultEvent{ID: m.ToolCallID, Name: name, OK: true, Chars: len([]rune(m.Content))})
			}
		}
		w.l.emit(bundle.ModelRequestEvent{Turn: turn, Messages: len(req.Messages)})
	}
	if reply == nil {
		w.l.emit(bundle.ModelErrorEvent{Turn: turn, Error: x.Error})
	} else {
		w.l.emit(bundle.ModelResponseEvent{Turn: turn, PromptTokens: reply.Usage.PromptTokens, CompletionTokens: reply.Usage.CompletionTokens,
			ToolCalls: len(reply.Message.ToolCalls), FinishReason: reply.FinishReason})
		for _, c := range reply.Message.ToolCalls {
			w.open[c.ID] = c.Name
			w.tools++
			w.l.emit(bundle.ToolCallEvent{ID: c.ID, Name: c.Name, Args: agent.EventArgs(c.Arguments)})
		}
		w.usage.PromptTokens += reply.Usage.PromptTokens
		w.usage.CompletionTokens += reply.Usage.CompletionTokens
		w.usage.TotalTokens += reply.Usage.TotalTokens
	}
	w.calls = append(w.calls, external.Call{Request: req, Reply: reply})
}

// outcome is the conversation so far, read from the calls.
func (w *watcher) outcome() agent.Outcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		if c.Reply != nil {
			n++
		}
	}
	return agent.Outcome{Messages: external.Conversation(w.calls), Usage: w.usage, Calls: n, ToolCalls: w.tools}
}
