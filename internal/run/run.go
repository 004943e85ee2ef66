package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/toolcache"
	"github.com/proctor-dev/proctor/internal/tools"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Runner runs specs, writing bundles under DataDir.
type Runner struct {
	DataDir  string
	Progress io.Writer                                        // one line per stage and tool call; nil for none
	Index    func(ctx context.Context, paths ...string) error // indexes finished bundles; nil for none
	Environ  []string                                         // the process environment; secrets in it are redacted
	// KeyEnvNames are the variables that hold provider keys (every
	// profile's api_key_env): never passed to tools and checks, whatever
	// their names look like.
	KeyEnvNames []string
	Now         func() time.Time
	Retry       *model.RetryPolicy // overrides the profile's retry policy (tests)
	OnEvent     func(runID string, ev bundle.Event)
	// Scripts, when set, serves the runs' model scripts (a suite's runs
	// share one host); nil starts a host for each scripted run.
	Scripts *script.Host
	// RunsDir is where run folders are made; "" is DataDir/runs.
	RunsDir string
	// GitTokens are the tokens of git hosts runs clone from, each sent only
	// to its own host (sources.yaml, --token-env); secrets, never recorded.
	GitTokens source.Credentials
	// Sandbox confines the commands of runs (run_command, checks, setup,
	// external agents); nil runs them unconfined.
	Sandbox *Sandbox
	// Packed says a pack takes each run folder when its run ends (a suite
	// run with --pack, whose RunsDir is a scratch folder): the pack makes
	// the run durable, so the run does not sync its folder itself.
	Packed bool
	// PushedTrees map the sources of runs pushed from elsewhere to the
	// folders of this host their approvals write (serve --apply-pushed;
	// records.Data.PushedTrees); a pushed run of another source writes none.
	PushedTrees map[string]string
	// Prices cost a run held to max_cost_usd as it goes; the zero table is
	// the built-in one.
	Prices pricing.Table
}

// Result is a finished run.
type Result struct {
	RunID   string
	Dir     string
	Receipt bundle.Receipt
	Verdict *bundle.Verdict // scenario runs
}

// ExitCode is the CLI exit code for the run's status: 0 completed, 1 failed,
// 130 interrupted.
func (r *Result) ExitCode() int {
	switch r.Receipt.Status {
	case bundle.StatusPassed, bundle.StatusAwaitingReview, bundle.StatusAwaitingInput:
		return 0
	case bundle.StatusInterrupted:
		return 130
	}
	return 1
}

// CodeSandboxUnavailable is the failure code of a run whose host cannot
// give a wall of the sandbox (domain environment): found before the agent
// starts, or when a command's sandbox did not start.
const CodeSandboxUnavailable = "sandbox_unavailable"

// live is the state of one run in progress.
type live struct {
	r       *Runner
	spec    Spec
	id      string
	dir     string
	rec     *recorder
	receipt bundle.Receipt
	redact  *redact.Redactor
	calls   check.Calls       // every tool call, for checks
	asked   []string          // every question the agent asked, for checks
	notes   map[string]string // transcript flags by tool call id
	pending []model.ToolCall  // a resumed run's calls that had not run
	aborted string            // the budget that aborted the conversation
	price   pricing.Price     // the model's, when the run is held to max_cost_usd
	prices  pricing.Table     // every model's: an external agent's calls are each costed by the model they name
	verdict *bundle.Verdict

	tmp      string          // a private temp folder for confined commands, removed when the run ends
	cacheDir string          // the upper folders of the run's toolchain caches, beside tmp
	held     *toolcache.Held // the cache layers the run's commands see, taken at the first
	holdOnce sync.Once
	// plainCaches: the data folder cannot hold the caches' overlays, so
	// the commands' caches are plain folders of the run's own.
	plainCaches bool
	// The run's private folder is made once, by its first confined command.
	privateOnce    sync.Once
	privateErr     error
	releasePrivate func()
	// sandboxID is the host id the run's commands run as (makePrivate
	// leases it with the first of them); wrote are the folders they could write, which reclaim
	// gives back when the run ends.
	sandboxID *sandbox.ID
	wroteMu   sync.Mutex
	wrote     []string
	// modKey, stdKey and scenarioKey are the keys of the cache layers the
	// run's commands see (layerKeys): the go.sum-verified modules of its
	// Go module, the trusted standard library's, and its scenario's warm.
	modKey, stdKey, scenarioKey string
	warm                        *warming // the warm stage, once a warm has work to do
	envFor                      string   // the workspace envCache was made for
	envCache                    []string // the environment of tools and checks (never changed by its users)
}

// progress prints a line of progress with every secret redacted: the task,
// tool arguments and errors may all hold one.
func (l *live) progress(format string, args ...any) {
	if l.r.Progress != nil {
		fmt.Fprintln(l.r.Progress, l.redact.String(fmt.Sprintf(format, args...)))
	}
}

// stage starts stage s: an event, and the receipt (and the index) say so at
// once, so a page or `?status=` never shows a stage the run has left.
func (l *live) stage(ctx context.Context, ev bundle.StageStartedEvent) {
	l.receipt.Stage = ev.Stage
	l.rec.event(ev)
	l.progress("  %s", strings.ReplaceAll(string(ev.Stage), "_", " "))
	l.saveReceipt(ctx)
}

// Redactor hides the secrets the runner knows of: its environment's, every
// profile's key (KeyEnvNames, read through getenv) and the git tokens — for
// what proctor writes from records outside a run (a scenario made of one).
func (r *Runner) Redactor(getenv func(string) string) *redact.Redactor {
	secrets := r.GitTokens.Secrets()
	for _, name := range r.KeyEnvNames {
		if v := getenv(name); v != "" {
			secrets = append(secrets, v)
		}
	}
	return redact.FromEnv(r.Environ, secrets...)
}

// Records are the records of the runner's data folder: its runs' bundles,
// sessions and change requests.
func (r *Runner) Records() records.Data {
	return records.Data{Dir: r.DataDir, PushedTrees: r.PushedTrees}
}

// now is the runner's clock (Now, else the wall clock). A runner is shared
// by concurrent runs, so Run never writes to it.
func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Run runs spec to the end. It returns a *SetupError, with nothing written,
// when the spec cannot start; otherwise a Result whose bundle holds
// everything, whatever happened.
func (r *Runner) Run(ctx context.Context, spec Spec) (*Result, error) {
	if err := validate(spec); err != nil {
		return nil, &SetupError{err}
	}
	prices := r.Prices
	if prices.Prices == nil {
		prices = pricing.Builtin()
	}
	price, err := bounds.PriceFor(spec.Bounds, prices, spec.Model.name())
	if err != nil {
		return nil, &SetupError{err}
	}
	var sess *sessionState
	if spec.Session != "" {
		if spec.Session != "new" {
			unlock, err := r.lockSession(ctx, spec.Session)
			if err != nil {
				return nil, &SetupError{err}
			}
			defer unlock()
		}
		var err error
		if sess, err = r.openSession(spec); err != nil {
			return nil, &SetupError{err}
		}
	}
	start := r.now()
	id := spec.RunID
	if id == "" {
		id = NewRunID(start)
	} else if !bundle.ValidID(id) {
		return nil, &SetupError{fmt.Errorf("run id %q is not a safe folder name", id)}
	}
	runs := r.RunsDir
	if runs == "" {
		runs = filepath.Join(r.DataDir, "runs")
	}
	dir := filepath.Join(runs, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &SetupError{fmt.Errorf("create run folder: %w", err)}
	}
	red := r.redactor(spec)
	onEvent := func(bundle.Event) {}
	if r.OnEvent != nil {
		onEvent = func(ev bundle.Event) { r.OnEvent(id, ev) }
	}
	rec, err := newRecorder(dir, r.Packed, red, r.now, onEvent)
	if err != nil {
		return nil, &SetupError{err}
	}
	l := &live{r: r, spec: spec, id: id, dir: dir, rec: rec, redact: red, price: price, prices: prices}
	l.receipt = startReceipt(spec, id, start, l.mode())
	l.progress("run %s: %s", id, bundle.Line(spec.Task, 80))
	// The receipt is written when the run starts (status running) and when it
	// ends; the stages in between are events, which are written live.
	if err := rec.receipt(&l.receipt, false); err != nil {
		rec.close()
		rec.release()
		return nil, &SetupError{err}
	}
	if spec.Started != nil {
		spec.Started()
	}
	if r.Index != nil {
		// Index the running run too, so that lists show it while it works.
		if err := r.Index(ctx, dir); err != nil {
			l.progress("  warning: index: %v", err)
		}
	}
	l.finish(ctx, l.execute(ctx, sess))
	return &Result{RunID: id, Dir: dir, Receipt: l.receipt, Verdict: l.verdict}, nil
}

// outcome is how execute ended, for finish to record.
type outcome struct {
	status  bundle.Status
	failure *bundle.Failure
	loop    *agent.Outcome
	errText string
}

func (l *live) fail(ctx context.Context, domain bundle.Domain, code string, err error, retryable bool) outcome {
	if ctx.Err() != nil {
		// Whatever failed did so because the run was stopped.
		return outcome{status: bundle.StatusInterrupted, errText: "Run interrupted."}
	}
	st := bundle.StatusError
	if domain == bundle.DomainAgent || domain == bundle.DomainCheck {
		st = bundle.StatusFailed
	}
	return outcome{status: st, failure: &bundle.Failure{Domain: domain, Stage: l.receipt.Stage, Code: code, Message: err.Error(), Retryable: retryable}, errText: err.Error()}
}

func (l *live) execute(ctx context.Context, sess *sessionState) outcome {
	if l.mode().Confined() {
		// Its private folder: a temp folder (the commands' TMPDIR and home)
		// and beside it the upper folders of its toolchain caches, which no
		// command sees; made as its first confined command starts.
		private := filepath.Join(privateRoot(l.r.DataDir), "run-"+l.id)
		l.tmp, l.cacheDir = filepath.Join(private, "tmp"), filepath.Join(private, "caches")
		defer func() {
			l.reclaim()
			l.held.Release()
			if l.releasePrivate != nil {
				l.releasePrivate()
			}
		}()
	}
	ws, history, failed := l.prepare(ctx, sess)
	if failed != nil {
		return *failed
	}
	var res agent.Outcome
	if l.spec.Agent.IsNative() {
		var failed *outcome
		if res, failed = l.native(ctx, ws, history); failed != nil {
			return *failed
		}
	} else {
		l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageRunning, Model: l.spec.Model.name()})
		res = l.runExternal(ctx, ws, sess)
		// What the agent wrote is measured as a command's writes are.
		lim := tools.Limits{MaxFiles: l.spec.Bounds.MaxFiles, MaxWorkspaceBytes: l.spec.Bounds.MaxWorkspaceBytes, Scratch: l.scratch()}
		if tb, err := tools.New(ws.Dir, lim, nil); errors.Is(err, tools.ErrBound) {
			res.Stop, res.Err = agent.StopBound, err
		} else if err == nil {
			tb.Close()
		}
	}
	l.receipt.Usage = bundle.Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens,
		TotalTokens: res.Usage.TotalTokens, ModelCalls: int64(res.Calls), CacheReadTokens: res.Usage.CacheReadTokens, CacheWriteTokens: res.Usage.CacheWriteTokens}
	if sess != nil {
		sess.ws = ws
	}
	// Whatever happened, the diff so far is part of the record — but not
	// the diff of a workspace over its bounds, which nothing may apply.
	if res.Stop == agent.StopBound {
		l.progress("  the workspace is over its bounds: its diff is not recorded (%v)", res.Err)
	} else {
		l.recordDiff(context.WithoutCancel(ctx), ws)
	}
	if l.spec.ScenarioChecks != nil {
		return l.judge(context.WithoutCancel(ctx), ws, res)
	}
	if out, ended := l.loopEnded(ctx, res); ended {
		return out
	}
	return l.verdictOf(ctx, ws, res)
}

// native runs proctor's own agent loop on the workspace.
func (l *live) native(ctx context.Context, ws *workspace.Workspace, history []model.Message) (agent.Outcome, *outcome) {
	failed := func(o outcome) (agent.Outcome, *outcome) { return agent.Outcome{}, &o }
	tb, err := tools.New(ws.Dir, tools.Limits{
		MaxToolOutputChars: l.spec.Bounds.MaxToolOutputChars, MaxFiles: l.spec.Bounds.MaxFiles,
		MaxWorkspaceBytes: l.spec.Bounds.MaxWorkspaceBytes, MaxFileBytes: l.spec.Bounds.MaxFileBytes, Scratch: l.scratch(),
	}, l.env(ws.Dir))
	if err != nil {
		return failed(l.fail(ctx, bundle.DomainEnvironment, "workspace_bound", err, false))
	}
	defer tb.Close()
	tb.Confine = l.confine(ws.Dir, nil)
	client, closeModel, err := l.client(l.spec.Model)
	if err != nil {
		return failed(l.fail(ctx, bundle.DomainScenario, "script", err, false))
	}
	defer closeModel()

	// The conversation.
	l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageRunning, Model: l.spec.Model.name()})
	if len(history) == 0 {
		prompt := SystemPrompt(l.spec.Criteria, l.spec.OutOfScope)
		if l.spec.ContextFunc != nil {
			if c := l.spec.ContextFunc(l.dir, ws.Dir); c != "" {
				prompt += "\n\nContext:\n" + c
			}
		}
		history = []model.Message{{Role: model.RoleSystem, Content: prompt}}
	}
	if wall := time.Duration(l.spec.Bounds.WallClockS) * time.Second; wall > 0 && (l.spec.Conversation.WallClock == 0 || wall < l.spec.Conversation.WallClock) {
		l.spec.Conversation.WallClock = wall
	}
	cfg := agent.Config{Model: client, Tools: tb, Approver: l.showWaiting(l.spec.Approver), MaxTurns: l.spec.Bounds.MaxTurns,
		MaxToolCalls: l.spec.Bounds.MaxToolCalls, Stream: l.spec.Model.Stream, Emit: l.emit, Pending: l.pending, Price: l.price}
	if l.spec.Followed {
		cfg.Progress = l.transcriptSoFar
	}
	return l.converse(ctx, cfg, history), nil
}

// verdictOf is the outcome of a loop that ended with a final answer: the
// checks and the verifier decide, then the diff awaits review.
func (l *live) verdictOf(ctx context.Context, ws *workspace.Workspace, res agent.Outcome) outcome {
	out := outcome{loop: &res}
	// Checks and the verifier.
	if len(l.spec.Checks) > 0 || l.spec.Verifier != nil {
		v, failed := l.verify(ctx, ws, res)
		l.receipt.Verify = v
		if ctx.Err() != nil {
			out.status, out.errText = bundle.StatusInterrupted, "Run interrupted."
			return out
		}
		if failed != "" {
			o := l.fail(ctx, bundle.DomainAgent, "verify_failed", errors.New(failed), false)
			o.loop = &res
			return o
		}
	}
	if len(l.receipt.Changed) > 0 {
		out.status = bundle.StatusAwaitingReview
	} else {
		out.status = bundle.StatusPassed
	}
	return out
}

// prepare acquires the source into the run's workspace (or takes the
// session's) and runs the spec's Prepare; a non-nil outcome is the run's
// failure.
func (l *live) prepare(ctx context.Context, sess *sessionState) (*workspace.Workspace, []model.Message, *outcome) {
	l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageAcquiringSource, Path: l.spec.SourceDir})
	var ws *workspace.Workspace
	if l.spec.Git != nil { // the clone is the workspace
		var failed *outcome
		if ws, failed = l.cloneSource(ctx); failed != nil {
			return nil, nil, failed
		}
	}
	l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StagePreparingWorkspace})
	var history []model.Message
	if sess != nil {
		var err error
		if ws, history, err = sess.prepare(ctx, l); err != nil {
			o := l.fail(ctx, bundle.DomainEnvironment, "workspace", err, false)
			return nil, nil, &o
		}
	} else if l.spec.Resumes != "" {
		var err error
		if ws, history, err = l.resume(ctx); err != nil {
			o := l.fail(ctx, bundle.DomainEnvironment, "workspace", err, false)
			return nil, nil, &o
		}
	} else if ws == nil {
		opts := l.spec.Workspace
		if l.spec.OriginRemote && !opts.NoGit {
			opts.Origin = filepath.Join(l.dir, "origin.git")
		}
		lim := workspace.Limits{MaxFiles: l.spec.Bounds.MaxFiles, MaxBytes: l.spec.Bounds.MaxWorkspaceBytes}
		var err error
		if ws, err = workspace.CreateWith(ctx, l.spec.SourceDir, filepath.Join(l.dir, "workspace"), lim, opts); err != nil {
			code := "workspace"
			if errors.Is(err, workspace.ErrTooBig) {
				code = "workspace_bound"
			}
			o := l.fail(ctx, bundle.DomainEnvironment, code, err, false)
			return nil, nil, &o
		}
	}
	l.receipt.Source.CommitSHA = ws.Base
	l.rec.event(bundle.StageFinishedEvent{Stage: bundle.StagePreparingWorkspace, Workspace: ws.Dir, BaseCommit: ws.Base})
	if l.mode().Confined() {
		if err := l.checkWalls(ctx); err != nil {
			o := l.fail(ctx, bundle.DomainEnvironment, CodeSandboxUnavailable, err, false)
			return nil, nil, &o
		}
		l.warmModules(ctx, ws)
		l.warmStd(ctx, ws)
		l.warmCaches(ctx, ws)
		l.warmEnds(ctx)
	}
	if l.spec.Prepare != nil {
		if err := l.spec.Prepare(ctx, ws.Dir, l.env(ws.Dir), l.confine(ws.Dir, nil)); err != nil {
			domain, code := bundle.DomainScenario, "setup_failed"
			var se *sandbox.StartError
			if errors.As(err, &se) {
				domain, code = bundle.DomainEnvironment, CodeSandboxUnavailable
			}
			o := l.fail(ctx, domain, code, err, false)
			return nil, nil, &o
		}
	}
	return ws, history, nil
}

// cloneSource acquires a git source into the run's workspace, pinned to
// its commit; the receipt records the URL, ref, commit and tree (never the
// token) before the run goes on.
func (l *live) cloneSource(ctx context.Context) (*workspace.Workspace, *outcome) {
	g := *l.spec.Git
	host := l.spec.GitHost
	if host == "" {
		host = "github.com"
	}
	failed := func(e *source.Error) (*workspace.Workspace, *outcome) {
		o := l.fail(ctx, bundle.DomainSource, e.Code, errors.New(l.redact.String(e.Message)), e.Retryable)
		return nil, &o
	}
	url, err := g.URL(host)
	if err != nil {
		return failed(err)
	}
	l.receipt.Source.Repository, l.receipt.Source.Ref = url, g.Ref
	ws, werr := workspace.Init(ctx, filepath.Join(l.dir, "workspace"))
	if werr != nil {
		return failed(&source.Error{Code: source.CodeCloneFailed, Message: werr.Error()})
	}
	p, err := source.Fetcher{Token: l.r.GitTokens.For(url), Cache: source.DataCache(l.r.DataDir)}.Fetch(ctx, g, url, workspace.GitDir(ws.Dir))
	if err != nil {
		return failed(err)
	}
	if werr := ws.CheckOut(ctx, p.Commit); werr != nil {
		return failed(&source.Error{Code: source.CodeCloneFailed, Message: werr.Error()})
	}
	l.receipt.Source.CommitSHA, l.receipt.Source.Tree = p.Commit, p.Tree
	l.progress("  %s at %s", url, p.Commit)
	return ws, nil
}

// recordDiff writes the workspace's changes so far into the bundle.
func (l *live) recordDiff(ctx context.Context, ws *workspace.Workspace) {
	patch, changed, err := ws.Diff(ctx)
	if err != nil {
		l.progress("  warning: diff: %v", err)
		return
	}
	l.receipt.Changed = nil
	for _, p := range changed {
		l.receipt.Changed = append(l.receipt.Changed, bundle.PathName(p))
	}
	if patch != "" {
		if err := l.rec.text(bundle.DiffFile, patch); err != nil {
			l.progress("  warning: %v", err)
		}
	}
}

// loopEnded is the outcome of an agent loop that did not end with a final
// answer (interrupted, an error, a bound, a question); ended is false when
// it did.
func (l *live) loopEnded(ctx context.Context, res agent.Outcome) (outcome, bool) {
	failed := func(domain bundle.Domain, code string, err error, retry bool) (outcome, bool) {
		o := l.fail(ctx, domain, code, err, retry)
		o.loop = &res
		return o, true
	}
	switch res.Stop {
	case agent.StopInterrupted:
		return outcome{loop: &res, status: bundle.StatusInterrupted, errText: "Run interrupted."}, true
	case agent.StopError:
		domain, code, err, retry := loopError(res.Err)
		return failed(domain, code, err, retry)
	case agent.StopBound:
		return failed(bundle.DomainEnvironment, "workspace_bound", res.Err, false)
	case agent.StopMaxTurns, agent.StopMaxToolCalls:
		return failed(bundle.DomainAgent, string(res.Stop), res.Err, false)
	case agent.StopAskUser:
		l.progress("  the agent asks: %s", res.Question)
		return outcome{loop: &res, status: bundle.StatusAwaitingInput}, true
	}
	return outcome{}, false
}

// loopError is who failed when a loop ended in error: the model's
// provider (its domain and code), the harness when a command's sandbox
// did not start (environment: never the agent's failure), else the agent.
func loopError(err error) (bundle.Domain, string, error, bool) {
	if err == nil {
		err = errors.New("the agent loop ended in an error it did not name")
	}
	if me, ok := model.AsError(err); ok {
		msg := me.Message
		if me.Attempts > 1 {
			msg += fmt.Sprintf(" (after %d attempts)", me.Attempts)
		}
		return bundle.Domain(me.Domain), me.Code, errors.New(msg), me.Retryable
	}
	var se *sandbox.StartError
	if errors.As(err, &se) {
		return bundle.DomainEnvironment, CodeSandboxUnavailable, err, false
	}
	return bundle.DomainAgent, "agent_error", err, false
}

// emit records a loop event and prints tool calls as they happen.
func (l *live) emit(ev bundle.EventData) {
	l.rec.event(ev)
	switch ev := ev.(type) {
	case bundle.ToolResultEvent:
		l.calls.Add(ev)
	case bundle.ToolCallEvent:
		l.calls.Add(ev)
		l.progress("  tool %s %s", ev.Name, bundle.Line(l.redact.String(string(ev.Args)), 100))
	case bundle.AgentQuestionEvent:
		l.asked = append(l.asked, ev.Question)
		if ev.ID != "" {
			l.note(ev.ID, "question for the user")
		}
	case bundle.ApprovalDecidedEvent:
		verdict := "denied"
		if ev.Approved {
			verdict = "approved"
		}
		l.note(ev.ID, fmt.Sprintf("%s by %s: %s", verdict, ev.By, ev.Reason))
		l.progress("    %s by %s: %s", verdict, ev.By, ev.Reason)
	case bundle.ModelErrorEvent:
		l.progress("  model error: %s", ev.Error)
	}
}

// transcriptSoFar writes the transcript of the conversation so far (the
// run's end writes it whole), so that the run's page shows the message and
// the call the agent is on.
func (l *live) transcriptSoFar(msgs []model.Message) {
	if err := l.rec.text(bundle.TranscriptFile, Transcript(msgs, l.notes, "")); err != nil {
		l.progress("  warning: %v", err)
	}
}

func (l *live) note(callID, text string) {
	if l.notes == nil {
		l.notes = map[string]string{}
	}
	l.notes[callID] = text
}

// finish records how the run ended: receipt, transcript, logs, index.
func (l *live) finish(ctx context.Context, out outcome) {
	ctx = context.WithoutCancel(ctx)
	l.noteID()
	end := l.r.now().UTC()
	l.receipt.EndedAt = &end
	l.receipt.Status = out.status
	l.receipt.Failure = out.failure
	switch out.status {
	case bundle.StatusPassed:
		l.receipt.Stage = bundle.StageCompleted
	case bundle.StatusAwaitingReview:
		l.receipt.Stage = bundle.StageAwaitingReview
	case bundle.StatusFailed, bundle.StatusError:
		l.receipt.Stage = bundle.StageFailed
	}
	if out.failure != nil {
		l.rec.event(bundle.StageFailedEvent{Stage: out.failure.Stage, Domain: out.failure.Domain, Code: out.failure.Code, Message: out.failure.Message})
	} else if out.status == bundle.StatusInterrupted {
		l.rec.event(bundle.RunInterruptedEvent{Stage: l.receipt.Stage})
	} else {
		l.rec.event(bundle.StageFinishedEvent{Stage: l.receipt.Stage, Status: out.status})
	}
	if out.loop != nil {
		if err := l.rec.text(bundle.TranscriptFile, Transcript(out.loop.Messages, l.notes, out.errText)); err != nil {
			l.progress("  warning: %v", err)
		}
	} else if out.errText != "" {
		l.rec.text(bundle.TranscriptFile, Transcript([]model.Message{{Role: model.RoleUser, Content: l.spec.Task}}, nil, out.errText))
	}
	// Everything else first, synced once; then the receipt, durably: a
	// receipt never names files that a crash could lose. The session names
	// the run before its receipt says it ended, so that whoever sees the end
	// and continues the session goes on from this run.
	if err := l.rec.close(); err != nil {
		l.progress("  warning: %v", err)
	}
	if l.spec.Session != "" {
		if err := l.r.saveSession(l); err != nil {
			l.progress("  warning: session: %v", err)
		}
	}
	if err := l.rec.receipt(&l.receipt, true); err != nil {
		l.progress("  warning: %v", err)
	}
	l.rec.release() // the run is over: recovery may judge it from here on
	if l.r.Index != nil {
		paths := []string{l.dir}
		if l.receipt.SessionID != "" {
			paths = append(paths, filepath.Join(l.r.DataDir, "sessions", l.receipt.SessionID+".json"))
		}
		if err := l.r.Index(ctx, paths...); err != nil {
			l.progress("  warning: index: %v", err)
		}
	}
	if out.failure != nil {
		l.progress("  failed: %s: %s: %s", out.failure.Domain, out.failure.Code, l.redact.String(out.failure.Message))
	}
	l.progress("bundle: %s", l.dir)
	if l.receipt.SessionID != "" {
		l.progress("session: %s (continue it with: proctor session resume %s --task TEXT …)", l.receipt.SessionID, l.receipt.SessionID)
	}
	l.progress("status: %s", strings.ReplaceAll(string(out.status), "_", " "))
}

// showWaiting wraps the part of an approver that waits for a person (on its
// own, or as the Next of a Chain after a policy) so that the run shows
// awaiting_approval while it waits, whoever launched it.
func (l *live) showWaiting(a agent.Approver) agent.Approver {
	switch a := a.(type) {
	case agent.Chain:
		a.Next = l.showWaiting(a.Next)
		return a
	case interface{ Waits() bool }:
		if a.Waits() {
			return statusApprover{l: l, inner: a.(agent.Approver)}
		}
	}
	return a
}

// statusApprover shows a run as awaiting_approval on its receipt (and in
// the index) while an approver that waits for a person decides.
type statusApprover struct {
	l     *live
	inner agent.Approver
}

func (a statusApprover) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	a.l.setStatus(ctx, bundle.StatusAwaitingApproval)
	defer a.l.setStatus(ctx, bundle.StatusRunning)
	return a.inner.Approve(ctx, req)
}

func (l *live) setStatus(ctx context.Context, s bundle.Status) {
	l.receipt.Status = s
	l.saveReceipt(ctx)
}

// saveReceipt writes the receipt of the working run as it is now, and
// indexes it.
func (l *live) saveReceipt(ctx context.Context) {
	if l.r.Packed {
		return // nobody reads a packed run's folder while it works: its receipt is written when it ends
	}
	if err := l.rec.receipt(&l.receipt, false); err != nil {
		l.progress("  warning: %v", err)
	}
	if l.r.Index != nil {
		l.r.Index(context.WithoutCancel(ctx), l.dir)
	}
}

// agentName is how messages name an agent.
func agentName(a external.Agent) string {
	if a.Name == "" {
		return external.KindNative
	}
	return a.Name
}
