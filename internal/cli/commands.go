package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/source"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/live"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Version is proctor's release version.
const Version = "0.1.0-dev"

func runVersion(_ context.Context, env Env, args []string) error {
	fs := newFlags(env, "version", "", "Print proctor's version and the commit it was built from.")
	if err := parseFlags(fs, "version", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version", "takes no arguments, got %q", fs.Arg(0))
	}
	commit := "unknown commit"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				commit = s.Value[:12]
			}
		}
		fmt.Fprintf(env.Stdout, "proctor %s (%s, %s)\n", Version, commit, info.GoVersion)
		return nil
	}
	fmt.Fprintf(env.Stdout, "proctor %s\n", Version)
	return nil
}

// serveBeyondLoopback checks that a server reachable from the network has
// an admin account to sign in with, and warns when it has no TLS.
func serveBeyondLoopback(ctx context.Context, st *store.Store, log *slog.Logger, addr, dir string, withTLS bool) error {
	_, admins, err := st.CountUsers(ctx)
	if err != nil {
		return err
	}
	if admins == 0 {
		return usagef("serve", "--addr %s serves beyond this machine, which needs sign-in and so an admin account; create one first with: proctor user add NAME --role admin --data %s", addr, dir)
	}
	if !withTLS {
		log.Warn("serving on " + addr + " without TLS: passwords and session cookies cross the network in clear; give --tls-cert and --tls-key to encrypt them")
	}
	return nil
}

// tokenFromEnv reads a git token from the variable a flag names ("" none),
// and keeps the variable from the agent's commands.
func tokenFromEnv(env Env, r *run.Runner, cmd, flag, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if !yamldoc.EnvName(name) {
		return "", usagef(cmd, "%s %q: give the name of the variable that holds the token, not the token", flag, name)
	}
	token := env.Getenv(name)
	if token == "" {
		return "", usagef(cmd, "%s %s: the variable is not set or empty", flag, name)
	}
	r.KeyEnvNames = append(r.KeyEnvNames, name)
	return token, nil
}

// gitCredentials are the tokens of git hosts: those of sources.yaml (at
// sourcesFile), and the one in the variable tokenEnv (a --token-env flag)
// for the host of gitURL.
func gitCredentials(env Env, r *run.Runner, cmd, sourcesFile, flag, tokenEnv, gitURL string) (source.Credentials, error) {
	cfg, err := source.LoadConfig(sourcesFile)
	if err != nil {
		return nil, usagef(cmd, "%v", err)
	}
	creds, names, err := cfg.Credentials(env.Getenv)
	if err != nil {
		return nil, usagef(cmd, "%v", err)
	}
	r.KeyEnvNames = append(r.KeyEnvNames, names...)
	token, err := tokenFromEnv(env, r, cmd, flag, tokenEnv)
	if err != nil || token == "" {
		return creds, err
	}
	if err := creds.Set(gitURL, token); err != nil {
		return nil, usagef(cmd, "%s: %v", flag, err)
	}
	return creds, nil
}

// serveFlags are serve's flags, parsed and checked.
type serveFlags struct {
	addr, data, reviewer, tlsCert, tlsKey, models, agents, gitTokenEnv, gitHost, sandboxFlag string
	sandbox                                                                                  sandbox.Mode
	sources                                                                                  *string
	verbose                                                                                  bool
	workers                                                                                  int
	maxPushBytes, maxPushIncoming                                                            int64
	approvalTimeout                                                                          time.Duration
	roots, scenarioRoots, hosts, applyPushed                                                 stringList
}

func parseServe(env Env, args []string) (*serveFlags, error) {
	fs := newFlags(env, "serve", "[--addr 127.0.0.1:7070] [--data DIR]", `
Serve the dashboard and the JSON API. On start it indexes the data folder's
runs/ and sessions/, so bundles written there by other proctor commands show up.
On loopback with no accounts it is single-user: whoever holds its local secret
(<data>/local.secret, its user's alone) may do everything, and it prints the
address that opens the dashboard with it. Once an account exists ('proctor user add'), every page and API
call needs sign-in. Serving beyond loopback (--addr 0.0.0.0:7070) needs an
admin account; use --tls-cert/--tls-key there, or passwords cross the LAN in
clear. See docs/security.md.`)
	f := &serveFlags{}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:7070", "`host:port` to listen on (beyond loopback needs an admin account)")
	fs.StringVar(&f.data, "data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	fs.BoolVar(&f.verbose, "v", false, "log every request")
	fs.IntVar(&f.workers, "workers", 2, "runs launched from the dashboard that work at once")
	fs.StringVar(&f.reviewer, "reviewer", osUser(), "the reviewer `name` review forms start with")
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", 30*time.Minute, "how long a run waits for an approval in the dashboard before the call is denied")
	fs.Var(&f.hosts, "allowed-host", "a host `name` browsers may use to reach this server besides localhost, 127.0.0.1, ::1 and the --addr host (repeatable); requests naming any other Host are refused")
	fs.Var(&f.roots, "source-root", "a `folder` whose subfolders runs may be launched on from the dashboard (repeatable; default: the folder serve starts in)")
	fs.Var(&f.scenarioRoots, "scenarios", "a `folder` of scenarios suites may be launched from in the dashboard (repeatable; default: ./examples/scenarios when it exists)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate `file` to serve HTTPS with (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.StringVar(&f.models, "models", "", "models.yaml `file` (default $PROCTOR_MODELS, else $XDG_CONFIG_HOME/proctor/models.yaml)")
	fs.StringVar(&f.agents, "agents", "", "agents.yaml `file`: the agents the Launch form offers besides the built-in ones (native, codex, claude, gemini, qwen, opencode, copilot) (default $PROCTOR_AGENTS, else beside models.yaml)")
	f.sources = sourcesFlag(fs)
	fs.StringVar(&f.gitTokenEnv, "git-token-env", "", "the environment `variable` holding a token that can read the repositories on --git-host runs are launched on (never shown or recorded)")
	fs.StringVar(&f.gitHost, "git-host", "github.com", "the `host` a repository given as owner/name is on")
	fs.StringVar(&f.sandboxFlag, "sandbox", "workspace", "how launched runs' commands are confined: workspace, strict or off (docs/security.md)")
	fs.Int64Var(&f.maxPushBytes, "max-push-bytes", push.DefaultMaxBytes, "the largest pack a push may send, in `bytes` (a larger one is refused, 413)")
	fs.Int64Var(&f.maxPushIncoming, "max-push-incoming", push.DefaultMaxIncoming, "the `bytes` all unfinished pushes may hold together (in <data>/incoming; past it a push is refused, 413, until they finish or are abandoned for an hour)")
	fs.Var(&f.applyPushed, "apply-pushed", "`SOURCE=DIR`: an approval of a run pushed from elsewhere whose source is SOURCE (its repository URL, or its folder as the pusher's receipt names it) writes DIR, a folder under a --source-root (repeatable); a pushed run of any other source writes nothing here, its approved change is offered")
	if err := parseFlags(fs, "serve", args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, usagef("serve", "takes no arguments, got %q", fs.Arg(0))
	case f.workers < 1:
		return nil, usagef("serve", "--workers must be 1 or more, got %d", f.workers)
	case f.approvalTimeout <= 0:
		return nil, usagef("serve", "--approval-timeout must be positive, got %s", f.approvalTimeout)
	case f.maxPushBytes < 1 || f.maxPushIncoming < f.maxPushBytes:
		return nil, usagef("serve", "--max-push-bytes %d, --max-push-incoming %d: want a positive size, and room in incoming for at least one pack that size", f.maxPushBytes, f.maxPushIncoming)
	}
	var err error
	if f.sandbox, err = sandbox.ParseMode(f.sandboxFlag); err != nil {
		return nil, usagef("serve", "--%v", err)
	}
	return f, nil
}

func runServe(ctx context.Context, env Env, args []string) error {
	f, err := parseServe(env, args)
	if err != nil {
		return err
	}
	loopback, err := server.IsLoopback(f.addr)
	if err != nil {
		return usagef("serve", "%v", err)
	}
	tlsConfig, err := serveTLS(f.tlsCert, f.tlsKey)
	if err != nil {
		return err
	}
	absRoots, absScenarioRoots, err := serveRoots(f.roots, f.scenarioRoots)
	if err != nil {
		return err
	}
	dir, err := dataDir(f.data, env.Getenv)
	if err != nil {
		return err
	}
	if err := ensureDataDir(dir); err != nil {
		return err
	}
	log := f.logger(env)
	st, err := openIndex(ctx, env.Getenv, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	if !loopback {
		if err := serveBeyondLoopback(ctx, st, log, f.addr, dir, tlsConfig != nil); err != nil {
			return err
		}
	}

	key, local, allowed, err := f.secrets(dir)
	if err != nil {
		return err
	}

	modelsFile, agentsFile := modelsPath(f.models, env.Getenv), agentsPath(f.agents, env.Getenv)
	news := live.New() // wakes the run pages' event streams
	runner, err := f.runner(env, dir, st, modelsFile, news, absRoots)
	if err != nil {
		return err
	}
	if err := recoverDataDir(ctx, log, runner, st); err != nil {
		return err
	}

	ln, scheme, err := listen(f.addr, tlsConfig)
	if err != nil {
		return err
	}
	queue := jobs.New(runner, f.workers)
	context.AfterFunc(ctx, queue.Close)
	board := approval.NewBoard(f.approvalTimeout, news.Publish)
	launcher := &launch.Launcher{Runner: runner, Queue: queue, Board: board, SourceRoots: absRoots, ScenarioRoots: absScenarioRoots,
		Profiles: func() (*model.Profiles, error) { return model.LoadProfiles(modelsFile) }, Getenv: env.Getenv,
		Agents: func() (*external.File, error) { return external.Load(agentsFile) }, GitHost: f.gitHost, Log: log}
	srv := server.New(st, server.Config{DataDir: dir, Logger: log, Launcher: launcher, Reviewer: f.reviewer, RequireAuth: !loopback,
		TLS: tlsConfig != nil, Key: key, AllowedHosts: allowed, Live: news, LocalSecret: local,
		MaxPushBytes: f.maxPushBytes, MaxPushIncoming: f.maxPushIncoming})
	resumeServer(ctx, log, srv)
	fmt.Fprintf(env.Stdout, "proctor %s serving %s://%s (data: %s) — Ctrl-C stops it\n", Version, scheme, ln.Addr(), dir)
	if users, _, err := st.CountUsers(ctx); err == nil && users == 0 && loopback {
		// Single-user: loopback is not a login, so the dashboard asks every
		// request for its secret; this address brings it (as Jupyter's).
		fmt.Fprintf(env.Stdout, "  Open %s://%s/?token=%s\n", scheme, browserHost(ln.Addr().String()), local)
	}
	printLaunches(ctx, env, launcher)
	err = srv.Serve(ctx, ln)
	// Runs still working end interrupted with their bundles kept.
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	queue.Wait(waitCtx)
	return err
}

// listen listens on addr, with TLS when tlsConfig is set; scheme is
// http or https.
func listen(addr string, tlsConfig *tls.Config) (ln net.Listener, scheme string, err error) {
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen on %s: %w (is another proctor running? pick another port with --addr)", addr, err)
	}
	if tlsConfig != nil {
		return tls.NewListener(ln, tlsConfig), "https", nil
	}
	return ln, "http", nil
}

// logger is serve's log on standard error (-v: each request too).
func (f *serveFlags) logger(env Env) *slog.Logger {
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
}

// secrets are serve's session key and local secret (made on its first
// start, kept in the data folder dir) and the hosts browsers may name.
func (f *serveFlags) secrets(dir string) (key []byte, local string, allowed []string, err error) {
	if key, err = auth.LoadOrCreateKey(filepath.Join(dir, "server.key")); err != nil {
		return nil, "", nil, err
	}
	if local, err = auth.LoadOrCreateLocalSecret(localSecretPath(dir)); err != nil {
		return nil, "", nil, err
	}
	if allowed, err = serveHosts(f.addr, f.hosts); err != nil {
		return nil, "", nil, err
	}
	return key, local, allowed, nil
}

// printLaunches says where serve launches runs and suites, and why runs
// with the sandbox on cannot start on this host when they cannot.
func printLaunches(ctx context.Context, env Env, l *launch.Launcher) {
	fmt.Fprintf(env.Stdout, "  Launch works on folders under %s (--source-root); Suites on %s (--scenarios)\n", strings.Join(l.SourceRoots, ", "), orNone(l.ScenarioRoots))
	if err := l.Runner.SandboxProblem(ctx); err != nil {
		fmt.Fprintf(env.Stdout, "  warning: runs with the sandbox on cannot start on this host: %v\n", err)
	}
}

// runner is serve's runner of the runs it launches: over the data folder
// dir and its index st, with the sandbox, the pushed runs' trees and the
// git credentials the flags give; news hears of every run's events.
func (f *serveFlags) runner(env Env, dir string, st *store.Store, modelsFile string, news *live.Broker, absRoots []string) (*run.Runner, error) {
	sb, err := newSandbox(env, dir)
	if err != nil {
		return nil, err
	}
	runner := &run.Runner{DataDir: dir, Environ: os.Environ(), Index: index.Into(st), KeyEnvNames: keyEnvNames(modelsFile), Sandbox: sb,
		OnEvent: func(id string, _ bundle.Event) { news.Publish(id) }, Prices: st.Prices()}
	runner.Sandbox.Mode = f.sandbox
	if runner.PushedTrees, err = pushedTrees(f.applyPushed, absRoots); err != nil {
		return nil, err
	}
	runner.GitTokens, err = gitCredentials(env, runner, "serve", sourcesPath(*f.sources, env.Getenv), "--git-token-env", f.gitTokenEnv, "https://"+f.gitHost+"/")
	if err != nil {
		return nil, err
	}
	return runner, nil
}

// pushedTrees reads --apply-pushed SOURCE=DIR: each DIR a folder under one
// of roots (symlinks resolved), where approvals of runs pushed from SOURCE
// are applied.
func pushedTrees(flags stringList, roots []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		src, dir, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(src) == "" || dir == "" {
			return nil, usagef("serve", "--apply-pushed %q: want SOURCE=DIR (a pushed run's repository URL or folder, = a folder under a --source-root)", f)
		}
		abs, err := source.Folder(dir)
		if err != nil {
			return nil, usagef("serve", "--apply-pushed %s: %v", f, err)
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return nil, usagef("serve", "--apply-pushed %s: %s is not a folder", f, dir)
		}
		under := false
		for _, r := range roots {
			if rel, err := filepath.Rel(r, abs); err == nil && filepath.IsLocal(rel) {
				under = true
			}
		}
		if !under {
			return nil, usagef("serve", "--apply-pushed %s: %s is not under a --source-root (%s)", f, abs, strings.Join(roots, ", "))
		}
		out[src] = abs
	}
	return out, nil
}

// localSecretPath is where serve keeps the secret a single-user dashboard
// asks every request for (mode 0600).
func localSecretPath(dataDir string) string { return filepath.Join(dataDir, "local.secret") }

// browserHost is a listener's address as a browser is to open it: an
// address of every interface as this machine's loopback.
func browserHost(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// serveTLS is the TLS configuration of --tls-cert and --tls-key; nil serves
// plain HTTP.
func serveTLS(cert, key string) (*tls.Config, error) {
	if (cert == "") != (key == "") {
		return nil, usagef("serve", "--tls-cert and --tls-key go together; give both or neither")
	}
	if cert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, usagef("serve", "--tls-cert %s / --tls-key %s: %v", cert, key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// serveRoots are the absolute source and scenario roots. Out of the box,
// Launch works on folders under the one serve starts in, and Suites on the
// example scenarios when they are there.
func serveRoots(roots, scenarioRoots stringList) ([]string, []string, error) {
	if len(roots) == 0 {
		roots = stringList{"."}
	}
	if len(scenarioRoots) == 0 {
		if info, err := os.Stat(filepath.Join("examples", "scenarios")); err == nil && info.IsDir() {
			scenarioRoots = stringList{filepath.Join("examples", "scenarios")}
		}
	}
	absRoots, err := resolveRoots("--source-root", roots)
	if err != nil {
		return nil, nil, err
	}
	absScenarioRoots, err := resolveRoots("--scenarios", scenarioRoots)
	return absRoots, absScenarioRoots, err
}

// recoverDataDir settles what a stopped process left in the data folder —
// scratch folders of suites, runs still marked working (they end
// interrupted, their bundles kept) — and indexes it.
func recoverDataDir(ctx context.Context, log *slog.Logger, runner *run.Runner, st *store.Store) error {
	dir := runner.DataDir
	if removed, kept, err := suite.CleanScratch(dir); err != nil {
		log.Warn("clean scratch folders", "err", err)
	} else if len(removed) > 0 {
		log.Info("removed the scratch folders of suites that were stopped", "folders", len(removed), "runs kept", len(kept))
	}
	orphans, err := runner.RecoverOrphans("the process running it stopped before it finished")
	if err != nil {
		log.Warn("mark interrupted runs", "err", err)
	}
	for _, o := range orphans {
		log.Info("marked interrupted: its process stopped", "run", filepath.Base(o))
	}
	rep, err := index.New(st).Index(ctx, filepath.Join(dir, "runs"), filepath.Join(dir, "sessions"))
	if err != nil {
		return fmt.Errorf("index the data folder: %w", err)
	}
	log.Info("indexed the data folder", "indexed", rep.Indexed, "unchanged", rep.Unchanged, "removed", rep.Removed, "problems", len(rep.Problems))
	return nil
}

// resumeServer finishes or rolls back the reviews a stopped process left
// journaled, before anyone can review again, and launches again the runs
// that were queued.
func resumeServer(ctx context.Context, log *slog.Logger, srv *server.Server) {
	settled, errs := srv.RecoverReviews(ctx)
	for _, err := range errs {
		log.Warn("recover a review", "err", err)
	}
	if settled > 0 {
		log.Info("finished the reviews a stopped process left journaled", "reviews", settled)
	}
	if n, err := srv.ResumeQueued(); err != nil {
		log.Warn("resume queued runs", "err", err)
	} else if n > 0 {
		log.Info("launched again the runs queued when the server stopped", "runs", n)
	}
}

func orNone(dirs []string) string {
	if len(dirs) == 0 {
		return "none"
	}
	return strings.Join(dirs, ", ")
}

// serveHosts are the Host names the server answers to besides the loopback
// names: the --addr host, every address of this machine when --addr is an
// unspecified address (0.0.0.0 or ::, so colleagues can use the LAN
// address), and the --allowed-host names.
func serveHosts(addr string, names []string) ([]string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usagef("serve", "--addr %q: want host:port: %v", addr, err)
	}
	out := append([]string{host}, names...)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return nil, fmt.Errorf("list this machine's addresses for --addr %s: %w", addr, err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				out = append(out, n.IP.String())
			}
		}
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "/ @") {
			return nil, usagef("serve", "--allowed-host %q: want a host name or address, like proctor.lan or 192.168.1.20", n)
		}
	}
	return out, nil
}

func runIndex(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "index", "[--data DIR] [--rebuild] [--json] PATH…", `
Index the run bundles (folders holding run.json), packs of them (*.tar, as
written by scenario run --pack) and session files (sessions/*.json) found
under each PATH into the data folder's database.
Unchanged bundles are skipped; bundles gone from a PATH are forgotten; a
bundle that cannot be read is recorded as a problem and the others go on.
A run that says it is working but that no process holds (its process was
killed) is marked interrupted first, as serve does at start.
Exit code 1 when any problem was found.`)
	data := fs.String("data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	rebuild := fs.Bool("rebuild", false, "forget everything indexed before, then index PATH… from scratch")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, "index", args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("index", "name at least one PATH to index")
	}
	for _, p := range fs.Args() {
		if _, err := os.Stat(p); err != nil {
			return usagef("index", "PATH %s: %v", p, errors.Unwrap(err))
		}
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	if err := ensureDataDir(dir); err != nil {
		return err
	}
	st, err := openIndex(ctx, env.Getenv, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	if *rebuild {
		if err := st.ForgetAll(ctx); err != nil {
			return err
		}
	}
	rep, err := index.New(st).Index(ctx, fs.Args()...)
	if err != nil {
		return err
	}
	if err := printIndexed(env, rep, *asJSON); err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return exitError{ExitProblems}
	}
	return nil
}

// printIndexed says what an index did: as JSON, or a line each.
func printIndexed(env Env, rep index.Report, asJSON bool) error {
	if asJSON {
		type problem struct {
			Bundle  string `json:"bundle"`
			File    string `json:"file"`
			Field   string `json:"field,omitempty"`
			Message string `json:"message"`
		}
		out := struct {
			Indexed     int       `json:"indexed"`
			Unchanged   int       `json:"unchanged"`
			Removed     int       `json:"removed"`
			Interrupted int       `json:"interrupted"`
			Broken      int       `json:"bundles_with_problems"`
			Problems    []problem `json:"problems"`
		}{rep.Indexed, rep.Unchanged, rep.Removed, rep.Interrupted, rep.Broken, []problem{}}
		for _, p := range rep.Problems {
			out.Problems = append(out.Problems, problem{p.Bundle, p.File, p.Field, p.Message})
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(env.Stdout, "indexed %d, unchanged %d, removed %d, problems %d\n", rep.Indexed, rep.Unchanged, rep.Removed, len(rep.Problems))
	for _, p := range rep.Repaired {
		fmt.Fprintf(env.Stdout, "repaired %s: a writer was killed while it added a run; the pack is cut back to its whole runs\n", p)
	}
	if rep.Interrupted > 0 {
		fmt.Fprintf(env.Stdout, "marked interrupted %d: they said they were running, but no process holds them\n", rep.Interrupted)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(env.Stdout, "problem: %s\n", p.Problem)
	}
	return nil
}

func runMigrate(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "migrate", "[--data DIR] [status|up]", `
status (the default) shows which migrations the database has, without
changing it. up applies the pending ones (every other command does so too).`)
	data := fs.String("data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	if err := parseFlags(fs, "migrate", args); err != nil {
		return err
	}
	verb := "status"
	switch fs.NArg() {
	case 0:
	case 1:
		verb = fs.Arg(0)
	default:
		return usagef("migrate", "want one of status or up, got %d arguments", fs.NArg())
	}
	if verb != "status" && verb != "up" {
		return usagef("migrate", "unknown verb %q; want status or up", verb)
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	path := dbPath(dir)
	if verb == "up" {
		if err := ensureDataDir(dir); err != nil {
			return err
		}
		st, err := store.Open(ctx, path)
		if err != nil {
			return err
		}
		st.Close()
	}
	status, err := store.Inspect(ctx, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "database %s: at migration %d of %d\n", path, status.Current, status.Latest)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tAPPLIED\tFILE")
	for _, m := range status.Migrations {
		applied := "no"
		if m.Applied {
			applied = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", m.Version, applied, m.Name)
	}
	return tw.Flush()
}

// resolveRoots makes each folder given with flag absolute with its symlinks
// resolved, so that later checks of paths under it compare real paths.
func resolveRoots(flag string, dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		abs, err := source.Folder(d)
		if err != nil {
			return nil, usagef("serve", "%s %s: %v", flag, d, err)
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return nil, usagef("serve", "%s %s is not a folder", flag, d)
		}
		out = append(out, abs)
	}
	return out, nil
}
