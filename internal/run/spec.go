package run

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// ModelChoice says which model a run talks to: a live profile, or a script
// served on loopback.
type ModelChoice struct {
	Profile  *model.Profile // a live provider
	Endpoint model.Endpoint // the profile's endpoint with its key
	Script   *script.Script // a scripted model
	Stream   bool
}

func (m ModelChoice) name() string {
	if m.Script != nil {
		return m.Script.Model
	}
	return m.Endpoint.Model
}

// Spec is everything a run needs to know.
type Spec struct {
	RunID        string // optional: the id to run under (a launcher that redirects to the run before it starts)
	Kind         bundle.Kind
	SourceDir    string
	SourceKind   bundle.SourceKind // local (default) or fixture
	SourceOrigin string            // what SourceDir, a copy made for the run, was chosen as (bundle.Source.Origin)
	Git          *source.Git       // a git repository instead of SourceDir
	GitHost      string            // the host owner/name stands for; "" is github.com
	Task         string
	Addresses    string // the run whose requested changes this run makes (RequestChanges)
	Resumes      string // an interrupted run to go on from: its workspace, conversation and pending calls (Runner.ResumeSpec)
	Criteria     []string
	OutOfScope   []string
	Model        ModelChoice
	Bounds       bundle.Bounds
	Checks       []string      // check commands run in the workspace after the loop
	CheckTimeout time.Duration // per check command; default 10 minutes
	Verifier     *ModelChoice  // a verifier model, optional
	Approver     agent.Approver
	Agent        external.Agent // the agent doing the work; the zero value is proctor's own
	Scenario     *bundle.ScenarioRef
	Session      string // "" for none, "new", or a session id to continue

	// Scenario runs.
	Turns          []string     // user messages after Task, played in order
	Conversation   Conversation // budgets and replies of the conversation driver
	ScenarioChecks []check.Spec // judged after the conversation; a verdict.json is written
	ScenarioFile   string       // the scenario.yaml, recorded on the verdict
	Context        string       // session context added to the system prompt ($RUN_DIR, $WORKSPACE expanded by the caller's template)
	ContextFunc    func(runDir, workspace string) string
	Env            []string // the environment of tools and checks; nil: the process environment, scrubbed
	Workspace      workspace.Options
	OriginRemote   bool // give the workspace a bare origin remote in the run folder, pushed
	// Started is called once the run's bundle exists, and Dropped when a
	// queued run is cancelled before it starts: a launcher forgets its
	// queued record then.
	Started func()
	Dropped func()
	// Followed says someone may watch the run as it works (a launch from
	// the dashboard): proctor's own agent then writes its transcript as the
	// conversation grows, not only at the end. A run at a terminal, or a
	// case of a suite, is not (each write rewrites the whole transcript).
	Followed bool
	// Prepare runs in the new workspace before the agent (a scenario's setup
	// and ready); an error fails the run in the scenario domain.
	Prepare func(ctx context.Context, workspace string, env []string, confine *sandbox.Confinement) error
	// Sandbox is how this run's commands are confined (sandbox.ModeWorkspace,
	// ModeStrict, ModeOff); "" is the runner's.
	Sandbox sandbox.Mode
}

// Conversation holds what the conversation driver answers with and the
// budgets of the conversation as a whole.
type Conversation struct {
	MaxMessages     int           // model replies in the whole conversation; 0 no limit
	WallClock       time.Duration // 0 no limit
	YieldReply      string        // the answer to a question the agent asks
	MaxYieldReplies int
	Continue        string // the message after a turn that stopped on a bound
	MaxContinues    int
}

// SetupError is returned for a spec that cannot start (no bundle is written).
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }

func (e *SetupError) Unwrap() error { return e.Err }

// NewRunID makes a run id that sorts by time: 20261202-151000-k3f9qa.
func NewRunID(now time.Time) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return now.UTC().Format("20060102-150405") + "-" + string(b)
}

// SystemPrompt is the instructions the agent starts with.
func SystemPrompt(criteria, outOfScope []string) string {
	var b strings.Builder
	b.WriteString("You are a careful coding agent working in a copy of a repository (your working folder). " +
		"Use the tools to read and change files; paths are relative to the working folder. " +
		"Keep changes minimal and inside the task's scope. run_command needs approval and may be denied. " +
		"If you cannot go on without an answer from the user, call ask_user. " +
		"When you are done, reply without a tool call: a short summary of what you changed and how you checked it.")
	if len(criteria) > 0 {
		b.WriteString("\n\nCriteria:\n")
		for _, c := range criteria {
			b.WriteString("- " + c + "\n")
		}
	}
	if len(outOfScope) > 0 {
		if len(criteria) == 0 {
			b.WriteString("\n")
		}
		b.WriteString("\nOut of scope:\n")
		for _, c := range outOfScope {
			b.WriteString("- " + c + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// redactor hides the run's secrets wherever it records or shows text: the
// model's and verifier's keys, the git tokens, the literal tokens of the
// agent's env, and the secrets of proctor's environment.
func (r *Runner) redactor(spec Spec) *redact.Redactor {
	secrets := append([]string{spec.Model.Endpoint.APIKey}, r.GitTokens.Secrets()...)
	for k, v := range spec.Agent.Env { // agents.yaml's env: a literal token there is a secret too
		if redact.SecretName(k) {
			secrets = append(secrets, v)
		}
	}
	if spec.Verifier != nil {
		secrets = append(secrets, spec.Verifier.Endpoint.APIKey)
	}
	return redact.FromEnv(r.Environ, secrets...)
}

// startReceipt is the receipt of run id as it starts (status running).
func startReceipt(spec Spec, id string, start time.Time, mode sandbox.Mode) bundle.Receipt {
	kind := spec.Kind
	if kind == "" {
		kind = bundle.KindTask
	}
	srcKind := spec.SourceKind
	switch {
	case spec.Git != nil:
		srcKind = bundle.SourceGit
	case srcKind == "":
		srcKind = bundle.SourceLocal
	}
	rc := bundle.Receipt{
		Schema: bundle.ReceiptSchema, RunID: id, Kind: kind, Status: bundle.StatusRunning, Stage: bundle.StageAcquiringSource,
		Task: spec.Task, Criteria: spec.Criteria, OutOfScope: spec.OutOfScope,
		Source: bundle.Source{Kind: srcKind, Path: spec.SourceDir, Origin: spec.SourceOrigin},
		Model:  bundle.Model{Name: spec.Model.name()}, Bounds: spec.Bounds, StartedAt: start.UTC(), Scenario: spec.Scenario,
		Sandbox: string(mode), Addresses: spec.Addresses, Resumes: spec.Resumes,
	}
	if spec.Model.Profile != nil {
		rc.Model.Profile, rc.Model.BaseURL = spec.Model.Profile.Name, spec.Model.Profile.BaseURL
	} else if spec.Model.Script != nil {
		rc.Model.Profile = bundle.ScriptProfile(filepath.Base(spec.Model.Script.Path))
	}
	return rc
}

func validate(spec Spec) error {
	var problems []string
	if strings.TrimSpace(spec.Task) == "" {
		problems = append(problems, "task: missing; say what the agent should do")
	}
	switch {
	case spec.Git != nil && spec.SourceDir != "":
		problems = append(problems, "source: give a folder or a repository, not both")
	case spec.Git != nil && spec.Session != "":
		problems = append(problems, "source: a session works on a folder; a repository run is one run")
	case spec.Git != nil, spec.Resumes != "" && spec.SourceKind == bundle.SourceGit: // a resumed run copies the interrupted run's clone
	case spec.Session == "" || spec.Session == "new":
		if spec.SourceDir == "" {
			problems = append(problems, "source: missing; name the folder to work on")
		} else if info, err := os.Stat(spec.SourceDir); err != nil {
			problems = append(problems, fmt.Sprintf("source %s: %v", spec.SourceDir, errors.Unwrap(err)))
		} else if !info.IsDir() {
			problems = append(problems, fmt.Sprintf("source %s is not a folder", spec.SourceDir))
		}
	}
	if api := spec.Agent.API(); spec.Model.Profile != nil && api != "" && !spec.Model.Endpoint.Speaks(api) {
		problems = append(problems, fmt.Sprintf("model %s is a profile of kind %s, and agent %s speaks the %s API: pick a profile of the kind the agent speaks, or an agent that speaks %s (docs/models.md)",
			spec.Model.Profile.Name, spec.Model.Endpoint.Kind, agentName(spec.Agent), api, spec.Model.Endpoint.Kind))
	}
	if v := spec.Verifier; v != nil && v.Profile != nil && !v.Endpoint.Speaks(model.APIChat) {
		problems = append(problems, fmt.Sprintf("verifier model %s is a profile of kind %s; the verifier speaks chat completions: pick an openai-kind profile", v.Profile.Name, v.Endpoint.Kind))
	}
	if spec.Model.Script == nil && spec.Model.Profile == nil {
		problems = append(problems, "model: name a profile or a script")
	}
	if !spec.Agent.IsNative() && !spec.Agent.CanResume() && (spec.Session != "" || len(spec.Turns) > 0) {
		problems = append(problems, fmt.Sprintf("agent %s cannot continue a conversation, which sessions and scenario turns need: give it a resume: command in agents.yaml", spec.Agent.Name))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
