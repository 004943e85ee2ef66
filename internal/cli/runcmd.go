package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/toolcache"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// runFlags are the flags shared by run and session resume.
type runFlags struct {
	fs         *flagSet
	data       *string
	task       *string
	criteria   stringList
	outOfScope stringList
	profile    *string
	scriptPath *string
	models     *string
	boundsFile *string
	checks     stringList
	verifyWith *string
	allow      stringList
	approve    *string
	stream     *bool
	agent      *string
	agents     *string
	sandbox    *string
	bounds     map[string]*string
}

func addRunFlags(fs *flagSet) *runFlags {
	f := &runFlags{fs: fs, bounds: map[string]*string{}}
	f.data = fs.String("data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	f.task = fs.String("task", "", "what the agent should do (the first user message)")
	fs.Var(&f.criteria, "criteria", "a criterion for done (repeatable)")
	fs.Var(&f.outOfScope, "out-of-scope", "something the agent must leave alone (repeatable)")
	f.profile = fs.String("model", "", "model `profile` from models.yaml")
	f.scriptPath = fs.String("script", "", "model script `file` to serve as the model (instead of --model)")
	f.models = fs.String("models", "", "models.yaml `file` (default $PROCTOR_MODELS, else $XDG_CONFIG_HOME/proctor/models.yaml)")
	f.boundsFile = fs.String("bounds", "", "JSON or YAML `file` of bounds")
	fs.Var(&f.checks, "check", "check `command` run in the workspace after the agent finishes (repeatable)")
	f.verifyWith = fs.String("verify-with", "", "model `profile` that reviews the diff after the checks")
	fs.Var(&f.allow, "allow", "command `prefix` run_command may use without asking (repeatable)")
	f.approve = fs.String("approve", "", "how gated tools are decided: ask (a terminal prompt for what --allow does not cover) or policy (--allow only; default when there is no terminal)")
	f.stream = fs.Bool("stream", false, "stream model replies")
	f.agent = fs.String("agent", "", "the `agent` doing the work: native (proctor's own, default), codex, claude, gemini, qwen, opencode, copilot, command (the command after --), or a name from agents.yaml")
	f.agents = fs.String("agents", "", "agents.yaml `file` (default $PROCTOR_AGENTS, else beside models.yaml)")
	f.sandbox = fs.String("sandbox", "workspace", "how the run's commands are confined: workspace (write only the workspace), strict (also no read allow-list), or off (your own permissions)")
	for _, k := range bounds.Keys() {
		f.bounds[k] = fs.String(bounds.FlagName(k), "", "bound "+k+" (overrides env and --bounds)")
	}
	return f
}

// request is the run the flags ask for (launch.Build makes its spec),
// reading bounds in order: defaults, env, --bounds file, flags.
func (f *runFlags) request(env Env, name string) (launch.Request, error) {
	spec := launch.Request{Task: *f.task, Criteria: f.criteria, OutOfScope: f.outOfScope, Checks: f.checks, Allow: f.allow}
	b := bounds.Defaults()
	if err := bounds.FromEnv(&b, env.Getenv); err != nil {
		return spec, usagef(name, "%v", err)
	}
	if *f.boundsFile != "" {
		if err := bounds.FromFile(&b, *f.boundsFile); err != nil {
			return spec, usagef(name, "%v", err)
		}
	}
	var errs []error
	for _, k := range bounds.Keys() {
		if v := *f.bounds[k]; v != "" {
			errs = append(errs, bounds.Set(&b, k, v, "flag --"+bounds.FlagName(k)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return spec, usagef(name, "%v", err)
	}
	spec.Bounds = &b

	switch {
	case *f.profile != "" && *f.scriptPath != "":
		return spec, usagef(name, "give --model or --script, not both")
	case *f.scriptPath != "":
		s, err := script.Load(*f.scriptPath)
		if err != nil {
			return spec, usagef(name, "%v", err)
		}
		spec.Model = run.ModelChoice{Script: s, Stream: *f.stream}
	case *f.profile != "":
		m, err := f.liveModel(env, *f.profile, name)
		if err != nil {
			return spec, err
		}
		m.Stream = m.Stream || *f.stream
		spec.Model = m
	default:
		return spec, usagef(name, "name a model: --model PROFILE (from models.yaml) or --script FILE")
	}
	if *f.verifyWith != "" {
		m, err := f.liveModel(env, *f.verifyWith, name)
		if err != nil {
			return spec, err
		}
		spec.Verifier = &m
	}
	a, err := f.externalAgent(env, name)
	if err != nil {
		return spec, err
	}
	spec.Agent = a
	if spec.Sandbox, err = sandbox.ParseMode(*f.sandbox); err != nil {
		return spec, usagef(name, "--%v", err)
	}
	mode := *f.approve
	if mode == "" {
		mode = "policy"
		if isTerminal(env.Stdin) {
			mode = "ask"
		}
	}
	switch mode {
	case "policy":
	case "ask":
		if !isTerminal(env.Stdin) {
			return spec, usagef(name, "--approve ask needs a terminal to ask at; use --approve policy with --allow PREFIX")
		}
		spec.Ask = &agent.Terminal{In: env.Stdin, Out: env.Stderr, Who: osUser()}
	default:
		return spec, usagef(name, "--approve %q: want ask or policy", mode)
	}
	return spec, nil
}

// externalAgent is the agent --agent names; for "command", the command is
// the arguments after --.
func (f *runFlags) externalAgent(env Env, name string) (external.Agent, error) {
	if *f.agent == external.KindCommand {
		rest := f.fs.Args()
		if len(rest) == 0 {
			return external.Agent{}, usagef(name, "--agent command: give the agent's command after --, e.g. -- ./my-agent \"{{task}}\"")
		}
		return external.Agent{Name: filepath.Base(rest[0]), Kind: external.KindCommand, Command: rest}, nil
	}
	return f.findAgent(env, *f.agent, name)
}

// findAgent is the agent called agent: built in, or one of agents.yaml.
func (f *runFlags) findAgent(env Env, agent, name string) (external.Agent, error) {
	file, err := external.Load(agentsPath(*f.agents, env.Getenv))
	if err != nil {
		return external.Agent{}, usagef(name, "%v", err)
	}
	a, err := file.Find(agent)
	if err != nil {
		return external.Agent{}, usagef(name, "--agent: %v", err)
	}
	return a, nil
}

func (f *runFlags) liveModel(env Env, profile, name string) (run.ModelChoice, error) {
	path := modelsPath(*f.models, env.Getenv)
	ps, err := model.LoadProfiles(path)
	if err != nil {
		return run.ModelChoice{}, usagef(name, "%v", err)
	}
	p, err := ps.Find(profile)
	if err != nil {
		return run.ModelChoice{}, usagef(name, "%v", err)
	}
	ep, err := p.Endpoint(env.Getenv)
	if err != nil {
		return run.ModelChoice{}, usagef(name, "%v", err)
	}
	return run.ModelChoice{Profile: &p, Endpoint: ep, Stream: p.Stream}, nil
}

// keyEnvNames are the api_key_env variables of every profile in the models
// file at path (none when it cannot be read): they never reach the agent's
// commands or checks.
func keyEnvNames(path string) []string {
	ps, err := model.LoadProfiles(path)
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range ps.Profiles {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
		}
	}
	return names
}

func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "terminal"
}

// runner builds a runner over the data folder that indexes finished runs.
func newRunner(env Env, data string) (*run.Runner, error) {
	dir, err := dataDir(data, env.Getenv)
	if err != nil {
		return nil, err
	}
	if err := ensureDataDir(dir); err != nil {
		return nil, err
	}
	prices, err := loadPrices(env.Getenv) // what max_cost_usd costs runs at
	if err != nil {
		return nil, err
	}
	sb, err := newSandbox(env, dir)
	if err != nil {
		return nil, err
	}
	return &run.Runner{
		Prices:      prices,
		DataDir:     dir,
		Progress:    env.Stdout,
		Environ:     os.Environ(),
		KeyEnvNames: keyEnvNames(modelsPath("", env.Getenv)),
		Sandbox:     sb,
		Index: func(ctx context.Context, paths ...string) error {
			st, err := openIndex(ctx, env.Getenv, dir)
			if err != nil {
				return err
			}
			defer st.Close()
			_, err = index.New(st).Index(ctx, paths...)
			return err
		},
	}, nil
}

// newSandbox is how the commands of runs are confined: proctor itself as the
// helper, the read allow-list from $PROCTOR_SANDBOX_READ (folders separated
// by ':') besides the Go toolchain and module cache, and the warm toolchain
// caches of toolcacheDir, bounded by $PROCTOR_TOOLCACHE_SIZE ("off": none),
// Landlock at most at ABI $PROCTOR_LANDLOCK_ABI.
func newSandbox(env Env, data string) (*run.Sandbox, error) {
	self, err := os.Executable()
	if err != nil {
		self = "proctor"
	}
	read := run.DefaultRead(env.Getenv)
	for _, d := range filepath.SplitList(env.Getenv("PROCTOR_SANDBOX_READ")) {
		if d != "" {
			read = append(read, d)
		}
	}
	abi, err := sandbox.LandlockCap(env.Getenv)
	if err != nil {
		return nil, err
	}
	sb := &run.Sandbox{Mode: sandbox.ModeWorkspace, Helper: self, Read: read, Host: &sandbox.HostFiles{}, LandlockABI: abi}
	switch v := env.Getenv("PROCTOR_TOOLCACHE_SIZE"); v {
	case "off":
	default:
		store, err := toolcacheStore(env.Getenv, data)
		if err != nil {
			return nil, err
		}
		if v != "" {
			n, err := toolcache.ParseSize(v)
			if err != nil {
				return nil, fmt.Errorf("PROCTOR_TOOLCACHE_SIZE=%q: %w", v, err)
			}
			store.MaxBytes = n
		}
		store.Remove = func(p string) error { return sandbox.RemoveAll(context.Background(), self, p) }
		sb.Caches = &store
	}
	return sb, nil
}

// toolcacheStore is the store of warm toolchain caches:
// $PROCTOR_TOOLCACHE_DIR (where a CI caches it), else proctor/toolcache in
// the user's cache folder (userToolcache), which every data folder of the
// user shares — its layers are keyed by what made them, so a new data
// folder starts warm — else, for a user with no cache folder proctor may
// use (no home, one it cannot write, one not theirs alone), the data
// folder's own.
func toolcacheStore(getenv func(string) string, data string) (toolcache.Store, error) {
	if dir := getenv("PROCTOR_TOOLCACHE_DIR"); dir != "" {
		s, err := toolcache.In(dir)
		if err != nil {
			return s, fmt.Errorf("PROCTOR_TOOLCACHE_DIR: %w", err)
		}
		return s, nil
	}
	if dir := userToolcache(getenv); dir != "" {
		if s, err := toolcache.In(dir); err == nil {
			return s, nil
		}
	}
	return toolcache.In(filepath.Join(data, "toolcache"))
}

// userToolcache is proctor/toolcache in the user's cache folder:
// $XDG_CACHE_HOME when it is absolute, else ~/.cache; "" for a user with
// no home.
func userToolcache(getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "proctor", "toolcache")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".cache", "proctor", "toolcache")
	}
	return ""
}

// finishRun turns a run's result into the exit code.
func finishRun(res *run.Result, err error) error {
	var se *run.SetupError
	if errors.As(err, &se) {
		return err
	}
	if err != nil {
		return err
	}
	if code := res.ExitCode(); code != ExitOK {
		return exitError{code}
	}
	return nil
}

func runRun(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "run", "--dir PATH --task TEXT (--model PROFILE | --script FILE) [flags]", `
Run an agent on a copy of the folder PATH (the folder itself is never
changed). Prints one line per stage and tool call, then the bundle path and
the status. The diff waits for review: 'proctor apply RUN_ID' or the dashboard.

--session new starts a session; --session ID continues one (same workspace,
same conversation). --replay RUN_ID runs a recorded run again, offline.
--resume RUN_ID goes on from an interrupted run (stopped while it worked or
waited for an approval): its workspace as it was, its conversation rebuilt
from its recorded calls, and the calls it had not made asked about again;
give the model (--model or --script) and approvals (--allow, --approve) —
the task, source, agent and bounds are the interrupted run's.

Exit codes: 0 completed (passed, awaiting review, or a question for you);
1 failed; 2 wrong usage or set-up error; 130 interrupted.`)
	dir := fs.String("dir", "", "the source `folder` to work on (copied; never changed)")
	repo := fs.String("repo", "", "a git `repository` to work on instead of --dir: an https URL, owner/name (on --git-host), a local path or file:// URL")
	ref := fs.String("ref", "", "the `branch` or tag of --repo (default: its default branch)")
	commit := fs.String("commit", "", "the exact `sha` of --repo to start from (40 hex); the run fails unless that is what is checked out")
	tokenEnv := fs.String("token-env", "", "the environment `variable` holding a token that can read --repo (sent to git as an Authorization header, never recorded)")
	gitHost := fs.String("git-host", "github.com", "the `host` owner/name stands for")
	sources := sourcesFlag(fs)
	session := fs.String("session", "", "new, or the `id` of a session to continue")
	replay := fs.String("replay", "", "`run_id` of a recorded run to run again offline")
	resume := fs.String("resume", "", "`run_id` of an interrupted run to go on from")
	f := addRunFlags(fs)
	if err := parseFlags(fs, "run", args); err != nil {
		return err
	}
	if fs.NArg() > 0 && *f.agent != external.KindCommand {
		return usagef("run", "unexpected argument %q (the task goes in --task; an agent's command goes after --agent command --)", fs.Arg(0))
	}
	r, err := newRunner(env, *f.data)
	if err != nil {
		return err
	}
	r.KeyEnvNames = append(r.KeyEnvNames, keyEnvNames(modelsPath(*f.models, env.Getenv))...)
	if *resume != "" {
		return resumeRun(ctx, env, fs, f, r, *resume)
	}
	if *replay != "" {
		spec, cleanup, err := r.ReplaySpec(ctx, *replay)
		if err != nil {
			return usagef("run", "--replay: %v", err)
		}
		defer cleanup()
		return finishRun(r.Run(ctx, spec))
	}
	req, err := f.request(env, "run")
	if err != nil {
		return err
	}
	if *session == "" && *dir == "" && *repo == "" {
		return usagef("run", "name the folder to work on with --dir PATH, or a repository with --repo URL")
	}
	if *repo != "" {
		if *dir != "" {
			return usagef("run", "give --dir or --repo, not both")
		}
		req.Git, req.GitHost = &source.Git{Repo: *repo, Ref: *ref, Commit: *commit}, *gitHost
		gitURL, _ := req.Git.URL(*gitHost) // a bad repository fails the run, recorded
		if r.GitTokens, err = gitCredentials(env, r, "run", sourcesPath(*sources, env.Getenv), "--token-env", *tokenEnv, gitURL); err != nil {
			return err
		}
	} else if *ref != "" || *commit != "" || *tokenEnv != "" {
		return usagef("run", "--ref, --commit and --token-env go with --repo")
	}
	req.Dir, req.Session = *dir, *session
	return buildAndRun(ctx, r, "run", req)
}

// buildAndRun makes req's spec (launch.Build) and runs it in the
// foreground; the exit code says how it ended.
func buildAndRun(ctx context.Context, r *run.Runner, name string, req launch.Request) error {
	spec, err := launch.Build(ctx, r, req)
	if errs := launch.Fields(err); errs != nil {
		var problems []string
		for _, field := range slices.Sorted(maps.Keys(errs)) {
			problems = append(problems, "--"+field+": "+errs[field])
		}
		return usagef(name, "%s", strings.Join(problems, "; "))
	}
	res, err := r.Run(ctx, spec)
	var se *run.SetupError
	if errors.As(err, &se) {
		return usagef(name, "%v", se.Err)
	}
	return finishRun(res, err)
}

// resumeRun goes on from the interrupted run id (run.Runner.ResumeSpec) with
// the model and approvals of the flags; the rest is the interrupted run's.
func resumeRun(ctx context.Context, env Env, fs *flagSet, f *runFlags, r *run.Runner, id string) error {
	var other []string
	fs.Visit(func(fl *flag.Flag) {
		if !slices.Contains([]string{"resume", "data", "model", "script", "models", "stream", "allow", "approve", "verify-with"}, fl.Name) {
			other = append(other, "--"+fl.Name)
		}
	})
	if len(other) > 0 {
		return usagef("run", "--resume keeps the interrupted run's task, source, agent and bounds: leave out %s", strings.Join(other, ", "))
	}
	req, err := f.request(env, "run")
	if err != nil {
		return err
	}
	req.Resume = id
	return buildAndRun(ctx, r, "run", req)
}

func runApply(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "apply", "[--data DIR] RUN_ID | RUN_ID --from URL --to DIR", `
Show a finished run's diff and ask, at a terminal, whether to apply it to
the run's source folder. The diff is applied only when every file it touches
is still as it was when the run began; otherwise nothing is applied and the
conflicting files are named. Without a terminal, or with no answer (end of
input), nothing is decided (exit 2) and the run still awaits review. A run
that failed, errored or was interrupted is applied only with --force, which
the receipt and the audit log record.

With --from URL, the run was decided on a team's host (a run pushed there
from CI, say): its decision is fetched from the host (GET
/api/v1/runs/RUN_ID/decision, with the token in --token-env, a viewer's is
enough) and exactly the change approved there — the whole diff, or the
accepted parts with their edits — is applied to the folder --to names,
only when every file it touches is what the run started from (judged by
the recorded diff's blob ids); else nothing is applied. Exit 1 when the run
is not approved on the host, or a file is in the way.`)
	data := fs.String("data", "", "data `folder`")
	force := fs.Bool("force", false, "apply although the run failed, errored or was interrupted (recorded)")
	to := fs.String("to", "", "a git run (--repo): apply its approved change to this local `checkout` of the repository instead, conflict-checked against the run's pinned commit; with --from, the `folder` the host's decision is applied to")
	from := fs.String("from", "", "the team host's `URL` the run was decided on: apply its decision there to --to")
	tokenEnv := fs.String("token-env", "PROCTOR_TOKEN", "with --from: the `variable` that holds an API token of the host (unset or empty: a single-user host on loopback, whose local secret is read from --data)")
	if err := parseFlags(fs, "apply", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("apply", "name one RUN_ID")
	}
	if *from != "" {
		if *to == "" {
			return usagef("apply", "--from needs --to: the folder to apply the host's decision to")
		}
		dir, err := dataDir(*data, env.Getenv)
		if err != nil {
			return err
		}
		return applyFrom(ctx, env, fs.Arg(0), *from, *to, *tokenEnv, dir)
	}
	if *to != "" {
		r, err := newRunner(env, *data)
		if err != nil {
			return err
		}
		return applyTo(ctx, env, r, fs.Arg(0), *to, *force)
	}
	if !isTerminal(env.Stdin) {
		return usagef("apply", "needs a terminal to ask at; without one nothing is applied (review it in the dashboard)")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	return applyRun(ctx, env, r, fs.Arg(0), env.Stdin, *force)
}

// applicable is the bundle folder of the run apply names, and its bundle.
func applicable(r *run.Runner, runID string) (string, *bundle.Run, error) {
	dir, err := r.Records().RunDir(runID)
	if err != nil {
		return "", nil, usagef("apply", "%v", err)
	}
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	return dir, b, err
}

// applyTo applies a git run's change to a local checkout: an approved run
// at once; one not yet reviewed after a person approves it at the terminal
// (recorded through the gate like any review).
func applyTo(ctx context.Context, env Env, r *run.Runner, runID, checkout string, force bool) error {
	dir, b, err := applicable(r, runID)
	if err != nil {
		return err
	}
	rc := &b.Receipt
	if !rc.Source.IsGit() {
		return usagef("apply", "--to applies a git run (proctor run --repo); run %s worked on a %s source: use proctor apply %s", runID, rc.Source.Kind, runID)
	}
	if rc.Review == nil {
		if !isTerminal(env.Stdin) {
			return usagef("apply", "run %s is not reviewed yet: approve it in the dashboard, or run this at a terminal to approve it here", runID)
		}
		rv, rvw, err := reviewRun(ctx, r, runID, terminalReviewer(env.Stdin, env.Stdout, osUser(), checkout), force)
		if err != nil {
			return err
		}
		dir, rc = rvw.Dir, &rvw.Receipt
		if !rv.Approved {
			fmt.Fprintf(env.Stdout, "not applied: %s\n", rv.Reason)
			return nil
		}
	} else if !rc.Review.Approved {
		return usagef("apply", "run %s was rejected by %s: nothing to apply", runID, rc.Review.ReviewedBy)
	}
	offered, err := bundle.ReadFile(dir, bundle.OfferedFile(rc), bundle.DefaultLimits().MaxTextBytes)
	if err != nil {
		return fmt.Errorf("apply %s: read its diff: %w", runID, err)
	}
	files, err := patch.Parse(string(offered))
	if err != nil {
		return fmt.Errorf("apply %s: its diff: %w", runID, err)
	}
	abs, err := filepath.Abs(checkout)
	if err != nil {
		return usagef("apply", "--to %s: %v", checkout, err)
	}
	paths := patch.Paths(files)
	if err := workspace.ApplyTo(ctx, abs, rc.Source.CommitSHA, string(offered), paths); err != nil {
		return fmt.Errorf("apply %s to %s: %w", runID, abs, err)
	}
	fmt.Fprintf(env.Stdout, "applied to %s: %s\n", abs, strings.Join(paths, ", "))
	return nil
}

// applyRun reviews a run through the gate, asking y/n on in.
func applyRun(ctx context.Context, env Env, r *run.Runner, runID string, in io.Reader, force bool) error {
	rvw, err := r.Records().Review(runID)
	if err != nil {
		return usagef("apply", "%v", err)
	}
	target := rvw.Options.Tree
	if target == "" {
		target = "no folder here (the approved change is offered: proctor apply --to, or --from the host)"
	}
	rv, rvw, err := reviewRun(ctx, r, runID, terminalReviewer(in, env.Stdout, osUser(), target), force)
	if err != nil {
		return err
	}
	switch {
	case rv.Applied:
		fmt.Fprintf(env.Stdout, "applied to %s: %s\n", rvw.Options.Tree, strings.Join(rv.Changed, ", "))
	case rv.Approved:
		fmt.Fprintln(env.Stdout, "approved, nothing applied")
	default:
		fmt.Fprintf(env.Stdout, "not applied: %s\n", rv.Reason)
	}
	return nil
}
