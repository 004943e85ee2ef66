package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/proctor-dev/proctor/internal/sandbox"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/internal/workspace"
)

func runScenario(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor scenario <verb> [flags]

  run PATH… [--repeat K] [--parallel N] [--model PROFILE] [--filter TAG] [--junit FILE] [--json FILE]
                      run scenarios (a scenario folder, or folders of them) as a suite
  prove PATH…         check that scenarios are sound before anyone trusts them
  list PATH…          list the scenarios found under each PATH
  new NAME [--in DIR] scaffold a new, valid scenario
  from RUN_ID --out DIR [--max-bytes N]
                      make a regression scenario of a recorded run

The scenario format is described in docs/scenarios.md.
Exit codes of run: 0 all passed; 1 any failed; 2 a setup error or any broken check.
`)
		if len(args) == 0 {
			return usagef("scenario", "name a verb: run, prove, list, new or from")
		}
		return nil
	}
	switch args[0] {
	case "run":
		return scenarioRun(ctx, env, args[1:])
	case "prove":
		return scenarioProve(ctx, env, args[1:])
	case "list":
		return scenarioList(env, args[1:])
	case "new":
		return scenarioNew(env, args[1:])
	case "from":
		return scenarioFrom(ctx, env, args[1:])
	}
	return usagef("scenario", "unknown verb %q; want run, prove, list, new or from", args[0])
}

// withAnyTag is the scenarios with one of tags (all of them for no tags).
func withAnyTag(scenarios []*scenario.Scenario, tags []string) []*scenario.Scenario {
	if len(tags) == 0 {
		return scenarios
	}
	var kept []*scenario.Scenario
	for _, s := range scenarios {
		if slices.ContainsFunc(tags, s.HasTag) {
			kept = append(kept, s)
		}
	}
	return kept
}

// suiteChoices sets a suite's model profile lookup, and the model profile
// and agent that replace each scenario's own when given.
func (rf *runFlags) suiteChoices(env Env, profile string, opt *suite.Options) error {
	opt.Profile = func(name string) (run.ModelChoice, error) { return rf.liveModel(env, name, "scenario run") }
	if profile != "" {
		m, err := opt.Profile(profile)
		if err != nil {
			return err
		}
		opt.Model = &m
	}
	if *rf.agent == "" {
		return nil
	}
	for _, name := range strings.Split(*rf.agent, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			return usagef("scenario run", "--agent %q: an empty name in the list", *rf.agent)
		case name == external.KindCommand:
			return usagef("scenario run", "--agent command takes no command here: name an agent of agents.yaml")
		case slices.ContainsFunc(opt.Agents, func(a external.Agent) bool { return a.Name == name }):
			return usagef("scenario run", "--agent %q: %s is named twice", *rf.agent, name)
		}
		a, err := rf.findAgent(env, name, "scenario run")
		if err != nil {
			return err
		}
		opt.Agents = append(opt.Agents, a)
	}
	return nil
}

func scenarioRun(ctx context.Context, env Env, args []string) error {
	f, err := parseScenarioRun(env, args)
	if err != nil {
		return err
	}
	suiteGC(env.Getenv)
	r, err := newRunner(env, f.data)
	if err != nil {
		return err
	}
	var pusher *push.Pusher
	if f.pushTo != "" {
		if pusher, err = newPusher(env, "scenario run", f.pushTo, "PROCTOR_TOKEN", r.DataDir); err != nil {
			return err
		}
	}
	var baseID string
	if f.baseline != "" { // checked before the suite runs, not after
		if baseID, _, err = suite.ResolveSuite(r.DataDir, f.baseline); err != nil {
			return usagef("scenario run", "--baseline: %v", err)
		}
	}
	r.Sandbox.Mode = f.sandbox
	if r.GitTokens, err = gitCredentials(env, r, "scenario run", sourcesPath(*f.sources, env.Getenv), "", "", ""); err != nil {
		return err
	}
	scenarios, problems := scenario.Discover(f.paths...)
	scenarios = withAnyTag(scenarios, f.tags)
	if len(scenarios) == 0 && len(problems) == 0 {
		return usagef("scenario run", "no scenarios found under %s", strings.Join(f.paths, ", "))
	}
	opt := suite.Options{ID: f.id, Repeat: f.repeat, Parallel: f.parallel, Out: env.Stdout, Quiet: f.quiet, Shard: f.shard}
	if err := (&runFlags{models: &f.models, agent: &f.agent, agents: &f.agents}).suiteChoices(env, f.profile, &opt); err != nil {
		return err
	}
	if f.pack && len(scenarios) > 0 { // nothing to run, no pack
		cleanup, err := opt.UsePack(r.DataDir)
		if err != nil {
			return err
		}
		defer func() {
			if err := cleanup(); err != nil {
				fmt.Fprintf(env.Stderr, "warning: %v\n", err)
			}
		}()
		fmt.Fprintf(env.Stdout, "suite %s: recording its runs in %s\n", opt.ID, opt.Pack.Path())
	}
	rep := suite.Run(ctx, r, scenarios, problems, opt)
	return f.finish(ctx, env, r.DataDir, rep, pusher, opt, baseID)
}

// scenarioRunFlags are `proctor scenario run`'s flags, checked.
type scenarioRunFlags struct {
	data, profile, models, agent, agents, junit, jsonOut, baseline, setBaseline, pushTo, id string
	repeat, parallel                                                                        int
	quiet, pack                                                                             bool
	sandbox                                                                                 sandbox.Mode
	tags                                                                                    stringList
	sources                                                                                 *string
	shard                                                                                   suite.Shard
	cf                                                                                      compareFlags
	cmpOut                                                                                  suite.CompareOutput
	paths                                                                                   []string
}

func parseScenarioRun(env Env, args []string) (*scenarioRunFlags, error) {
	fs := newFlags(env, "scenario run", "[flags] PATH…", `
Run every scenario found under each PATH, K times each, N at a time. Prints
one PASS|FAIL|BROKEN line per check result and a verdict line per run (with
its bundle), then a summary with pass rates. A scenario folder that cannot be
read is reported and the others still run.
With --shard K/N it runs only the K-th of N even shares of the cases (the same
split on every machine), for one suite run on N machines: give every shard the
same --suite ID (in GitHub Actions, GitLab CI, Buildkite and CircleCI the CI's
run id is used), and push them to the team's host (--push URL) or index their
bundles into one data folder (docs/ci.md).
With --baseline NAME it then compares the suite with that baseline (or suite
id), as 'proctor compare' does, and --fail-on decides exit code 1 instead of a
failed run: a scenario failing in both suites does not fail the job with
--fail-on regression. --set-baseline NAME makes the finished suite the
baseline NAME (on the main branch, say). See docs/compare.md.
Exit codes: 0 all passed (with --baseline: the --fail-on condition does not
hold); 1 any failed (with --baseline: it holds); 2 a setup error or any
broken check.`)
	f := &scenarioRunFlags{}
	fs.StringVar(&f.data, "data", "", "data `folder`")
	fs.IntVar(&f.repeat, "repeat", 0, "runs per scenario (default: each scenario's repeat)")
	fs.IntVar(&f.parallel, "parallel", 1, "runs at a time")
	fs.StringVar(&f.profile, "model", "", "run every scenario against this model `profile` instead of its own model")
	fs.StringVar(&f.models, "models", "", "models.yaml `file`")
	fs.StringVar(&f.agent, "agent", "", "run every scenario with each of these `agents` (comma-separated) instead of its own: native, codex, claude, gemini, qwen, opencode, copilot, or names from agents.yaml")
	fs.StringVar(&f.agents, "agents", "", "agents.yaml `file` (default $PROCTOR_AGENTS, else beside models.yaml)")
	sandboxMode := fs.String("sandbox", "workspace", "how the runs' commands are confined: workspace, strict or off (docs/security.md)")
	fs.Var(&f.tags, "filter", "only scenarios with this `tag` (repeatable: any of them)")
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML to `file`")
	fs.StringVar(&f.jsonOut, "json", "", "write the results as JSON to `file`")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the cases that did not pass, then the summary")
	f.sources = sourcesFlag(fs)
	shardFlag := fs.String("shard", "", "run only the K-th of N shares of the cases, `K/N` (e.g. 2/4), for a suite run on N machines; the shards share the suite id (--suite, or the CI's run id)")
	suiteID := fs.String("suite", "", "the suite `id` (default: a new one; with --shard, one from the CI's run id, e.g. GITHUB_RUN_ID)")
	fs.StringVar(&f.baseline, "baseline", "", "compare the finished suite with this baseline `name` (or suite id), and exit 1 by --fail-on")
	fs.StringVar(&f.setBaseline, "set-baseline", "", "make the finished suite the baseline called `name` (when no case had a setup error)")
	f.cf.add(fs, "compare-")
	fs.StringVar(&f.pushTo, "push", "", "send the suite's runs to the team's host at this `URL` when it ends (its pack with --pack), with the token in $PROCTOR_TOKEN")
	fs.BoolVar(&f.pack, "pack", false, "record the runs in one pack file, <data>/runs/<suite id>.tar, instead of a folder each (for large suites; see docs/scenarios.md)")
	if err := parseFlags(fs, "scenario run", args); err != nil {
		return nil, err
	}
	if f.paths = fs.Args(); len(f.paths) == 0 {
		return nil, usagef("scenario run", "name at least one scenario folder")
	}
	if f.repeat < 0 || f.parallel < 1 {
		return nil, usagef("scenario run", "--repeat and --parallel must be positive")
	}
	var err error
	if f.cmpOut, err = f.cf.check("scenario run", "compare-"); err != nil {
		return nil, err
	}
	if f.baseline == "" && (f.cf.failOn != "none" || f.cf.out != "") {
		return nil, usagef("scenario run", "--fail-on and --compare-out compare with a baseline: give --baseline NAME too")
	}
	if *shardFlag != "" {
		if f.shard, err = suite.ParseShard(*shardFlag); err != nil {
			return nil, usagef("scenario run", "--shard %v", err)
		}
	}
	if f.id, err = suiteIDOf(*suiteID, f.shard, env.Getenv); err != nil {
		return nil, err
	}
	if f.setBaseline != "" && !bundle.ValidID(f.setBaseline) {
		return nil, usagef("scenario run", "--set-baseline %q: use letters, digits, '.', '_' and '-'", f.setBaseline)
	}
	if f.sandbox, err = sandbox.ParseMode(*sandboxMode); err != nil {
		return nil, usagef("scenario run", "--%v", err)
	}
	return f, nil
}

// finish writes a finished suite's reports, pushes it, makes it a
// baseline and compares it with one, as the flags ask, and says how the
// command ends.
func (f *scenarioRunFlags) finish(ctx context.Context, env Env, data string, rep suite.Report, pusher *push.Pusher, opt suite.Options, baseID string) error {
	if f.junit != "" {
		if err := rep.WriteJUnit(f.junit); err != nil {
			return err
		}
	}
	if f.jsonOut != "" {
		if err := rep.WriteJSON(f.jsonOut); err != nil {
			return err
		}
	}
	code := rep.ExitCode()
	pushed := pusher == nil || pushSuite(ctx, env, pusher, rep, opt)
	if !pushed && code == ExitOK {
		code = ExitProblems
	}
	if f.setBaseline != "" && code != ExitUsage {
		if err := suite.SetBaseline(ctx, data, f.setBaseline, rep.ID, "cli:"+osUser()); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "baseline %s is suite %s\n", f.setBaseline, rep.ID)
	}
	if baseID != "" {
		if code == ExitUsage { // a setup error or a broken check: no comparison can say the suite is fine
			return exitError{code}
		}
		fmt.Fprintln(env.Stdout)
		if err := compareSuites(ctx, env, "scenario run", data, baseID, rep.ID, f.cmpOut, f.cf.out); err != nil || pushed {
			return err
		}
		return exitError{ExitProblems} // compared fine, but the host lacks runs
	}
	if code != 0 {
		return exitError{code}
	}
	return nil
}

// pushSuite sends a finished suite's runs to the host: its pack, or each
// run's folder; it reports whether every one is on the host.
func pushSuite(ctx context.Context, env Env, p *push.Pusher, rep suite.Report, opt suite.Options) bool {
	var paths []string
	if opt.Pack != nil {
		paths = []string{opt.Pack.Path()}
	} else {
		for _, c := range rep.Cases {
			if c.Ran() {
				paths = append(paths, c.Dir)
			}
		}
	}
	if len(paths) == 0 {
		return true
	}
	fmt.Fprintf(env.Stdout, "pushing the suite's runs to %s\n", p.URL)
	results, err := p.Push(ctx, paths...)
	if err != nil {
		fmt.Fprintf(env.Stdout, "FAILED to push: %v\n", err)
		return false
	}
	return reportPushes(env, results)
}

// suiteIDOf is the suite id a run uses: the one given, else for a shard
// the one its CI run's variables make (so that every shard of the run
// shares it), else "" (a new one).
func suiteIDOf(given string, shard suite.Shard, getenv func(string) string) (string, error) {
	if given != "" {
		if !bundle.ValidID(given) {
			return "", usagef("scenario run", "--suite %q: use letters, digits, '.', '_' and '-' (at most 128)", given)
		}
		return given, nil
	}
	if shard.All() {
		return "", nil
	}
	for _, ci := range []struct{ name, id, attempt string }{
		{"github", "GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"},
		{"gitlab", "CI_PIPELINE_ID", ""},
		{"buildkite", "BUILDKITE_BUILD_ID", "BUILDKITE_RETRY_COUNT"},
		{"circleci", "CIRCLE_WORKFLOW_ID", ""},
	} {
		run := getenv(ci.id)
		if run == "" {
			continue
		}
		id := "suite-" + ci.name + "-" + run
		if a := getenv(ci.attempt); ci.attempt != "" && a != "" {
			id += "-" + a // a re-run of the job is a suite of its own
		}
		if !bundle.ValidID(id) {
			return "", usagef("scenario run", "$%s %q does not make a suite id; give --suite ID", ci.id, run)
		}
		return id, nil
	}
	return "", usagef("scenario run", "--shard %s: give --suite ID, the same for every shard, so that the shards make one suite (in GitHub Actions, GitLab CI, Buildkite and CircleCI the run's id is used)", shard)
}

func scenarioList(env Env, args []string) error {
	fs := newFlags(env, "scenario list", "PATH…", "List the scenarios found under each PATH, and the folders that cannot be read.")
	if err := parseFlags(fs, "scenario list", args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("scenario list", "name at least one folder")
	}
	scenarios, problems := scenario.Discover(fs.Args()...)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTURNS\tCHECKS\tREPEAT\tTAGS\tMADE FROM\tDESCRIPTION")
	for _, s := range scenarios {
		from := s.MadeFrom
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", s.ID, len(s.Turns), len(s.Checks), s.Repeat, strings.Join(s.Tags, ","), from, bundle.Line(s.Description, 60))
	}
	tw.Flush()
	for _, p := range problems {
		fmt.Fprintf(env.Stdout, "cannot read %s: %v\n", p.Path, p.Err)
	}
	if len(problems) > 0 {
		return exitError{ExitProblems}
	}
	return nil
}

// scenarioProve checks the rules that make a scenario trustworthy.
// prove checks one scenario's rules (readable, deterministic, setup,
// not-vacuous, solvable), saying each result.
func prove(ctx context.Context, r *run.Runner, red *redact.Redactor, scratch string, s *scenario.Scenario, say func(ok bool, id, rule, detail string)) {
	file := filepath.Join(s.Dir, scenario.File)
	say(true, s.ID, "readable", file)
	if len(s.Checks) == 0 {
		say(false, s.ID, "deterministic", file+": no checks; add checks: or a checks/ executable")
		return
	}
	say(true, s.ID, "deterministic", fmt.Sprintf("%d checks", len(s.Checks)))
	spec, err := r.ScenarioSpec(s, run.ScenarioOptions{})
	if err != nil {
		say(false, s.ID, "solvable", err.Error())
		return
	}
	// Untouched fixture: setup and ready, then the checks.
	ws, err := workspace.CreateWith(ctx, spec.SourceDir, filepath.Join(scratch, s.ID, "untouched"), workspace.Limits{}, spec.Workspace)
	if err != nil {
		say(false, s.ID, "setup", err.Error())
		return
	}
	if spec.Prepare != nil {
		if err := spec.Prepare(ctx, ws.Dir, spec.Env, nil); err != nil {
			say(false, s.ID, "setup", err.Error())
			return
		}
	}
	say(true, s.ID, "setup", "setup and ready succeed on the fixture")
	runDir := filepath.Join(scratch, s.ID, "untouched-run")
	os.MkdirAll(runDir, 0o755)
	results := check.Run(ctx, s.Checks, check.Input{Workspace: ws.Dir, RunDir: runDir, Env: spec.Env})
	allHold := true
	for _, res := range results {
		if res.Broken {
			say(false, s.ID, "not-vacuous", fmt.Sprintf("check %s is broken on the untouched fixture: %s", res.Name, red.String(res.Detail)))
		}
		allHold = allHold && res.Passed
	}
	say(!allHold, s.ID, "not-vacuous", map[bool]string{true: file + ": every check already holds on the untouched fixture; the scenario proves nothing", false: "some checks fail on the untouched fixture"}[allHold])
	if spec.Model.Script == nil {
		say(true, s.ID, "solvable", "not proven: the scenario has no model script (it uses a live profile)")
		return
	}
	res, err := r.Run(ctx, spec)
	switch {
	case err != nil:
		say(false, s.ID, "solvable", err.Error())
	case res.Verdict == nil || !res.Verdict.Passed:
		detail := fmt.Sprintf("the scripted run %s", res.Receipt.Status)
		if res.Verdict != nil {
			detail += ": first failure " + res.Verdict.FirstFailure
			if res.Verdict.Aborted != "" {
				detail += ", budget exceeded: " + res.Verdict.Aborted
			}
		}
		if res.Receipt.Failure != nil {
			detail += ": " + res.Receipt.Failure.Message
		}
		say(false, s.ID, "solvable", detail+" ("+filepath.Join(s.Dir, s.Model.Script)+"; run "+res.Dir+")")
	default:
		say(true, s.ID, "solvable", "the scripted run passes every check (run "+res.Dir+")")
	}
}

func scenarioProve(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "scenario prove", "PATH…", `
Check that each scenario is sound before anyone trusts its verdicts:
  readable      scenario.yaml parses and is valid; the fixture is there
  setup         setup, then ready, succeed on a copy of the fixture
  deterministic it has at least one check
  not-vacuous   not every check already holds on the untouched fixture
  solvable      with its model script, a run passes every check
Each failure names the rule and the file. Exit 1 when any rule fails.
The solvable run is recorded in a scratch data folder removed afterwards,
or with --data DIR in that data folder, where it is kept and indexed (to
open a run that failed in the dashboard).`)
	data := fs.String("data", "", "data `folder` to record the solvable runs in (default: a scratch folder, removed afterwards)")
	if err := parseFlags(fs, "scenario prove", args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("scenario prove", "name at least one scenario folder")
	}
	scratch, err := os.MkdirTemp("", "proctor-prove-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if *data == "" {
		*data = filepath.Join(scratch, "data")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	r.Progress = nil                 // the rules' lines are the output
	red := redact.FromEnv(r.Environ) // check output may print a secret
	scenarios, problems := scenario.Discover(fs.Args()...)
	failed := 0
	say := func(ok bool, id, rule, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(env.Stdout, "%s %s %s: %s\n", mark, id, rule, detail)
	}
	for _, p := range problems {
		say(false, p.Path, "readable", p.Err.Error())
	}
	for _, s := range scenarios {
		prove(ctx, r, red, scratch, s, say)
	}
	if failed > 0 {
		return exitError{ExitProblems}
	}
	return nil
}

func scenarioNew(env Env, args []string) error {
	fs := newFlags(env, "scenario new", "[--in DIR] NAME", "Scaffold a new scenario folder that passes 'proctor scenario prove'; edit it from there.")
	in := fs.String("in", "scenarios", "the `folder` to create it in")
	if err := parseFlags(fs, "scenario new", args); err != nil {
		return err
	}
	if fs.NArg() != 1 || !bundle.ValidID(fs.Arg(0)) {
		return usagef("scenario new", "name one scenario NAME (letters, digits, '.', '_', '-')")
	}
	dir := filepath.Join(*in, fs.Arg(0))
	if _, err := os.Stat(dir); err == nil {
		return usagef("scenario new", "%s already exists", dir)
	}
	if err := scenario.Scaffold(dir, fs.Arg(0)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "created %s\n  prove it: proctor scenario prove %s\n  run it:   proctor scenario run %s\n", dir, dir, dir)
	return nil
}

func runCheck(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "check", "[--data DIR] [--check NAME] RUN_ID", `
Run a scenario run's checks again, by hand, against its finished workspace,
and print the results the same way 'scenario run' does. The scenario is
read from the path on the run's receipt, so edits to its checks take effect.
Exit 0 when every check held, 1 when any failed, 2 when any is broken.`)
	data := fs.String("data", "", "data `folder`")
	only := fs.String("check", "", "run only the check with this `name`")
	if err := parseFlags(fs, "check", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("check", "name one RUN_ID")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	dir, err := r.Records().RunDir(fs.Arg(0))
	if err != nil {
		return usagef("check", "%v", err)
	}
	b, err := bundle.ReadRun(dir, bundle.DefaultLimits())
	if err != nil {
		return err
	}
	rc := b.Receipt
	if rc.Scenario == nil || rc.Scenario.Path == "" {
		return usagef("check", "run %s is not a scenario run; it has no checks", rc.RunID)
	}
	s, err := scenario.Load(rc.Scenario.Path)
	if err != nil {
		return usagef("check", "%v", err)
	}
	specs := s.Checks
	if *only != "" {
		specs = nil
		var names []string
		for _, c := range s.Checks {
			names = append(names, c.Name)
			if c.Name == *only {
				specs = append(specs, c)
			}
		}
		if specs == nil {
			return usagef("check", "scenario %s has no check %q (it has: %s)", s.ID, *only, strings.Join(names, ", "))
		}
	}
	in, err := checkInput(dir, b, r, s)
	if err != nil {
		return err
	}
	in.Tools = runAgentTools(env, rc, s)
	results := check.Run(ctx, specs, in)
	red := redact.FromEnv(r.Environ) // check output may print a secret
	code := ExitOK
	for _, res := range results {
		mark := "PASS"
		switch {
		case res.Broken:
			mark, code = "BROKEN", ExitUsage
		case !res.Passed:
			mark = "FAIL"
			if code == ExitOK {
				code = ExitProblems
			}
		}
		first, _, _ := strings.Cut(red.String(res.Detail), "\n")
		fmt.Fprintf(env.Stdout, "%s %s.%s: %s\n", mark, res.Phase, res.Name, first)
	}
	if code != ExitOK {
		return exitError{code}
	}
	return nil
}

// runAgentTools are the tools of the agent a scenario run was made with:
// the one its receipt names, found in agents.yaml when it is not the
// scenario's own (a suite's --agent), else the scenario's.
func runAgentTools(env Env, rc bundle.Receipt, s *scenario.Scenario) intent.Table {
	if rc.Agent == nil || rc.Agent.Name == s.Agent.Name {
		return s.Agent.Intents()
	}
	if file, err := external.Load(agentsPath("", env.Getenv)); err == nil {
		if a, err := file.Find(rc.Agent.Name); err == nil {
			return a.Intents()
		}
	}
	return intent.For("")
}

// checkInput rebuilds what checks judge from a finished run's bundle.
func checkInput(dir string, b *bundle.Run, r *run.Runner, s *scenario.Scenario) (check.Input, error) {
	ws := filepath.Join(dir, "workspace")
	if _, err := os.Stat(ws); err != nil {
		return check.Input{}, fmt.Errorf("run %s: its workspace %s is gone: %w", b.Receipt.RunID, ws, errors.Unwrap(err))
	}
	in := check.Input{Workspace: ws, RunDir: dir, Changed: b.Receipt.Changed, Env: r.CommandEnv(run.ScenarioEnv(r.Environ, s))}
	events, _, err := bundle.ReadEvents(dir, bundle.DefaultLimits())
	if err != nil {
		return in, err
	}
	var calls check.Calls
	for _, ev := range events {
		switch ev.Type {
		case bundle.EventToolCall:
			var d bundle.ToolCallEvent
			if json.Unmarshal(ev.Data, &d) == nil {
				calls.Add(d)
			}
		case bundle.EventAgentQuestion:
			var d bundle.AgentQuestionEvent
			if json.Unmarshal(ev.Data, &d) == nil {
				in.Questions = append(in.Questions, d.Question)
			}
		case bundle.EventToolResult:
			var d bundle.ToolResultEvent
			if json.Unmarshal(ev.Data, &d) == nil {
				calls.Add(d)
			}
		}
	}
	in.Calls = calls.List()
	if b.Verdict != nil {
		in.Aborted = b.Verdict.Aborted
	}
	for _, sec := range bundle.ParseTranscript(b.Transcript) {
		if sec.Role == "assistant" && !strings.Contains(sec.Body, "**tool call**") {
			in.Final = sec.Body
		}
	}
	return in, nil
}

// suiteGC trades memory for CPU in a suite, whose live heap is small at
// first (its scenarios, ~2 KB each) and grows by about a kilobyte a case:
// the collector runs when the heap has grown to 3× what is live (GOGC=200)
// instead of 2×, under a soft limit of 180 MiB — about where GOGC=100
// peaks at 100,000 cases — past which it runs as often as it did. At
// 10,000 packed cases that is 2.53 ms of CPU a case instead of 2.79, 110
// MiB instead of 81 (GOGC=400: 2.50 ms, 163 MiB); a limit of 160 MiB made
// the collector run too often at 100,000 (3.6 ms a case);
// BenchmarkScenarioRunPack. GOGC or GOMEMLIMIT in the environment are
// the user's choice, and win.
func suiteGC(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(200)
	debug.SetMemoryLimit(180 << 20)
}
