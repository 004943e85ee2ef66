// Package launch owns making runs. Build makes every run's spec, whoever
// asks for it (the CLI, the dashboard, the API, a session's next message,
// the demo, a resume): its source folder named one way and its approver
// chain (the allowed commands, the approval rules of where it works, then
// a person). The Launcher checks the dashboard's and the API's launches
// field by field, queues their runs, and remembers queued runs on disk
// (<data>/queue) until they start, so that a restarted server launches
// them again. The server's handlers parse requests into its types and
// render what it answers.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/source"
)

// FieldError is what is wrong with one field of a request.
type FieldError struct{ Field, Problem string }

// FieldErrors are a request's problems by field, as the error a launch
// returns (errors.As, or Fields); a launch that was taken returns nil.
type FieldErrors map[string]string

// add keeps the first problem of each field.
func (fe FieldErrors) add(e *FieldError) {
	if e != nil && fe[e.Field] == "" {
		fe[e.Field] = e.Problem
	}
}

// Error is every problem, sorted, as one sentence.
func (fe FieldErrors) Error() string { return strings.Join(slices.Sorted(maps.Values(fe)), "; ") }

func fieldErrors(e *FieldError) FieldErrors { return FieldErrors{e.Field: e.Problem} }

// Fields are the problems by field of a launch's error: its FieldErrors,
// or for any other error the whole of it under "" (nil for none).
func Fields(err error) FieldErrors {
	var fe FieldErrors
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return fe
	}
	return FieldErrors{"": err.Error()}
}

// Request is a run to make, however it was asked for: the CLI's flags, the
// Launch form, the API, a session's next message, the demo, a resume.
type Request struct {
	ID        string      // "" is a new id
	Dir       string      // the source folder, or
	Origin    string      // what Dir, a copy made for the run, was chosen as (the demo project): its rules are the origin's
	Git       *source.Git // a repository on GitHost, or
	Session   string      // "new" (with Dir), or the session whose next run this is, or
	Resume    string      // the interrupted run to go on from, with its task, source, agent and bounds
	Addresses string      // the run whose requested changes this run makes
	GitHost   string      // what owner/name stands for; "" is github.com

	Task                         string
	Criteria, OutOfScope, Checks []string
	Model                        run.ModelChoice
	Verifier                     *run.ModelChoice
	Bounds                       *bundle.Bounds // nil: the defaults
	Agent                        external.Agent
	Sandbox                      sandbox.Mode
	Allow                        []string       // command prefixes allowed without asking
	Ask                          agent.Approver // who decides a call that neither Allow nor an approval rule allows (a person on the board or at a terminal); nil: it is refused
	Followed                     bool           // launched from the dashboard: its page follows it (run.Spec.Followed)
}

// Build makes req's run spec, the one way every run is made: its source
// folder named as source.Folder names it (so rules made for it apply), and
// its approver chain — the allowed commands, then the approval rules of
// where the run works (its folder, repository, session's folder or the
// interrupted run's), then Ask. The run itself checks the rest when it
// starts (run.Runner.Run).
func Build(ctx context.Context, r *run.Runner, req Request) (run.Spec, error) {
	spec := run.Spec{RunID: req.ID, Session: req.Session, Git: req.Git, GitHost: req.GitHost, Task: strings.TrimSpace(req.Task),
		Addresses: req.Addresses, Criteria: req.Criteria, OutOfScope: req.OutOfScope, Checks: req.Checks, Agent: req.Agent, Sandbox: req.Sandbox, Followed: req.Followed}
	if req.Bounds != nil {
		spec.Bounds = *req.Bounds
	} else {
		spec.Bounds = bounds.Defaults()
	}
	where := rules.Where{}
	switch {
	case req.Resume != "":
		resumed, err := r.ResumeSpec(ctx, req.Resume)
		if err != nil {
			return run.Spec{}, fieldErrors(&FieldError{"resume", err.Error()})
		}
		rc, _ := r.Records().Receipt(req.Resume) // ResumeSpec read it
		spec, where = resumed, rules.WhereRun(rc)
		spec.RunID = req.ID
	case req.Git != nil:
		where.Source, _ = req.Git.URL(req.GitHost) // a repository that is not one fails the run, recorded
	case req.Session != "" && req.Session != "new":
		if s, err := r.Records().LoadSession(req.Session); err == nil {
			where.Source = s.Source
		}
	case req.Dir != "":
		real, err := source.Folder(req.Dir)
		if err != nil {
			return run.Spec{}, fieldErrors(&FieldError{"dir", err.Error()})
		}
		spec.SourceDir, where.Source = real, real
		if req.Origin != "" {
			spec.SourceOrigin, where.Source = req.Origin, req.Origin
		}
	}
	if spec.RunID == "" {
		spec.RunID = run.NewRunID(time.Now())
	}
	spec.Model, spec.Verifier = req.Model, req.Verifier
	spec.Approver = agent.Chain{Policy: agent.Policy{Allow: req.Allow}, Rules: rules.Set{File: rules.At(r.DataDir), Where: where}, Next: req.Ask}
	return spec, nil
}

// Launcher launches runs with Runner through Queue.
type Launcher struct {
	Runner *run.Runner
	Queue  *jobs.Queue
	Board  *approval.Board // a person decides gated calls there; nil: the allowed commands only
	// SourceRoots are the folders (absolute) launched runs may work on, and
	// ScenarioRoots the folders suites are launched from.
	SourceRoots, ScenarioRoots []string
	Profiles                   func() (*model.Profiles, error) // models.yaml, read fresh; nil: none
	Agents                     func() (*external.File, error)  // agents.yaml, read fresh; nil: the built-in agents only
	Getenv                     func(string) string             // where provider keys come from; nil: the process environment
	Log                        *slog.Logger                    // nil logs nothing
	// GitHost is what owner/name stands for (default github.com).
	GitHost string

	mu     sync.Mutex
	suites map[string]bool // suites launched here
}

// getenv is where provider keys come from: Getenv, else the process
// environment.
func (l *Launcher) getenv() func(string) string {
	if l.Getenv == nil {
		return os.Getenv
	}
	return l.Getenv
}

// Task is a task launch, as the Launch form and the API send it: text
// fields, one item a line for the lists.
type Task struct {
	Root         string `form:"root"` // the index of the source root
	Path         string `form:"path"` // the folder under it
	Task         string `form:"task"`
	Criteria     string `form:"criteria"`
	OutOfScope   string `form:"out_of_scope"`
	Model        string `form:"model"`   // a profile of models.yaml…
	Agent        string `form:"agent"`   // native (""), codex, or an agents.yaml name
	Sandbox      string `form:"sandbox"` // workspace (""), strict or off
	Checks       string `form:"checks"`
	Allow        string `form:"allow"` // commands allowed without asking, prefixes
	MaxTurns     string `form:"max_turns"`
	MaxToolCalls string `form:"max_tool_calls"`
	Verifier     string `form:"verifier"`
	Script       string `form:"script"` // …or a model script under the source root
	// A git repository instead of a folder under a source root.
	Repo   string `form:"repo"`
	Ref    string `form:"ref"`
	Commit string `form:"commit"`

	addresses string // the run whose requested changes the run makes
}

// ResumeRun queues a run that goes on from the interrupted run runID (see
// run.Runner.ResumeSpec), with the model of t (the run's own profile when t
// names none); its gated calls are asked about on the board again, after
// the approval rules. It returns the new run's id, or the problems by field.
func (l *Launcher) ResumeRun(ctx context.Context, runID string, t Task) (string, error) {
	rc, err := l.Runner.Records().Receipt(runID)
	if err != nil {
		return "", fieldErrors(&FieldError{"resume", err.Error()})
	}
	if strings.TrimSpace(t.Model) == "" && strings.TrimSpace(t.Script) == "" {
		t.Model = rc.Model.ProfileName()
	}
	choice, ferr := l.modelChoice(t, false)
	if ferr != nil {
		if t.Model == "" && t.Script == "" {
			ferr = &FieldError{"script", "the run's model was a script: give a model script (or a profile) for the resumed run"}
		}
		return "", fieldErrors(ferr)
	}
	id := run.NewRunID(time.Now())
	spec, err := Build(ctx, l.Runner, Request{ID: id, Resume: runID, Model: choice, Ask: l.ask(id), Followed: true})
	if err != nil {
		return "", err
	}
	l.Queue.Submit(spec, "Resume: "+spec.Task)
	return id, nil
}

// RequestChanges records a reviewer's request for changes on run runID and
// queues the next run of its session (a run outside a session becomes
// one) with the request as its user turn, on the same workspace and agent,
// with the model of t (the run's own profile when t names none). It
// returns the new run's id, or the problems by field.
func (l *Launcher) RequestChanges(runID string, cr bundle.ChangeRequest, t Task) (string, error) {
	if strings.TrimSpace(t.Model) == "" && strings.TrimSpace(t.Script) == "" {
		rc, _ := l.Runner.Records().Receipt(runID) // unread, it has no profile: the request names the model
		t.Model = rc.Model.ProfileName()
	}
	if _, ferr := l.modelChoice(t, true); ferr != nil {
		if t.Model == "" && t.Script == "" {
			ferr.Problem = "the run's model was a script: choose a model profile or a model script for the run that makes the changes"
		}
		return "", fieldErrors(ferr)
	}
	session, message, err := l.Runner.Records().RequestChanges(runID, cr)
	if err != nil {
		return "", fieldErrors(&FieldError{"summary", err.Error()})
	}
	t.Task, t.addresses = message, runID
	id, err := l.Continue(session, t)
	if err == nil {
		if err := l.Runner.Records().LinkRequest(runID, id); err != nil {
			l.log().Warn("link the requested changes", "run", runID, "next", id, "err", err)
		}
	}
	return id, err
}

func (l *Launcher) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

// ask is who decides run id's gated calls after its allowed commands and
// the approval rules: a person on the board (none: they are refused).
func (l *Launcher) ask(id string) agent.Approver {
	if l.Board == nil {
		return nil
	}
	return l.Board.For(id)
}

// Continue queues the next run of a session: its next message, over the
// same workspace and conversation, with the model of t. It returns the run
// id, or the problems by field.
func (l *Launcher) Continue(session string, t Task) (string, error) {
	errs := FieldErrors{}
	if strings.TrimSpace(t.Task) == "" {
		errs.add(&FieldError{"task", "write the next message"})
	}
	choice, ferr := l.modelChoice(t, true)
	errs.add(ferr)
	name := t.Agent
	if name == "" {
		name = l.sessionAgent(session) // the agent of the session's last run goes on
	}
	a, ferr := l.Agent(name)
	errs.add(ferr)
	if missing := a.Missing(); ferr == nil && missing != "" {
		errs.add(&FieldError{"agent", missing})
	}
	if len(errs) > 0 {
		return "", errs
	}
	id := run.NewRunID(time.Now())
	spec, err := Build(context.Background(), l.Runner, Request{ID: id, Session: session, Task: t.Task, Addresses: t.addresses, Model: choice,
		Agent: a, Allow: lines(t.Allow), Ask: l.ask(id), Followed: true})
	if err != nil {
		return "", err
	}
	l.Queue.Submit(spec, spec.Task)
	return id, nil
}

func (l *Launcher) gitHost() string {
	if l.GitHost == "" {
		return "github.com"
	}
	return l.GitHost
}

// sessionAgent is the name of the agent of a session's last run ("" for
// proctor's own, or when it cannot be read).
func (l *Launcher) sessionAgent(id string) string {
	s, err := l.Runner.Records().LoadSession(id)
	if err != nil || len(s.Runs) == 0 {
		return ""
	}
	dir, err := l.Runner.Records().RunDir(s.Runs[len(s.Runs)-1])
	if err != nil {
		return ""
	}
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil || b.Receipt.Agent == nil {
		return ""
	}
	return b.Receipt.Agent.Name
}

// sourceDir resolves the chosen folder under a source root, refusing
// anything that leads outside the root (absolute paths, "..", symlinks).
func (l *Launcher) sourceDir(rootField, rel string) (string, *FieldError) {
	root, rel, ferr := l.openRoot(rootField, rel)
	if ferr != nil {
		return "", ferr
	}
	defer root.Close()
	info, err := root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &FieldError{"path", "no such folder under " + root.Name()}
	case err != nil:
		return "", &FieldError{"path", "that folder leads outside the root (a symlink); choose a folder inside it"}
	case !info.IsDir():
		return "", &FieldError{"path", "not a folder"}
	}
	real, err := source.Folder(filepath.Join(root.Name(), rel))
	if err != nil {
		return "", &FieldError{"path", err.Error()}
	}
	return real, nil
}

// readUnderRoot reads a file under a source root through an os.Root: a
// symlink out of the root is not followed.
func (l *Launcher) readUnderRoot(rootField, rel string) (string, []byte, *FieldError) {
	root, rel, ferr := l.openRoot(rootField, rel)
	if ferr != nil {
		if ferr.Field == "path" {
			ferr.Field = "script"
		}
		return "", nil, ferr
	}
	defer root.Close()
	data, err := root.ReadFile(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, &FieldError{"script", fmt.Sprintf("no file %q under %s: give a model script's path relative to the source root", rel, root.Name())}
	case err != nil:
		return "", nil, &FieldError{"script", "cannot read it (a file must be inside the root): " + err.Error()}
	}
	return filepath.Join(root.Name(), rel), data, nil
}

// openRoot opens the chosen source root and checks that rel is a plain
// path inside it. It returns the field at fault and why.
func (l *Launcher) openRoot(rootField, rel string) (*os.Root, string, *FieldError) {
	if rootField == "" && len(l.SourceRoots) == 1 {
		rootField = "0" // the only one
	}
	i, err := strconv.Atoi(rootField)
	if err != nil || i < 0 || i >= len(l.SourceRoots) {
		return nil, "", &FieldError{"root", "choose one of the source roots"}
	}
	rel = strings.TrimSpace(rel)
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return nil, "", &FieldError{"path", "give a folder relative to the root, not an absolute path"}
	}
	if rel == "" {
		rel = "."
	}
	if !filepath.IsLocal(rel) {
		return nil, "", &FieldError{"path", `".." is not allowed: the folder must be inside the root`}
	}
	root, err := os.OpenRoot(l.SourceRoots[i])
	if err != nil {
		return nil, "", &FieldError{"root", "the root cannot be read: " + err.Error()}
	}
	return root, rel, nil
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Launch checks a task launch and queues the run; it returns the run
// id, or the problems by field.
func (l *Launcher) Launch(v Task) (string, error) {
	return l.LaunchAs(run.NewRunID(time.Now()), v)
}

// LaunchAs is Launch under a given run id.
func (l *Launcher) LaunchAs(id string, v Task) (string, error) {
	spec, err := l.TaskSpec(id, v)
	if err != nil {
		return "", err
	}
	forget := l.remember(queuedRecord{RunID: id, Kind: "task", Values: v})
	spec.Started, spec.Dropped = forget, forget
	l.Queue.Submit(spec, spec.Task)
	return id, nil
}

// TaskSpec checks a task launch field by field and makes run id's spec
// (Build): its source (a folder under a source root, resolved, or a
// repository), task, bounds, model, agent, sandbox, verifier and approver
// chain.
func (l *Launcher) TaskSpec(id string, v Task) (run.Spec, error) {
	errs := FieldErrors{}
	var src string
	var git *source.Git
	if strings.TrimSpace(v.Repo) != "" {
		git = &source.Git{Repo: strings.TrimSpace(v.Repo), Ref: strings.TrimSpace(v.Ref), Commit: strings.TrimSpace(v.Commit)}
		if url, err := git.URL(l.gitHost()); err == nil && strings.HasPrefix(url, "file://") {
			// A browser may not read the server's own folders this way.
			errs.add(&FieldError{"repo", "from the dashboard a repository is an https URL or owner/name; a folder on this server goes in the folder field, under a source root"})
		} else if err != nil {
			field := "repo"
			switch err.Code {
			case source.CodeRefInvalid:
				field = "ref"
			case source.CodeCommitInvalid:
				field = "commit"
			}
			errs.add(&FieldError{field, err.Message})
		}
	} else {
		var ferr *FieldError
		src, ferr = l.sourceDir(v.Root, v.Path)
		errs.add(ferr)
	}
	if strings.TrimSpace(v.Task) == "" {
		errs.add(&FieldError{"task", "say what the agent should do"})
	} else if len(v.Task) > 20000 {
		errs.add(&FieldError{"task", "at most 20,000 characters"})
	}
	b := bounds.Defaults()
	for key, val := range map[string]string{"max_turns": v.MaxTurns, "max_tool_calls": v.MaxToolCalls} {
		if strings.TrimSpace(val) != "" {
			if err := bounds.Set(&b, key, val, "form"); err != nil {
				errs.add(&FieldError{key, strings.TrimPrefix(err.Error(), "form: "+key+": ")})
			}
		}
	}
	choice, ferr := l.modelChoice(v, false)
	errs.add(ferr)
	agent, ferr := l.Agent(v.Agent)
	errs.add(ferr)
	if missing := agent.Missing(); ferr == nil && missing != "" {
		errs.add(&FieldError{"agent", missing})
	}
	mode, err := sandbox.ParseMode(v.Sandbox)
	if err != nil {
		errs.add(&FieldError{"sandbox", err.Error()})
	}
	var verifier *run.ModelChoice
	if v.Verifier != "" {
		m, ferr := l.Profile(v.Verifier)
		if ferr != nil {
			errs.add(&FieldError{"verifier", ferr.Problem})
		}
		verifier = &m
	}
	if len(errs) > 0 {
		return run.Spec{}, errs
	}
	return Build(context.Background(), l.Runner, Request{ID: id, Dir: src, Git: git, GitHost: l.gitHost(), Task: v.Task, Criteria: lines(v.Criteria),
		OutOfScope: lines(v.OutOfScope), Checks: lines(v.Checks), Model: choice, Verifier: verifier, Bounds: &b, Agent: agent, Sandbox: mode,
		Allow: lines(v.Allow), Ask: l.ask(id), Followed: true})
}

func followUpNames() string {
	var names []string
	for _, b := range demo.FollowUps() {
		names = append(names, BuiltinModel+b.Name)
	}
	return strings.Join(names, ", ")
}

// BuiltinModel starts a Task's Model that names a built-in scripted model
// (demo.Builtins) instead of a profile: "builtin:notes".
const BuiltinModel = "builtin:"

// modelChoice is the model a form asks for: a model script under a source
// root (v.Root, v.Script), or else the profile v.Model. A followUp (a
// conversation's next message) takes only the built-in scripts that answer
// any conversation.
func (l *Launcher) modelChoice(v Task, followUp bool) (run.ModelChoice, *FieldError) {
	if name, ok := strings.CutPrefix(strings.TrimSpace(v.Model), BuiltinModel); ok && strings.TrimSpace(v.Script) == "" {
		sc, err := demo.Builtin(name)
		if err != nil {
			return run.ModelChoice{}, &FieldError{"model", err.Error()}
		}
		if followUp && !slices.ContainsFunc(demo.FollowUps(), func(b demo.BuiltinScript) bool { return b.Name == name }) {
			return run.ModelChoice{}, &FieldError{"model", fmt.Sprintf("the built-in script %q answers only its own task, not a next message: choose a model profile, a built-in script that answers any conversation (%s) or a model script of your own", name, followUpNames())}
		}
		return run.ModelChoice{Script: sc}, nil
	}
	if strings.TrimSpace(v.Script) == "" && strings.TrimSpace(v.Model) == "" {
		// Said beside the script field, the one a form without profiles offers.
		return run.ModelChoice{}, &FieldError{"script", "choose a model profile, or give a model script (a YAML file under the source root)"}
	}
	if strings.TrimSpace(v.Script) == "" {
		return l.Profile(v.Model)
	}
	if len(l.SourceRoots) == 0 {
		return run.ModelChoice{}, &FieldError{"script", "a model script is read from under a source root, and this server has none: start it with proctor serve --source-root DIR"}
	}
	path, data, ferr := l.readUnderRoot(v.Root, v.Script)
	if ferr != nil {
		return run.ModelChoice{}, ferr
	}
	sc, err := script.Parse(path, data)
	if err != nil {
		return run.ModelChoice{}, &FieldError{"script", err.Error()}
	}
	return run.ModelChoice{Script: sc}, nil
}

// Agent resolves an agent by name: native, a built-in kind, or one of agents.yaml
// (a browser can pick only what the server's owner configured, never a
// command of its own). A message says what is wrong.
func (l *Launcher) Agent(name string) (external.Agent, *FieldError) {
	if name = strings.TrimSpace(name); name == "" || name == external.KindNative {
		return external.Native(), nil // needs nothing of agents.yaml, broken or not
	}
	file, err := l.agents()
	if err != nil {
		return external.Agent{}, &FieldError{"agent", err.Error()}
	}
	a, err := file.Find(strings.TrimSpace(name))
	if err != nil {
		return external.Agent{}, &FieldError{"agent", err.Error()}
	}
	return a, nil
}

// AgentNames are the agents a form offers, native first.
func (l *Launcher) AgentNames() ([]string, error) {
	file, err := l.agents()
	if err != nil {
		return (&external.File{}).Names(), err
	}
	return file.Names(), nil
}

// MissingAgents are the agents a form offers whose program is not on the
// server's PATH, each with how to install it.
func (l *Launcher) MissingAgents() map[string]string {
	out := map[string]string{}
	file, err := l.agents() // read once, not once an agent
	if err != nil {
		return out
	}
	for _, name := range file.Names() {
		if a, err := file.Find(name); err == nil {
			if m := a.Missing(); m != "" {
				out[name] = m
			}
		}
	}
	return out
}

// agents is agents.yaml, read fresh (none configured: the built-in agents).
func (l *Launcher) agents() (*external.File, error) {
	if l.Agents == nil {
		return &external.File{Path: "agents.yaml"}, nil
	}
	return l.Agents()
}

// Profile resolves a model profile with its key (field "model").
func (l *Launcher) Profile(name string) (run.ModelChoice, *FieldError) {
	if l.Profiles == nil {
		return run.ModelChoice{}, &FieldError{"model", "no models.yaml is configured"}
	}
	ps, err := l.Profiles()
	if err != nil {
		return run.ModelChoice{}, &FieldError{"model", err.Error()}
	}
	p, err := ps.Find(name)
	if err != nil {
		return run.ModelChoice{}, &FieldError{"model", err.Error()}
	}
	ep, err := p.Endpoint(l.getenv())
	if err != nil {
		return run.ModelChoice{}, &FieldError{"model", err.Error()}
	}
	return run.ModelChoice{Profile: &p, Endpoint: ep, Stream: p.Stream}, nil
}

func (l *Launcher) Demo(id string) error {
	sc, err := demo.Script()
	if err != nil {
		return err
	}
	// Each demo run works on a fresh copy of the demo project (so each
	// has the bug to fix); the project itself, <data>/demo/invoice, is the
	// source its approval rules are made for and matched against.
	project := filepath.Join(l.Runner.DataDir, "demo", "invoice")
	src := filepath.Join(l.Runner.DataDir, "demo", id, "invoice")
	for _, dir := range []string{project, src} {
		if _, err := os.Stat(dir); err != nil {
			if err := demo.WriteFixture(dir); err != nil {
				return err
			}
		}
	}
	origin, err := source.Folder(project)
	if err != nil {
		return err
	}
	// In the dashboard the demo's command waits for a person to approve it,
	// so the demo shows approval requests as well as the diff review.
	req := Request{ID: id, Dir: src, Origin: origin, Task: demo.Task, Criteria: demo.Criteria, Model: run.ModelChoice{Script: sc}, Ask: l.ask(id), Followed: true}
	if l.Board == nil {
		req.Allow = demo.AllowedCommands
	}
	spec, err := Build(context.Background(), l.Runner, req)
	if err != nil {
		return err
	}
	forget := l.remember(queuedRecord{RunID: id, Kind: "demo"})
	spec.Started, spec.Dropped = forget, forget
	l.Queue.Submit(spec, "The demo: "+demo.Task)
	return nil
}

// launched notes that suite id was launched here.
func (l *Launcher) launched(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.suites == nil {
		l.suites = map[string]bool{}
	}
	l.suites[id] = true
}

// Launched reports whether this launcher launched suite id (which may
// have no indexed run yet).
func (l *Launcher) Launched(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.suites[id]
}
