package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/tools"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// ScenarioOptions say how a scenario is run.
type ScenarioOptions struct {
	Repeat int             // 1-based repetition number
	Suite  string          // the suite run it belongs to
	Model  *ModelChoice    // overrides the scenario's model
	Agent  *external.Agent // overrides the scenario's agent
	// Profile resolves a scenario's model profile; nil refuses profiles.
	Profile func(name string) (ModelChoice, error)
}

// ScenarioSpec turns a scenario into the spec of one run.
func (r *Runner) ScenarioSpec(s *scenario.Scenario, opt ScenarioOptions) (Spec, error) {
	spec := Spec{
		Kind: bundle.KindScenario, SourceDir: filepath.Join(s.Dir, scenario.Fixture), SourceKind: bundle.SourceFixture,
		Task: s.Turns[0], Turns: s.Turns[1:], Criteria: s.Criteria, OutOfScope: s.OutOfScope, Bounds: s.Budgets.Bounds,
		Scenario:     &bundle.ScenarioRef{ID: s.ID, Path: s.Dir, Repeat: max(opt.Repeat, 1), Suite: opt.Suite, Tags: s.Tags},
		ScenarioFile: filepath.Join(s.Dir, scenario.File),
		Conversation: Conversation{MaxMessages: s.Budgets.MaxMessages, WallClock: s.Budgets.WallClock, YieldReply: s.YieldReply,
			MaxYieldReplies: s.Budgets.MaxYieldReplies, Continue: s.Continue, MaxContinues: s.Budgets.MaxContinues},
		ScenarioChecks: s.Checks,
		Approver:       &ScenarioApprover{Approvals: s.Approvals},
		Env:            ScenarioEnv(r.Environ, s),
		Workspace:      workspace.Options{Message: "fixture: initial state", NoGit: !s.Git},
		OriginRemote:   true,
	}
	if s.Source != nil {
		spec.Git, spec.SourceDir, spec.SourceKind = s.Source, "", ""
	}
	if spec.ScenarioChecks == nil {
		spec.ScenarioChecks = []check.Spec{}
	}
	spec.Agent, spec.Sandbox = s.Agent, s.Sandbox
	if opt.Agent != nil {
		spec.Agent = *opt.Agent
	} else if len(spec.Agent.Command) > 0 && (strings.HasPrefix(spec.Agent.Command[0], "./") || strings.HasPrefix(spec.Agent.Command[0], "../")) {
		// The scenario's own agent program is found beside scenario.yaml.
		spec.Agent.Command = append([]string{filepath.Join(s.Dir, spec.Agent.Command[0])}, spec.Agent.Command[1:]...)
	}
	if s.Context != "" {
		spec.ContextFunc = s.ExpandContext
	}
	switch {
	case opt.Model != nil:
		spec.Model = *opt.Model
	case s.Model.Script != "":
		sc, err := script.Load(filepath.Join(s.Dir, s.Model.Script))
		if err != nil {
			return spec, err
		}
		spec.Model = ModelChoice{Script: sc}
	case s.Model.Profile != "" && opt.Profile != nil:
		m, err := opt.Profile(s.Model.Profile)
		if err != nil {
			return spec, fmt.Errorf("scenario %s: %w", s.ID, err)
		}
		spec.Model = m
	default:
		return spec, fmt.Errorf("scenario %s: no model: add model.yaml (a model script) or model: {profile: NAME}, or pass --model", s.ID)
	}
	var steps []string // its setup and ready programs, those it has
	for _, name := range []string{scenario.SetupFile, scenario.ReadyFile} {
		if p := filepath.Join(s.Dir, name); fileExists(p) {
			steps = append(steps, p)
		}
	}
	if len(steps) == 0 {
		return spec, nil
	}
	spec.Prepare = func(ctx context.Context, ws string, env []string, confine *sandbox.Confinement) error {
		for _, p := range steps {
			out, code, _, err := tools.RunShell(ctx, ws, tools.ShellQuote(p), env, 5*time.Minute, confine, nil)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if code != 0 {
				return fmt.Errorf("%s: exit %d: %s", p, code, strings.TrimSpace(out))
			}
		}
		return nil
	}
	return spec, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ScenarioEnv is the environment of a scenario's tools and checks: the
// process environment without proctor's own and secret-looking variables
// (unless the scenario passes them by name), with the scenario's env over
// it.
func ScenarioEnv(environ []string, s *scenario.Scenario) []string {
	pass := map[string]bool{}
	for _, n := range s.PassEnv {
		pass[n] = true
	}
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := s.Env[k]; override {
			continue
		}
		if !pass[k] && (strings.HasPrefix(k, "PROCTOR_") || redact.SecretName(k)) {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range s.Env {
		out = append(out, k+"="+v)
	}
	return out
}

// ScenarioApprover decides gated calls by a scenario's rules: the first rule
// whose tool and argument pattern match decides, else the default. Each
// decision counts against max_decisions; past it every call is denied.
type ScenarioApprover struct {
	Approvals scenario.Approvals
	mu        sync.Mutex
	decisions int
}

// Approve implements agent.Approver.
func (a *ScenarioApprover) Approve(_ context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decisions++
	if max := a.Approvals.MaxDecisions; max > 0 && a.decisions > max {
		return agent.Decision{By: "scenario", Reason: fmt.Sprintf("budget exceeded: max_decisions=%d", max)}, nil
	}
	subject := req.Args
	if c := req.Command(); c != "" {
		subject = c
	}
	for i, r := range a.Approvals.Rules {
		if r.Tool == req.Tool && (r.Args == nil || r.Args.MatchString(subject)) {
			return agent.Decision{Approved: r.Decision == scenario.Approve, By: "scenario", Reason: fmt.Sprintf("rule %d (%s %s)", i+1, r.Decision, r.Tool)}, nil
		}
	}
	return agent.Decision{Approved: a.Approvals.Default == scenario.Approve, By: "scenario", Reason: "default " + string(a.Approvals.Default)}, nil
}
