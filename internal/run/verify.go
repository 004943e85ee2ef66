package run

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/tools"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// verify runs the check commands and asks the verifier model. It returns
// what goes on the receipt and, when the run must fail, why.
func (l *live) verify(ctx context.Context, ws *workspace.Workspace, res agent.Outcome) (*bundle.Verify, string) {
	v := &bundle.Verify{Verdict: "pass", Confidence: 1}
	var failures []string
	if len(l.spec.Checks) > 0 {
		l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageChecking, Checks: len(l.spec.Checks)})
		limit := l.spec.CheckTimeout
		if limit <= 0 {
			limit = 10 * time.Minute
		}
		for _, cmd := range l.spec.Checks {
			out, code, elapsed, err := tools.RunShell(ctx, ws.Dir, cmd, l.env(ws.Dir), limit, l.confine(ws.Dir, nil), nil)
			out, _ = tools.Cut(strings.TrimSpace(out), 2000)
			r := bundle.CheckResult{Phase: "verify", Name: cmd, Passed: err == nil && code == 0}
			switch {
			case err != nil:
				r.Broken, r.Detail = true, err.Error()
			case code == -1:
				r.Detail = fmt.Sprintf("killed after the %s time limit", limit)
			default:
				r.Detail = fmt.Sprintf("exit %d after %.1fs", code, elapsed.Seconds())
			}
			if out != "" {
				r.Detail += "\n" + out
			}
			r.Detail = l.redact.String(r.Detail)
			l.rec.event(bundle.CheckResultEvent{Phase: r.Phase, Name: r.Name, Passed: r.Passed, Broken: r.Broken})
			l.progress("    check %s: %s", cmd, map[bool]string{true: "passed", false: "failed"}[r.Passed])
			v.Checks = append(v.Checks, r)
			if !r.Passed {
				failures = append(failures, fmt.Sprintf("check %q failed", cmd))
			}
		}
		if len(failures) > 0 {
			v.Verdict, v.Issues = "fail", append(v.Issues, failures...)
		}
	}
	if l.spec.Verifier != nil && ctx.Err() == nil {
		l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageVerifying, Model: l.spec.Verifier.name()})
		opinion := l.askVerifier(ctx, ws)
		v.Model = opinion.Model
		v.ParseOK = opinion.ParseOK
		v.Issues = append(v.Issues, opinion.Issues...)
		v.Confidence = opinion.Confidence
		switch {
		case opinion.Verdict == "fail":
			v.Verdict = "fail"
			failures = append(failures, "the verifier judged the result a failure")
		case opinion.Verdict == "unsure" && v.Verdict == "pass":
			v.Verdict = "unsure"
		}
	}
	return v, strings.Join(failures, "; ")
}

const verifierPrompt = `You review the work of a coding agent. Judge only from the task, the criteria, what is out of scope, and the diff.
Answer with one JSON object and nothing else: {"verdict": "pass" or "fail", "issues": ["..."], "confidence": a number from 0 to 1}.`

// askVerifier asks the verifier model for its opinion. An answer that is
// not the JSON asked for is recorded as unparseable (parse_ok false, verdict
// unsure), never guessed.
func (l *live) askVerifier(ctx context.Context, ws *workspace.Workspace) bundle.Verify {
	no := false
	yes := true
	v := bundle.Verify{Verdict: "unsure", Model: l.spec.Verifier.name()}
	patch, _, err := ws.Diff(ctx)
	if err != nil {
		v.Issues = []string{"verifier not asked: " + err.Error()}
		return v
	}
	client, closeFn, err := l.client(*l.spec.Verifier)
	if err != nil {
		v.Issues = []string{"verifier not started: " + err.Error()}
		return v
	}
	defer closeFn()
	var b strings.Builder
	fmt.Fprintf(&b, "Task:\n%s\n", l.spec.Task)
	if len(l.spec.Criteria) > 0 {
		fmt.Fprintf(&b, "\nCriteria:\n- %s\n", strings.Join(l.spec.Criteria, "\n- "))
	}
	if len(l.spec.OutOfScope) > 0 {
		fmt.Fprintf(&b, "\nOut of scope:\n- %s\n", strings.Join(l.spec.OutOfScope, "\n- "))
	}
	diffText, _ := tools.Cut(patch, 60000)
	if diffText == "" {
		diffText = "(no changes)"
	}
	fmt.Fprintf(&b, "\nDiff:\n%s\n", diffText)
	resp, err := client.Complete(ctx, model.Request{Messages: []model.Message{
		{Role: model.RoleSystem, Content: verifierPrompt}, {Role: model.RoleUser, Content: b.String()}}})
	if err != nil {
		v.Issues = []string{"verifier failed: " + err.Error()}
		return v
	}
	var answer struct {
		Verdict    string   `json:"verdict"`
		Issues     []string `json:"issues"`
		Confidence *float64 `json:"confidence"`
	}
	text := strings.TrimSpace(resp.Message.Content)
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
	err = json.Unmarshal([]byte(strings.TrimSpace(text)), &answer)
	if err != nil || (answer.Verdict != "pass" && answer.Verdict != "fail") || answer.Confidence == nil || *answer.Confidence < 0 || *answer.Confidence > 1 {
		v.ParseOK = &no
		v.Issues = []string{"the verifier's answer is not the JSON asked for: " + bundle.Line(resp.Message.Content, 300)}
		l.rec.event(bundle.VerifyUnparseableEvent{Answer: bundle.Line(resp.Message.Content, 1000)})
		return v
	}
	v.ParseOK = &yes
	v.Verdict, v.Issues, v.Confidence = answer.Verdict, answer.Issues, *answer.Confidence
	l.rec.event(bundle.VerifyResultEvent{Verdict: v.Verdict, Issues: len(v.Issues), Confidence: v.Confidence})
	return v
}
