package run

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/proxy"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// agentHome is the folder of a run where an external agent keeps its own
// files (its config and conversation).
const agentHome = "agent-home"

// sessionAgentHome is where a session's external agent keeps its files,
// across the session's runs: beside the session's workspace, or — for a
// session made of a run by a request for changes, whose workspace is that
// run's — the run's own agent home, so that the agent goes on with the
// conversation it had.
func sessionAgentHome(s *bundle.Session) string {
	if filepath.Base(s.Workspace) == "workspace" {
		return filepath.Join(filepath.Dir(s.Workspace), agentHome)
	}
	return s.Workspace + ".agent"
}

// runExternal lets an external agent do the run's work: it talks to the
// run's model through a recording proxy, in the workspace, until it exits
// or a bound stops it; an agent that can resume is run again for each
// later turn (a scenario's turns, the answer to its question). What it did
// is read back from the recorded calls.
func (l *live) runExternal(ctx context.Context, ws *workspace.Workspace, sess *sessionState) agent.Outcome {
	a := l.spec.Agent
	l.receipt.Agent = &bundle.Agent{Kind: a.Kind, Name: a.Name, Command: a.Command, Log: bundle.AgentLogFile}
	m := l.spec.Model
	if m.Script != nil {
		// What the agent sends beside its conversation (a title, say) is
		// answered without a step: a script is written for the
		// conversation alone.
		var side []script.Step
		for _, s := range a.Side() {
			side = append(side, script.Step{Expect: script.Expect{SystemHas: s.SystemHas, NoTools: true}, Reply: script.Reply{Content: s.Reply}})
		}
		m.Script = m.Script.WithAnytime(side...).WithWorkspace(ws.Dir).WithTools(a.Tools...)
	}
	up, stopModel, err := l.endpoint(m)
	if err != nil {
		return agent.Outcome{Stop: agent.StopError, Err: err}
	}
	defer stopModel()

	conv := l.spec.Conversation
	lim := proxy.Limits{MaxCalls: l.spec.Bounds.MaxTurns, MaxTotalCalls: conv.MaxMessages, MaxTokens: l.spec.Bounds.MaxTokens,
		MaxCostUSD: l.spec.Bounds.MaxCostUSD, Prices: l.prices, Model: l.spec.Model.name()}
	if p := l.spec.Model.Profile; p != nil && m.Script == nil {
		lim.Models = append(p.Allows(), lim.Model) // a live provider spends money: only the models its profile names
	}
	if wall := l.spec.Bounds.WallClockS; wall > 0 {
		lim.Deadline = l.r.now().Add(time.Duration(wall) * time.Second)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, lim.Deadline, errWallClock)
		defer cancel()
	}
	// The agent is stopped once a scripted model has refused it a call:
	// the run has failed in the scenario domain, and an agent that retries
	// (opencode does, for a minute) would only keep it waiting.
	ctx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	w := &watcher{l: l, intents: a.Intents(), open: map[string]string{}, sessions: map[int]string{}, polls: map[string]int{}, args: map[string]string{}, asked: map[string]bool{}, stop: stopAgent}
	if m.Script != nil {
		w.questions = m.Script.Questions()
	}
	p, err := proxy.Start(proxy.Config{Upstream: up, Limits: lim, Record: w.record, Approve: w.approve(l.showWaiting(l.spec.Approver)), Result: w.told, Now: l.r.now})
	if err != nil {
		return agent.Outcome{Stop: agent.StopError, Err: err}
	}
	defer p.Close()

	opt := external.Options{Dir: ws.Dir, Env: l.env(ws.Dir), BaseURL: p.URL, Key: p.Key, Model: l.spec.Model.name(), Home: filepath.Join(l.dir, agentHome)}
	if sess != nil {
		opt.Home = sessionAgentHome(sess.session)
		opt.Resume = !sess.isNew && len(sess.session.Runs) > 0
	}
	opt.Confine = l.confine(ws.Dir, &sandbox.Proxy{Socket: p.Socket, Port: proxyPort(p.URL)}, opt.Home)
	if l.r.Sandbox != nil {
		opt.Hook = l.r.Sandbox.Helper // proctor, as the agent's permission hook
	}
	var log strings.Builder
	defer func() {
		if err := l.rec.text(bundle.AgentLogFile, log.String()); err != nil {
			l.progress("  warning: %v", err)
		}
	}()
	turns := append([]string{l.agentTask()}, l.spec.Turns...)
	yields := 0
	var out agent.Outcome
	for i := 0; i < len(turns); i++ {
		l.rec.event(bundle.ConversationTurnEvent{Turn: i + 1, Of: len(turns)})
		opt.Task = turns[i]
		for {
			p.NewTurn()
			l.progress("  agent %s (%s) on %s", a.Name, a.Kind, p.URL)
			res := external.Run(ctx, a, opt)
			p.Drain()
			opt.Resume = true
			if l.receipt.Agent.Version == "" {
				l.receipt.Agent.Version = res.Version
			}
			if len(turns) > 1 || yields > 0 || log.Len() > 0 {
				fmt.Fprintf(&log, "[proctor: %s]\n", strings.Join(res.Argv, " "))
			}
			log.Write(res.Log)
			if res.Cut > 0 {
				fmt.Fprintf(&log, "\n[proctor: %d more bytes of output were not kept]\n", res.Cut)
			}
			out = l.externalOutcome(ctx, w.outcome(), p.Exceeded(), res.Err)
			if out.Stop == agent.StopAskUser && yields < conv.MaxYieldReplies && conv.YieldReply != "" {
				yields++
				l.rec.event(bundle.ConversationYieldReplyEvent{Question: out.Question, Reply: conv.YieldReply, N: yields})
				opt.Task = conv.YieldReply
				continue
			}
			break
		}
		if out.Stop != agent.StopFinal {
			return out
		}
	}
	return out
}

// externalOutcome is how one invocation of an external agent ended: the
// run's time was up, it was stopped, the proxy refused it a call past a
// bound, it failed, it asked the user a question (its last reply calls
// ask_user), or it finished.
func (l *live) externalOutcome(ctx context.Context, out agent.Outcome, bound string, runErr error) agent.Outcome {
	agentError := func(code, msg string) *model.Error {
		return &model.Error{Domain: model.Domain(bundle.DomainAgent), Code: code, Message: msg}
	}
	switch {
	case out.Err != nil: // the model script refused a call
		out.Stop = agent.StopError
	case errors.Is(context.Cause(ctx), errWallClock):
		l.abort(fmt.Sprintf("wall_clock_s=%d", l.spec.Bounds.WallClockS))
		out.Stop, out.Err = agent.StopError, agentError("wall_clock", fmt.Sprintf("the agent ran past wall_clock_s=%d and was stopped", l.spec.Bounds.WallClockS))
	case ctx.Err() != nil:
		out.Stop = agent.StopInterrupted
	case strings.HasPrefix(bound, "model "):
		out.Stop, out.Err = agent.StopError, agentError("model_not_allowed", "the agent was refused a model call: "+bound)
	case bound != "":
		name, _, _ := strings.Cut(bound, " ")
		l.abort(name)
		out.Stop, out.Err = agent.StopMaxTurns, fmt.Errorf("the agent was refused a model call past the bound %s", bound)
		if !strings.HasPrefix(bound, "max_turns") && !strings.HasPrefix(bound, "max_messages") {
			out.Stop, out.Err = agent.StopError, agentError("bound_exceeded", out.Err.Error())
		}
	case runErr != nil:
		out.Stop, out.Err = agent.StopError, runErr
	case out.Question != "":
		out.Stop = agent.StopAskUser
		l.progress("  the agent asks: %s", out.Question)
	default:
		out.Stop, out.Final = agent.StopFinal, lastAssistant(out.Messages)
	}
	return out
}

// proxyPort is the TCP port of a loopback base URL.
func proxyPort(base string) int {
	u, err := url.Parse(base)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(u.Port())
	return n
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
	l       *live
	mu      sync.Mutex
	calls   []external.Call
	intents intent.Table      // the agent's tools, its calls read with
	open    map[string]string // tool call id → name, until its result comes
	// exits are how the commands of open calls ended, as an agent whose
	// results do not say told proctor (proxy.Result).
	exits map[string]int
	// sessions are Codex's commands still running: session → the call
	// that started it; polls are the calls that wait on one: call id →
	// session (intent.Running, intent.Polled).
	sessions map[int]string
	polls    map[string]int
	// args are the open calls' arguments, and asked the calls an approval
	// was asked of: an agent whose hook does not name the call it asks
	// about (Gemini CLI, Qwen Code, Copilot CLI) has its approval tied to
	// the open call that runs the same command.
	args  map[string]string
	order []string // the open calls, in the order they were made
	asked map[string]bool
	usage model.Usage
	tools int
	// script is the first refusal of a scripted model (a request off the
	// script, or past its end): the run fails in the scenario domain with
	// it, whatever the agent made of it.
	script *model.Error
	stop   func() // stops the agent
	// questions are those a scripted model asks in a message (the
	// agent has no tool to ask with): a reply that ends with one, and
	// calls no tool, is the agent's question.
	questions []string
}

// asks is the question a reply of the model asks in its message, if it
// is one of the script's.
func (w *watcher) asks(m model.Message) (string, bool) {
	if len(m.ToolCalls) > 0 {
		return "", false
	}
	text := strings.TrimSpace(m.Content)
	for _, q := range w.questions {
		if strings.HasSuffix(text, strings.TrimSpace(q)) {
			return strings.TrimSpace(q), true
		}
	}
	return "", false
}

func (w *watcher) record(x model.Exchange, reply *model.Response) {
	w.l.rec.exchange(x)
	if x.Call != "" {
		return // beside the conversation: recorded, not a turn
	}
	_, req, err := model.DecodeAnyRequest(x.API, x.Request)
	w.mu.Lock()
	defer w.mu.Unlock()
	turn := len(w.calls) + 1
	if err == nil {
		for _, m := range req.Messages {
			if name, ok := w.open[m.ToolCallID]; ok && m.Role == model.RoleTool {
				delete(w.open, m.ToolCallID)
				delete(w.args, m.ToolCallID)
				w.order = slices.DeleteFunc(w.order, func(id string) bool { return id == m.ToolCallID })
				w.l.emit(w.result(m, name))
			}
		}
		w.l.emit(bundle.ModelRequestEvent{Turn: turn, Messages: len(req.Messages)})
	}
	if reply == nil {
		ev := bundle.ModelErrorEvent{Turn: turn, Error: x.Error}
		if e := model.ScriptFailure(x.Response); e != nil {
			ev.Domain = string(e.Domain)
			if w.script == nil {
				w.script = e
				w.stop()
			}
		}
		w.l.emit(ev)
	} else {
		w.l.emit(bundle.ModelResponseEvent{Turn: turn, PromptTokens: reply.Usage.PromptTokens, CompletionTokens: reply.Usage.CompletionTokens,
			CacheReadTokens: reply.Usage.CacheReadTokens, CacheWriteTokens: reply.Usage.CacheWriteTokens, ToolCalls: len(reply.Message.ToolCalls), FinishReason: reply.FinishReason,
			DurationMS: x.Duration.Milliseconds()})
		for _, c := range reply.Message.ToolCalls {
			w.open[c.ID] = c.Name
			w.args[c.ID] = c.Arguments
			w.order = append(w.order, c.ID)
			if session, ok := intent.Polled(c.Name, c.Arguments); ok {
				w.polls[c.ID] = session
			}
			w.tools++
			w.l.emit(bundle.ToolCallEvent{ID: c.ID, Name: c.Name, Args: agent.EventArgs(c.Arguments)})
			if c.Name == agent.AskUserTool {
				w.l.emit(bundle.AgentQuestionEvent{ID: c.ID, Question: agent.Question(c.Arguments)})
			}
		}
		if q, ok := w.asks(reply.Message); ok {
			w.l.emit(bundle.AgentQuestionEvent{Question: q})
		}
		w.usage.Add(reply.Usage)
	}
	w.calls = append(w.calls, external.Call{Request: req, Reply: reply})
}

// result is the event of the result m of an open call of tool name: how
// the call went, and the exit status of the command it ran — as its
// result says, or as the agent told proctor (told) — or, for a call that
// waited on a command still running, of that command (Ends).
func (w *watcher) result(m model.Message, name string) bundle.ToolResultEvent {
	ev := bundle.ToolResultEvent{ID: m.ToolCallID, Name: name, OK: !m.IsError, Chars: len([]rune(m.Content)), Exit: w.intents.Exit(name, m.Content, m.IsError)}
	if code, told := w.exits[m.ToolCallID]; told {
		ev.Exit = &code
		delete(w.exits, m.ToolCallID)
	}
	started := m.ToolCallID
	if session, ok := w.polls[m.ToolCallID]; ok {
		delete(w.polls, m.ToolCallID)
		if ev.Ends = w.sessions[session]; ev.Ends != "" {
			started = ev.Ends
		}
		delete(w.sessions, session)
	}
	if session, running := intent.Running(name, m.Content); running {
		w.sessions[session] = started
	}
	return ev
}

// told keeps how the command of an open call ended, until the call's
// result reaches the model (an agent tells of its own calls only).
func (w *watcher) told(r proxy.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.open[r.CallID]; !ok {
		return
	}
	if w.exits == nil {
		w.exits = map[string]int{}
	}
	w.exits[r.CallID] = *r.Exit
}

// approve decides the gated calls an agent asks about through the proxy, as
// the native loop decides its own, with the events and transcript notes.
func (w *watcher) approve(a agent.Approver) func(context.Context, proxy.Approval) proxy.Answer {
	return func(ctx context.Context, req proxy.Approval) proxy.Answer {
		emit := func(ev bundle.EventData) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.l.emit(ev)
		}
		req.CallID = w.callOf(req)
		d := agent.Decide(ctx, a, agent.ApprovalRequest{CallID: req.CallID, Tool: req.Tool, Args: req.Arguments}, emit)
		return proxy.Answer{Approved: d.Approved, By: d.By, Reason: d.Reason}
	}
}

// callOf is the call an approval asks about: the open call it names, else
// the first open call not asked about yet that does what it asks (the
// same tool, or a command tool with the same command), else none.
func (w *watcher) callOf(req proxy.Approval) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := req.CallID
	if _, open := w.open[id]; !open {
		// Named by an id of the agent's own (Qwen Code's), or not at all.
		id = ""
		asked, _ := w.intents.Of(req.Tool, req.Arguments)
		for _, open := range w.order {
			in, ok := w.intents.Of(w.open[open], w.args[open])
			if !w.asked[open] && (w.open[open] == req.Tool && w.args[open] == req.Arguments || ok && asked.Kind == intent.Run && in == asked) {
				id = open
				break
			}
		}
	}
	if id != "" {
		w.asked[id] = true
	}
	return id
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
	out := agent.Outcome{Messages: external.Conversation(w.calls), Usage: w.usage, Calls: n, ToolCalls: w.tools}
	if w.script != nil {
		out.Err = w.script
	}
	if k := len(out.Messages); k > 0 {
		last := out.Messages[k-1]
		for _, c := range last.ToolCalls {
			if c.Name == agent.AskUserTool {
				out.Question = strings.TrimSpace(agent.Question(c.Arguments))
			}
		}
		if q, ok := w.asks(last); ok && last.Role == model.RoleAssistant {
			out.Question = q
		}
	}
	return out
}
