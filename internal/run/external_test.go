package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// twoWrites is a script for either API: two tool calls in one reply, then
// a final answer once both results are in.
func twoWrites(api string) string {
	return `model: test-model
steps:
  - expect: {api: ` + api + `, last_contains: "Write new"}
    reply: {content: "", tool_calls: [{id: c1, name: write_file, arguments: {path: a.txt, content: "new\n"}}, {id: c2, name: write_file, arguments: {path: b.txt, content: "bee\n"}}], usage: {prompt_tokens: 10, completion_tokens: 5, total_tokens: 15}}
  - expect: {api: ` + api + `, last_contains: "wrote b.txt"}
    reply: {content: "Wrote a.txt and b.txt.", usage: {prompt_tokens: 20, completion_tokens: 5, total_tokens: 25}}
`
}

func externalSpec(t *testing.T, src string, a external.Agent) run.Spec {
	t.Helper()
	s, err := script.Parse("model.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return run.Spec{SourceDir: dir, Task: "Write new into a.txt", Model: run.ModelChoice{Script: s}, Bounds: bounds.Defaults(), Agent: a}
}

// The test agents of each API (Chat Completions with parallel tool calls
// and content-part arrays; the Responses API with function calls;
// Anthropic Messages with tool_use; Gemini with functionCall) run under
// the proxy: their changes are the diff, their calls the exchanges and
// events, their conversation the transcript, their output agent.log.
func TestExternalAgentsRunUnderTheProxy(t *testing.T) {
	for _, tc := range []struct{ agent, api string }{{"chatagent", model.APIChat}, {"responsesagent", model.APIResponses},
		{"messagesagent", model.APIMessages}, {"geminiagent", model.APIGemini}} {
		t.Run(tc.agent, func(t *testing.T) {
			bin := testutil.TestAgent(t, tc.agent)
			a := external.Agent{Name: tc.agent, Kind: external.KindCommand, Command: []string{bin, "{{task}}"}}
			spec := externalSpec(t, twoWrites(tc.api), a)
			spec.Checks = []string{"grep -q new a.txt"} // the checks judge an external agent's work too
			res, err := newRunner(t).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			rc := res.Receipt
			if rc.Status != bundle.StatusAwaitingReview || strings.Join(rc.Changed, ",") != "a.txt,b.txt" {
				t.Fatalf("status %s changed %v failure %+v", rc.Status, rc.Changed, rc.Failure)
			}
			if rc.Agent == nil || rc.Agent.Kind != external.KindCommand || rc.Agent.Name != tc.agent || !strings.HasPrefix(rc.Agent.Version, "sha256:") {
				t.Fatalf("receipt agent %+v", rc.Agent)
			}
			if rc.Usage.ModelCalls != 2 || rc.Usage.TotalTokens != 40 {
				t.Fatalf("usage %+v", rc.Usage)
			}
			if rc.Verify == nil || rc.Verify.Verdict != "pass" || len(rc.Verify.Checks) != 1 || !rc.Verify.Checks[0].Passed {
				t.Fatalf("verify %+v", rc.Verify)
			}
			b, err := bundle.ReadRun(res.Dir, bundle.DefaultLimits())
			if err != nil || len(b.Problems) > 0 {
				t.Fatalf("bundle: %v %v", err, b.Problems)
			}
			xlog, _, err := bundle.ReadExchanges(res.Dir, bundle.DefaultLimits())
			if err != nil || len(xlog.Exchanges) != 2 || xlog.Exchanges[0].API != tc.api || xlog.Exchanges[1].API != tc.api {
				t.Fatalf("exchanges %v %v", xlog, err)
			}
			transcript, _ := os.ReadFile(filepath.Join(res.Dir, bundle.TranscriptFile))
			for _, want := range []string{"Write new into a.txt", "`write_file` (c2)", "wrote b.txt", "Wrote a.txt and b.txt."} {
				if !strings.Contains(string(transcript), want) {
					t.Errorf("transcript lacks %q:\n%s", want, transcript)
				}
			}
			log, _ := os.ReadFile(filepath.Join(res.Dir, bundle.AgentLogFile))
			if !strings.Contains(string(log), "final: Wrote a.txt and b.txt.") {
				t.Errorf("agent.log: %q", log)
			}
			events, _ := os.ReadFile(filepath.Join(res.Dir, bundle.EventsFile))
			if n := strings.Count(string(events), `"type":"tool.call"`); n != 2 || strings.Count(string(events), `"type":"tool.result"`) != 2 {
				t.Errorf("%d tool_call events, want 2 and 2 results:\n%s", n, events)
			}
		})
	}
}

// A request off the model script fails the run in the scenario domain,
// whichever API the agent speaks and whatever it makes of the refusal
// (these agents exit 1; one could go on, or exit 0).
func TestAScriptMismatchUnderAnExternalAgentIsTheScenarios(t *testing.T) {
	for _, tc := range []struct{ agent, api string }{{"chatagent", model.APIChat}, {"messagesagent", model.APIMessages}, {"geminiagent", model.APIGemini}} {
		t.Run(tc.agent, func(t *testing.T) {
			bin := testutil.TestAgent(t, tc.agent)
			for _, exit := range []string{"its status", "0"} {
				command := []string{bin, "{{task}}"}
				if exit == "0" {
					command = []string{"sh", "-c", bin + ` "$0"; exit 0`, "{{task}}"}
				}
				spec := externalSpec(t, "steps:\n  - expect: {last_contains: something else}\n    reply: {content: no}\n", external.Agent{Name: "a", Kind: external.KindCommand, Command: command})
				res, err := newRunner(t).Run(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				f := res.Receipt.Failure
				if res.Receipt.Status != bundle.StatusError || f == nil || f.Domain != bundle.DomainScenario || f.Code != model.CodeScriptMismatch ||
					!strings.Contains(f.Message, `expected the last message to contain "something else"`) {
					t.Fatalf("exit %s: status %s failure %+v", exit, res.Receipt.Status, f)
				}
			}
		})
	}
}

// The agent's environment points at the proxy with a placeholder key: the
// provider's key and its variable never reach it.
func TestAnExternalAgentNeverHoldsTheProviderKey(t *testing.T) {
	t.Setenv("LIVE_KEY_FOR_TEST", "sk-live-not-for-agents")
	spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{Name: "env", Kind: external.KindCommand,
		Command: []string{"sh", "-c", "env > env.txt"}})
	spec.Model = run.ModelChoice{Profile: &model.Profile{Name: "live", APIKeyEnv: "LIVE_KEY_FOR_TEST"},
		Endpoint: model.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "m", APIKey: "sk-live-not-for-agents"}}
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	diff, _ := os.ReadFile(filepath.Join(res.Dir, bundle.DiffFile))
	if !strings.Contains(string(diff), "OPENAI_API_KEY=proctor-proxy-") || !strings.Contains(string(diff), "OPENAI_BASE_URL=http://127.0.0.1:") {
		t.Fatalf("the agent's environment does not point at the proxy:\n%s", diff)
	}
	ws := filepath.Join(res.Dir, "workspace", "env.txt")
	env, _ := os.ReadFile(ws)
	if len(env) == 0 || strings.Contains(string(env), "sk-live-not-for-agents") || strings.Contains(string(env), "LIVE_KEY_FOR_TEST") {
		t.Fatalf("the agent's environment holds the provider key (or its variable):\n%s", env)
	}
}

// An agent that fails, one refused past max_turns, and one stopped by the
// wall clock (with the children it started) each end the run with a
// failure that says so; the bundle keeps what happened.
func TestExternalAgentsThatFailOrRunPastTheirBounds(t *testing.T) {
	chat := testutil.TestAgent(t, "chatagent")
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	for _, tc := range []struct {
		name    string
		command []string
		bound   func(*bundle.Bounds)
		code    string
		aborted string
	}{
		{"exits 3", []string{"sh", "-c", "echo broken >&2; exit 3"}, nil, "agent_error", ""},
		{"past max_turns", []string{chat, "{{task}}"}, func(b *bundle.Bounds) { b.MaxTurns = 1 }, "max_turns", "max_turns=1"},
		{"past the wall clock", []string{"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}, func(b *bundle.Bounds) { b.WallClockS = 1 }, "wall_clock", "wall_clock_s=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{Name: "a", Kind: external.KindCommand, Command: tc.command})
			if tc.bound != nil {
				tc.bound(&spec.Bounds)
			}
			start := time.Now()
			res, err := newRunner(t).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Receipt.Failure
			if res.Receipt.Status != bundle.StatusFailed || f == nil || f.Code != tc.code {
				t.Fatalf("status %s failure %+v", res.Receipt.Status, f)
			}
			if time.Since(start) > 30*time.Second {
				t.Fatalf("the run took %s", time.Since(start))
			}
			events, _ := os.ReadFile(filepath.Join(res.Dir, bundle.EventsFile))
			if tc.aborted != "" && !strings.Contains(string(events), tc.aborted) {
				t.Errorf("no event names %s:\n%s", tc.aborted, events)
			}
		})
	}
	// The wall clock stopped the agent's whole process group.
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	json.Unmarshal([]byte(strings.TrimSpace(string(data))), &pid)
	if pid <= 0 {
		t.Fatalf("the agent's child never wrote its pid (%q)", data)
	}
	testutil.Eventually(t, 10*time.Second, "the agent's child to be gone", func() bool { return !alive(pid) })
}

// A replay of an external agent's run runs the same agent again, its
// model answering from the recording, and makes the same change.
func TestAnExternalAgentsRunReplays(t *testing.T) {
	for _, tc := range []struct{ agent, api string }{{"responsesagent", model.APIResponses}, {"messagesagent", model.APIMessages}, {"geminiagent", model.APIGemini}} {
		t.Run(tc.agent, func(t *testing.T) { replays(t, tc.agent, tc.api) })
	}
}

// replays runs a test agent, then again from its recording, offline, through
// the same API.
func replays(t *testing.T, name, api string) {
	bin := testutil.TestAgent(t, name)
	r := newRunner(t)
	a := external.Agent{Name: name, Kind: external.KindCommand, Command: []string{bin, "{{task}}"}}
	first, err := r.Run(context.Background(), externalSpec(t, twoWrites(api), a))
	if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("first run: %v %+v", err, first.Receipt.Failure)
	}
	spec, cleanup, err := r.ReplaySpec(context.Background(), first.RunID)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	again, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	rc := again.Receipt
	if rc.Status != bundle.StatusAwaitingReview || rc.Agent == nil || rc.Agent.Name != name || strings.Join(rc.Changed, ",") != "a.txt,b.txt" {
		t.Fatalf("replay: status %s agent %+v changed %v failure %+v", rc.Status, rc.Agent, rc.Changed, rc.Failure)
	}
	d1, _ := os.ReadFile(filepath.Join(first.Dir, bundle.DiffFile))
	d2, _ := os.ReadFile(filepath.Join(again.Dir, bundle.DiffFile))
	if string(d1) != string(d2) {
		t.Fatalf("the replay's diff differs:\n%s\n---\n%s", d1, d2)
	}
}

// A session's next run with an agent that can resume continues the agent's
// own conversation over the same workspace — a session started as such, or
// one made of a run by a request for changes (it keeps the run's agent
// home).
func TestASessionContinuesAnExternalAgentsConversation(t *testing.T) {
	bin := testutil.TestAgent(t, "chatagent")
	a := external.Agent{Name: "chat", Kind: external.KindCommand, Command: []string{bin, "{{task}}"}, Resume: []string{bin, "--resume", "{{task}}"}}
	for _, tc := range []struct {
		name string
		// next starts the first run and says how its session goes on.
		next func(t *testing.T, r *run.Runner) run.Spec
	}{
		{"a session", func(t *testing.T, r *run.Runner) run.Spec {
			spec := externalSpec(t, twoWrites(model.APIChat), a)
			spec.Session = "new"
			first, err := r.Run(context.Background(), spec)
			if err != nil || first.Receipt.SessionID == "" || first.Receipt.Status != bundle.StatusAwaitingReview {
				t.Fatalf("first run: %v %+v", err, first.Receipt)
			}
			return run.Spec{Session: first.Receipt.SessionID, Task: "And now c.txt"}
		}},
		{"changes requested of a run", func(t *testing.T, r *run.Runner) run.Spec {
			first, err := r.Run(context.Background(), externalSpec(t, twoWrites(model.APIChat), a))
			if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
				t.Fatalf("first run: %v %+v", err, first.Receipt)
			}
			sid, msg, err := r.Records().RequestChanges(first.RunID, bundle.ChangeRequest{By: "ana", Summary: "And now c.txt"})
			if err != nil {
				t.Fatal(err)
			}
			return run.Spec{Session: sid, Task: msg, Addresses: first.RunID}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t)
			spec := tc.next(t, r)
			s, _ := script.Parse("next.yaml", []byte("steps:\n  - expect: {api: chat, last_contains: \"And now c.txt\"}\n    reply: {tool_calls: [{id: c9, name: write_file, arguments: {path: c.txt, content: \"see\\n\"}}]}\n  - reply: {content: Wrote c.txt too.}\n"))
			spec.Model, spec.Bounds, spec.Agent = run.ModelChoice{Script: s}, bounds.Defaults(), a
			next, err := r.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if next.Receipt.Status != bundle.StatusAwaitingReview || strings.Join(next.Receipt.Changed, ",") != "c.txt" {
				t.Fatalf("next run: status %s changed %v failure %+v", next.Receipt.Status, next.Receipt.Changed, next.Receipt.Failure)
			}
			xlog, _, _ := bundle.ReadExchanges(next.Dir, bundle.DefaultLimits())
			raw, _ := xlog.Request(0)
			_, req, err := model.DecodeAnyRequest(xlog.Exchanges[0].API, raw)
			if err != nil || len(req.Messages) != 7 || !strings.Contains(req.Messages[3].Content, "wrote a.txt") {
				t.Fatalf("the next run did not continue the conversation (%d messages): %+v %v", len(req.Messages), req.Messages, err)
			}
			log, _ := os.ReadFile(filepath.Join(next.Dir, bundle.AgentLogFile))
			if !strings.Contains(string(log), "final: Wrote c.txt too.") {
				t.Fatalf("agent.log: %s", log)
			}
		})
	}
}

// An agent without a tool to ask with is asked by a scripted model in the
// message that ends its turn: the run takes it as the agent's question,
// answers with the scenario's yield_reply and the agent goes on with its
// conversation.
func TestAnExternalAgentAskedInTheMessageGetsTheYieldReply(t *testing.T) {
	bin := testutil.TestAgent(t, "chatagent")
	a := external.Agent{Name: "chat", Kind: external.KindCommand, Command: []string{bin, "{{task}}"}, Resume: []string{bin, "--resume", "{{task}}"},
		Env: map[string]string{"CHATAGENT_NO_ASK": "1"}}
	spec := externalSpec(t, `steps:
  - reply: {content: "I need to know.", tool_calls: [{ask: "Which word goes in a.txt?"}]}
  - expect: {last_role: user, last_contains: "Write bee"}
    reply: {tool_calls: [{write: {path: a.txt, content: "bee\n"}}]}
  - reply: {content: Wrote bee.}
`, a)
	spec.Conversation = run.Conversation{YieldReply: "Write bee.", MaxYieldReplies: 1}
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt.Status != bundle.StatusAwaitingReview || strings.Join(res.Receipt.Changed, ",") != "a.txt" {
		t.Fatalf("status %s changed %v failure %+v", res.Receipt.Status, res.Receipt.Changed, res.Receipt.Failure)
	}
	events, _ := os.ReadFile(filepath.Join(res.Dir, bundle.EventsFile))
	for _, want := range []string{`"type":"agent.question","data":{"id":"","question":"Which word goes in a.txt?"}`, `"type":"conversation.yield_reply"`} {
		if !strings.Contains(string(events), want) {
			t.Errorf("no %s in the events:\n%s", want, events)
		}
	}
}

// Stopping a run (Ctrl-C, Stop) stops the agent's whole process group and
// the run is interrupted, its bundle kept.
func TestStoppingARunStopsTheAgentsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{Name: "sleeper", Kind: external.KindCommand,
		Command: []string{"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // stop the run once the agent's child has written its pid (or after 10 s)
		for i := 0; i < 500; i++ {
			// The shell makes the file before echo writes to it: an empty
			// file is not the pid yet.
			if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	res, err := newRunner(t).Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("status %s failure %+v", res.Receipt.Status, res.Receipt.Failure)
	}
	data, _ := os.ReadFile(pidFile)
	var pid int
	json.Unmarshal([]byte(strings.TrimSpace(string(data))), &pid)
	if pid <= 0 {
		t.Fatalf("the agent's child never wrote its pid (%q)", data)
	}
	testutil.Eventually(t, 10*time.Second, "the agent's child to be gone", func() bool { return !alive(pid) })
}

// alive reports whether process pid runs: it exists and is not a zombie
// (dead, waiting for whoever adopted it to reap it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE …; comm may hold spaces and parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	return !bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

// max_tokens holds proctor's own agent too: past it the next model call is
// not made, and the run fails naming the bound.
func TestMaxTokensStopsTheNativeAgent(t *testing.T) {
	s, err := script.Parse("m.yaml", []byte("steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}], usage: {prompt_tokens: 40, completion_tokens: 20, total_tokens: 60}}\n  - reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{})
	spec.Model = run.ModelChoice{Script: s}
	spec.Bounds.MaxTokens = 50
	res, err := newRunner(t).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Receipt.Failure; res.Receipt.Status != bundle.StatusFailed || f == nil || f.Code != "bound_exceeded" || res.Receipt.Usage.ModelCalls != 1 {
		t.Fatalf("status %s failure %+v usage %+v", res.Receipt.Status, f, res.Receipt.Usage)
	}
	events, _ := os.ReadFile(filepath.Join(res.Dir, bundle.EventsFile))
	if !strings.Contains(string(events), "max_tokens=50") {
		t.Fatalf("no event names the bound:\n%s", events)
	}
}

// max_cost_usd holds a run to what its model's replies cost by the price
// table, proctor's agent and an external one alike; a model without a
// price cannot run under it (fail closed).
func TestMaxCostUSDStopsTheAgentAndNeedsAPrice(t *testing.T) {
	s, err := script.Parse("m.yaml", []byte("model: priced-model\nsteps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}], usage: {prompt_tokens: 4000, completion_tokens: 2000, total_tokens: 6000}}\n  - reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	prices := pricing.Builtin().With(pricing.Table{Prices: map[string]pricing.Price{"priced-model": {Input: 2, Output: 10}}}) // this call: $0.008 + $0.02
	for _, agent := range []external.Agent{{}, {Name: "chat", Kind: external.KindCommand, Command: []string{testutil.TestAgent(t, "chatagent"), "{{task}}"}}} {
		spec := externalSpec(t, twoWrites(model.APIChat), agent)
		spec.Model = run.ModelChoice{Script: s}
		spec.Bounds.MaxCostUSD = 0.025
		r := newRunner(t)
		r.Prices = prices
		res, err := r.Run(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Receipt.Failure; res.Receipt.Status != bundle.StatusFailed || f == nil || f.Code != "bound_exceeded" || res.Receipt.Usage.ModelCalls != 1 {
			t.Fatalf("agent %q: status %s failure %+v usage %+v", agent.Name, res.Receipt.Status, f, res.Receipt.Usage)
		}
		events, _ := os.ReadFile(filepath.Join(res.Dir, bundle.EventsFile))
		if !strings.Contains(string(events), "max_cost_usd=0.025") {
			t.Fatalf("agent %q: no event names the bound:\n%s", agent.Name, events)
		}
		if res.Receipt.Bounds.MaxCostUSD != 0.025 {
			t.Fatalf("the receipt's bounds: %+v", res.Receipt.Bounds)
		}
	}

	spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{})
	spec.Model = run.ModelChoice{Script: s}
	spec.Bounds.MaxCostUSD = 1
	_, err = newRunner(t).Run(context.Background(), spec)
	var setup *run.SetupError
	if !errors.As(err, &setup) || !strings.Contains(err.Error(), `max_cost_usd=1: model "priced-model" has no price`) || !strings.Contains(err.Error(), "prices file") {
		t.Fatalf("a model without a price under max_cost_usd: %v", err)
	}
}

// A live provider spends money on the models its profile names and on no
// other: an agent that names a pricier model than its profile is refused
// the call, and the run fails saying which model and how to allow it; a
// model the profile lists in models is served.
func TestALiveProfileServesOnlyTheModelsItNames(t *testing.T) {
	sc, err := script.Parse("m.yaml", []byte(twoWrites(model.APIChat)))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(sc, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	chat := testutil.TestAgent(t, "chatagent")
	for _, tc := range []struct {
		name   string
		models []string
		code   string
	}{
		{"not in the profile", nil, "model_not_allowed"},
		{"in the profile's models", []string{"pricier-model"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := externalSpec(t, twoWrites(model.APIChat), external.Agent{Name: "chat", Kind: external.KindCommand, Command: []string{chat, "{{task}}"},
				Env: map[string]string{"OPENAI_MODEL": "pricier-model"}}) // the agent names its own model
			spec.Model = run.ModelChoice{Profile: &model.Profile{Name: "live", Model: "test-model", Models: tc.models},
				Endpoint: model.Endpoint{BaseURL: ep.URL, Model: "test-model", APIKey: "k"}}
			res, err := newRunner(t).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Receipt.Failure
			if tc.code == "" {
				if f != nil {
					t.Fatalf("a model the profile lists was refused: %+v", f)
				}
				return
			}
			if f == nil || f.Code != tc.code || !strings.Contains(f.Message, `model "pricier-model" is not the run's: its model profile allows test-model`) || res.Receipt.Usage.ModelCalls != 0 {
				t.Fatalf("status %s failure %+v usage %+v", res.Receipt.Status, f, res.Receipt.Usage)
			}
		})
	}
}

// A live profile of another API than the agent speaks is refused before
// the agent starts, naming both.
func TestAnAgentAndAProfileOfAnotherAPIAreRefused(t *testing.T) {
	for _, tc := range []struct {
		agent external.Agent
		kind  string
		want  string
	}{
		{external.Native(), model.KindAnthropic, "model live is a profile of kind anthropic, and agent native speaks the chat API"},
		{external.Agent{Name: "claude", Kind: external.KindClaude}, model.KindOpenAI, "model live is a profile of kind openai, and agent claude speaks the messages API"},
		{external.Agent{Name: "gemini", Kind: external.KindGemini}, model.KindAnthropic, "model live is a profile of kind anthropic, and agent gemini speaks the gemini API"},
	} {
		spec := externalSpec(t, twoWrites(model.APIChat), tc.agent)
		spec.Model = run.ModelChoice{Profile: &model.Profile{Name: "live", Kind: tc.kind},
			Endpoint: model.Endpoint{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Kind: tc.kind, APIKey: "k"}}
		_, err := newRunner(t).Run(context.Background(), spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v", tc.agent.Name, tc.kind, err)
		}
	}
}
