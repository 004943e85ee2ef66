package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/toolcache"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Sandbox says how a runner confines the commands of its runs.
type Sandbox struct {
	Mode   sandbox.Mode // ModeWorkspace (default), ModeStrict or ModeOff
	Helper string       // the proctor binary, run as `proctor sandbox-exec`
	Read   []string     // the read allow-list (toolchains, module caches); not in strict mode
	// Caches is the store of warm toolchain caches the confined commands
	// see copy-on-write; nil: each run's caches start empty.
	Caches *toolcache.Store
	// Host keeps what of the host's /etc the commands may read, for every
	// command of every run (sandbox.HostFiles); nil works it out for each.
	Host *sandbox.HostFiles
	// LandlockABI caps the Landlock ABI of the commands' rules
	// (sandbox.LandlockCap: PROCTOR_LANDLOCK_ABI).
	LandlockABI int
	// probed is what a confined `true` found on this host: probed once
	// for the runner's runs before the first agent starts (walls), and
	// for the dashboard (SandboxProblem).
	probed sandbox.Probed
}

// SandboxProblem says why this host cannot confine a run's commands — the
// wall it cannot give and what to change — or nil when it can (or the
// runner's runs are not confined). It probes once, and again at most every
// few seconds while the host fails.
func (r *Runner) SandboxProblem(ctx context.Context) error {
	sb := r.Sandbox
	if sb == nil || sb.Mode == sandbox.ModeOff { // (a runner's "" is the default, workspace)
		return nil
	}
	_, err := sb.probe(ctx, r.DataDir)
	return err
}

// probe is the walls a confined command has on this host, probed in the
// data folder's folder of private folders (sandbox.ProbeHost), once for
// the runner's runs (again after a failure).
func (sb *Sandbox) probe(ctx context.Context, data string) (sandbox.Walls, error) {
	return sb.probed.Do(ctx, func(ctx context.Context) (sandbox.Walls, error) {
		return sandbox.ProbeHost(ctx, sb.Helper, privateRoot(data), sb.LandlockABI, sb.Host)
	})
}

// DefaultRead is the read allow-list when none is given: the Go toolchain
// and module cache, from the environment or where they usually are.
func DefaultRead(getenv func(string) string) []string {
	var out []string
	add := func(dirs ...string) {
		for _, d := range dirs {
			if d != "" {
				if _, err := os.Stat(d); err == nil {
					out = append(out, d)
					return
				}
			}
		}
	}
	add(getenv("GOROOT"), "/usr/local/go", "/usr/lib/go")
	home := getenv("HOME")
	gopath := getenv("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	add(getenv("GOMODCACHE"), filepath.Join(gopath, "pkg", "mod"))
	return out
}

// mode is the sandbox mode of the run: the spec's, else the runner's; ""
// when the runner has no sandbox.
func (l *live) mode() sandbox.Mode {
	switch {
	case l.r.Sandbox == nil:
		return ""
	case l.spec.Sandbox != "":
		return l.spec.Sandbox
	case l.r.Sandbox.Mode != "":
		return l.r.Sandbox.Mode
	}
	return sandbox.ModeWorkspace
}

// checkWalls starts a confined `true` the way the run's commands will
// start — before the setup, the warm or the agent — and records the walls
// it had on the receipt. A wall the host cannot give ends the run in error
// before anything of the agent runs, with what to change on the host. A
// data folder whose file system cannot hold the caches' overlays gives
// the run plain cache folders of its own, and the walls say so. The probe
// is the runner's, made once for its runs (again after a failure).
func (l *live) checkWalls(ctx context.Context) error {
	// What a proctor killed with -9 left: private folders, warms.
	if err := sandbox.RemoveLeft(ctx, privateRoot(l.r.DataDir), l.r.Sandbox.Helper); err != nil {
		l.progress("  warning: %v", err)
	}
	if store := l.r.Sandbox.Caches; store != nil {
		store.RemoveDead()
	}
	walls, err := l.r.Sandbox.probe(ctx, l.r.DataDir)
	if err != nil {
		return fmt.Errorf("%w. proctor runs no command unconfined unless told to: pass --sandbox off to run this run's commands with your own permissions", err)
	}
	l.plainCaches = walls.Caches != "overlay"
	id, err := sandbox.LeaseID(ctx, l.r.Sandbox.Helper)
	if err != nil {
		return err
	}
	l.sandboxID = id
	walls.ID, walls.IDShared = id.ID, id.Own
	w := bundle.Walls(walls)
	l.receipt.Walls = &w
	l.progress("  sandbox: %s", w)
	if id.Why != "" {
		l.progress("  sandbox: no id of the run's own: %s", id.Why)
	}
	return nil
}

// reclaim gives back what the run's commands wrote — every folder they
// could write, and the upper folders of its caches — once none of them
// runs any more, and lets its id go: proctor's user owns it all again
// and no setuid or setgid bit survives (sandbox.Reclaim).
func (l *live) reclaim() {
	if l.sandboxID == nil {
		return
	}
	l.wroteMu.Lock()
	dirs := append(slices.Clone(l.wrote), l.cacheDir)
	l.wroteMu.Unlock()
	if err := l.sandboxID.Reclaim(context.Background(), dirs...); err != nil {
		l.progress("  warning: %v", err)
	}
	l.sandboxID.Release()
}

// confine is how the run's commands are confined: writing only ws, the
// run's private temp folder and write, reaching the model only through
// proxy (nil: not at all); nil when the run is not confined.
func (l *live) confine(ws string, proxy *sandbox.Proxy, write ...string) *sandbox.Confinement {
	if !l.mode().Confined() {
		return nil
	}
	return l.confinement(ws, proxy, l.caches, write...)
}

// confinement is confine with the toolchain caches the command sees.
func (l *live) confinement(ws string, proxy *sandbox.Proxy, caches func() []sandbox.Cache, write ...string) *sandbox.Confinement {
	m := l.mode()
	if !m.Confined() {
		return nil
	}
	b := l.spec.Bounds
	writes := append([]string{ws, l.tmp}, write...)
	l.wroteMu.Lock()
	for _, d := range writes {
		if !slices.Contains(l.wrote, d) {
			l.wrote = append(l.wrote, d)
		}
	}
	l.wroteMu.Unlock()
	id := 0
	if l.sandboxID != nil {
		id = l.sandboxID.ID
	}
	p := sandbox.Policy{Write: writes, Proxy: proxy, LandlockABI: l.r.Sandbox.LandlockABI, ID: id,
		MaxFile: uint64(b.MaxWorkspaceBytes), MaxProcs: uint64(b.MaxProcesses), CPU: uint64(b.MaxCPUS),
		// Its own run folder (checks read calls.json there) and proctor's
		// repository of the workspace, whose objects the workspace's own
		// .git reads.
		Read: []string{l.dir, workspace.GitDir(ws)}}
	if l.spec.Scenario != nil && l.spec.Scenario.Path != "" {
		p.Read = append(p.Read, l.spec.Scenario.Path) // setup, ready and executable checks
	}
	if m.ReadsAllowList() {
		p.Read = append(p.Read, l.r.Sandbox.Read...)
	}
	helper := l.r.Sandbox.Helper
	// proctor's own binary, alone (its folder may hold anything): an
	// agent's permission hook runs it to ask the run's approvals.
	if self, err := filepath.EvalSymlinks(helper); err == nil && filepath.IsAbs(self) {
		p.Run = append(p.Run, self)
	}
	start := func() ([]sandbox.Cache, error) {
		if err := l.makePrivate(); err != nil {
			return nil, err
		}
		return caches(), nil
	}
	return &sandbox.Confinement{Policy: p, Helper: helper, ReadProgram: m.ReadsAllowList(), Host: l.r.Sandbox.Host, Start: start}
}

// sandboxEnv points a confined command's home and caches into the run's
// private temp folder.
func (l *live) sandboxEnv(env []string) []string {
	if !l.mode().Confined() {
		return env
	}
	home := filepath.Join(l.tmp, "home")
	env = append(env, "HOME="+home, "TMPDIR="+l.tmp, "XDG_CACHE_HOME="+filepath.Join(l.tmp, "cache"), "GOTMPDIR="+l.tmp, "GOTOOLCHAIN=local")
	for _, k := range toolcache.Kinds() {
		env = append(env, k.Env+"="+l.cacheAt(k.Name))
	}
	return env
}

// cacheAt is where a confined command sees a toolchain cache.
func (l *live) cacheAt(kind string) string { return filepath.Join(l.tmp, "cache", kind) }

// layerKeys are the keys of the store's layers the run's commands see:
// the standard library proctor built from trusted inputs, and the warm of
// the run's own scenario on its fixture and toolchain — never another
// scenario's, whose setup could have put anything in the cache.
func (l *live) layerKeys() []string {
	var keys []string
	for _, k := range []string{l.stdKey, l.scenarioKey} {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// caches are the run's toolchain caches: the layers of the runner's store
// it holds (taken as its first confined command starts, after any warm),
// under upper folders of the run's own, which its later commands see again
// and which go with the run.
func (l *live) caches() []sandbox.Cache {
	if l.plainCaches {
		return nil
	}
	l.holdOnce.Do(func() {
		l.held = &toolcache.Held{}
		if store := l.r.Sandbox.Caches; store != nil {
			h, err := store.Hold(l.layerKeys()...)
			if err != nil {
				l.progress("  toolchain caches: %v; this run's start empty", err)
			} else {
				l.held = h
			}
		}
	})
	return l.cachesOver(func(kind string) string { return filepath.Join(l.cacheDir, kind) }, l.held)
}

// cachesOver are the toolchain caches with the held layers under the
// upper folders upper names.
func (l *live) cachesOver(upper func(kind string) string, held *toolcache.Held) []sandbox.Cache {
	var out []sandbox.Cache
	for _, k := range toolcache.Kinds() {
		out = append(out, sandbox.Cache{At: l.cacheAt(k.Name), Upper: upper(k.Name), Layers: held.For(k.Name)})
	}
	return out
}

// warmCaches fills the toolchain caches for a scenario's fixture, once for
// each fixture, scenario and toolchain (warmKey): the scenario's setup and
// checks run, confined, on a copy of the fixture before any agent does,
// and what they wrote into the caches becomes a layer of the store that
// every later confined command sees. Only this trusted work writes a
// layer — the scenario's author's files on the author's fixture; nothing
// an agent ran has run yet. A warm that fails leaves the store as it was,
// and the run goes on with the caches it has.
func (l *live) warmCaches(ctx context.Context, ws *workspace.Workspace) {
	store := l.r.Sandbox.Caches
	if store == nil || l.plainCaches || l.spec.Scenario == nil || l.spec.SourceDir == "" || ws.Base == "" {
		return
	}
	if err := l.makePrivate(); err != nil {
		l.warmNote("toolchain caches: not warmed: %v", err)
		return
	}
	key := l.warmKey(ws)
	l.scenarioKey = key
	w := l.beginWarm(ctx, key, "the scenario's setup and checks, on a copy of its fixture (once for this fixture)")
	if w == nil {
		return
	}
	defer w.Drop()
	start := time.Now()
	dir := filepath.Join(l.tmp, "warm")
	defer func() {
		osfile.RemoveAll(dir)
		osfile.RemoveAll(workspace.GitDir(dir))
	}()
	opts := l.spec.Workspace
	opts.Origin = ""
	fixture, err := workspace.CreateWith(ctx, l.spec.SourceDir, dir, workspace.Limits{MaxFiles: l.spec.Bounds.MaxFiles, MaxBytes: l.spec.Bounds.MaxWorkspaceBytes}, opts)
	if err != nil {
		l.warmNote("toolchain caches: not warmed: %v", err)
		return
	}
	// It builds on the standard library's layer alone.
	held, err := store.Hold(l.stdKey)
	if err != nil {
		l.warmNote("toolchain caches: not warmed: %v", err)
		return
	}
	defer held.Release()
	confine := l.confinement(fixture.Dir, nil, func() []sandbox.Cache { return l.cachesOver(w.Upper, held) })
	env := l.env(fixture.Dir)
	if l.spec.Prepare != nil {
		if err := l.spec.Prepare(ctx, fixture.Dir, env, confine); err != nil {
			l.warmNote("toolchain caches: not warmed: the setup failed: %v", err)
			return
		}
	}
	// Their verdicts on the fixture as it is mean nothing here: only what
	// they left in the caches is kept.
	check.Run(ctx, l.spec.ScenarioChecks, check.Input{Workspace: fixture.Dir, Env: env, Confine: confine, Tools: l.spec.Agent.Intents()})
	if ctx.Err() != nil {
		return
	}
	if err := l.keepLayer(ctx, w); err != nil {
		l.warmNote("toolchain caches: not kept: %v", err)
		return
	}
	l.warmNote("toolchain caches warmed in %s", time.Since(start).Round(time.Millisecond))
}

// warmStd builds the part of the Go toolchain's standard library that
// every test needs into a layer of the store that every run on that
// toolchain sees (stdKey), once: `go test` of a package proctor writes (it
// imports fmt and testing), confined, with proctor's own
// environment — no scenario file is read and no scenario code runs, so
// nothing a scenario or an agent wrote can be in it. That is the standard
// library's packages a test binary links (runtime, reflect, fmt, os,
// testing and what they import) and the facts go test's vet needs of them,
// in the default build
// mode of that environment (its GOFLAGS, CGO_ENABLED, GOOS, GOARCH):
// -race, -cover, build tags or another CGO setting make other action ids,
// which each scenario's warm builds into its own layer, as it does the
// standard library's other packages its code imports. A workspace with no
// go.mod or go.work, or a host with no go, has none. Only a scenario's run
// builds it (as a suite's first Go case warms); a plain run sees it once
// there, and never waits for it.
func (l *live) warmStd(ctx context.Context, ws *workspace.Workspace) {
	store := l.r.Sandbox.Caches
	if store == nil || l.plainCaches || !goProject(ws.Dir) {
		return
	}
	dir := filepath.Join(l.tmp, "std")
	env := l.sandboxEnv(scrubbedEnv(l.r.Environ, dir))
	goBin, err := lookPath("go", env)
	if err != nil {
		return
	}
	key := stdKey(goBin, env)
	l.stdKey = key
	if l.spec.Scenario == nil {
		return // a plain run sees the layer when a suite made it, and never waits for one
	}
	w := l.beginWarm(ctx, key, "Go's standard library for tests (once for this toolchain)")
	if w == nil {
		return
	}
	defer w.Drop()
	if err := l.makePrivate(); err != nil {
		l.warmNote("toolchain caches: the standard library not built: %v", err)
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		l.warmNote("toolchain caches: the standard library not built: %v", err)
		return
	}
	defer osfile.RemoveAll(dir)
	start := time.Now()
	for name, text := range map[string]string{
		"go.mod":       "module proctor.invalid/warm\n",
		"warm.go":      "// Package warm is what proctor builds to warm Go's cache.\npackage warm\n\nimport \"fmt\"\n\n// Hello says warm.\nfunc Hello() string { return fmt.Sprint(\"warm\") }\n",
		"warm_test.go": "package warm\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif Hello() != \"warm\" {\n\t\tt.Fatal(Hello())\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			l.warmNote("toolchain caches: the standard library not built: %v", err)
			return
		}
	}
	p := sandbox.Policy{Write: []string{dir, l.tmp}, Read: l.r.Sandbox.Read, LandlockABI: l.r.Sandbox.LandlockABI, ID: l.sandboxID.ID}
	conf := &sandbox.Confinement{Policy: p, Helper: l.r.Sandbox.Helper, ReadProgram: true, Host: l.r.Sandbox.Host,
		Start: func() ([]sandbox.Cache, error) { return l.cachesOver(w.Upper, &toolcache.Held{}), nil }}
	res, err := sandbox.Command{Argv: []string{goBin, "test", "-count=1", "./..."}, Dir: dir, Env: env, Confine: conf, Timeout: 20 * time.Minute}.Run(ctx)
	switch {
	case err != nil:
		l.warmNote("toolchain caches: the standard library not built: %v", err)
		return
	case res.Code != 0:
		l.warmNote("toolchain caches: the standard library not built: go test exited %d: %s", res.Code, clip.Head(string(res.Output), 400))
		return
	}
	if err := l.keepLayer(ctx, w); err != nil {
		l.warmNote("toolchain caches: not kept: %v", err)
		return
	}
	l.warmNote("Go's standard library built in %s", time.Since(start).Round(time.Millisecond))
}

// warming is a run's warm stage: when it started, and how each warm went.
type warming struct {
	start time.Time
	notes []string
}

// warmBegins starts the warm stage at the first warm that has work to do:
// what it does shows in the run's timeline and its stage on the run and
// suite pages while it works.
func (l *live) warmBegins(ctx context.Context, what string) {
	if l.warm == nil {
		l.warm = &warming{start: time.Now()}
		l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StageWarmingCaches, Detail: what})
	}
	l.progress("  %s", what)
}

// beginWarm starts the warm of key: the warm stage begins as soon as the
// layer is found missing, so a run that waits while another run makes it
// is in the stage too. nil: nothing to do (the layer is there, or the
// warm cannot start, which the stage says).
func (l *live) beginWarm(ctx context.Context, key, what string) *toolcache.Warm {
	missing := !l.r.Sandbox.Caches.Warmed(key)
	if missing {
		l.warmBegins(ctx, what)
	}
	w, err := l.r.Sandbox.Caches.Begin(ctx, key)
	switch {
	case err != nil:
		l.warmNote("toolchain caches: %v", err)
	case w == nil && missing:
		l.warmNote("%s: made by another run meanwhile", what)
	}
	return w
}

// warmNote says how a warm went: in the progress, and in the warm stage's
// end.
func (l *live) warmNote(format string, args ...any) {
	l.progress("  "+format, args...)
	if l.warm != nil {
		l.warm.notes = append(l.warm.notes, fmt.Sprintf(format, args...))
	}
}

// warmEnds ends the warm stage, when there was one; the workspace's own
// setup, which comes next, is the workspace's stage again.
func (l *live) warmEnds(ctx context.Context) {
	if l.warm == nil {
		return
	}
	l.rec.event(bundle.StageFinishedEvent{Stage: bundle.StageWarmingCaches, DurationMS: time.Since(l.warm.start).Milliseconds(), Detail: strings.Join(l.warm.notes, "; ")})
	if l.spec.Prepare != nil {
		l.stage(ctx, bundle.StageStartedEvent{Stage: bundle.StagePreparingWorkspace, Detail: "the scenario's setup"})
	}
}

// keepLayer makes what a warm wrote a layer every later run of its key
// works in, as ids of their own (sandbox.ShareLayer), and keeps it.
func (l *live) keepLayer(ctx context.Context, w *toolcache.Warm) error {
	var uppers []string
	for _, k := range toolcache.Kinds() {
		uppers = append(uppers, w.Upper(k.Name))
	}
	if err := l.sandboxID.ShareLayer(context.WithoutCancel(ctx), uppers...); err != nil {
		return err
	}
	return w.Keep()
}

// goProject reports whether a workspace is a Go module or workspace.
func goProject(dir string) bool {
	for _, f := range []string{"go.mod", "go.work"} {
		if info, err := os.Lstat(filepath.Join(dir, f)); err == nil && info.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// stdKey names the standard library's layer: the go binary (its path,
// size and time), and the variables of the environment that change the
// standard library's action ids.
func stdKey(goBin string, env []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "toolcache std 1\n")
	if info, err := os.Stat(goBin); err == nil {
		fmt.Fprintf(h, "go %s %d %d\n", goBin, info.Size(), info.ModTime().UnixNano())
	}
	for _, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED", "GOROOT", "GOAMD64", "GOARM64", "GOEXPERIMENT", "CC", "CGO_CFLAGS", "CGO_LDFLAGS":
			fmt.Fprintf(h, "env %s\n", kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// warmKey names a warm's work: the fixture (the workspace's base commit,
// made with a fixed identity and date, so the same files give the same
// commit), the scenario's own files (its scenario.yaml, setup, ready and
// check programs; not the fixture) and the toolchains the environment
// finds (each one's path, size and time).
func (l *live) warmKey(ws *workspace.Workspace) string {
	h := sha256.New()
	fmt.Fprintf(h, "toolcache 1\nfixture %s\n", ws.Base)
	root := l.spec.Scenario.Path
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == scenario.Fixture {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "file %q %d\n", rel, info.Size())
		if info.Size() <= 1<<20 {
			if raw, err := os.ReadFile(p); err == nil {
				h.Write(raw)
			}
		} else {
			fmt.Fprintf(h, "%d\n", info.ModTime().UnixNano())
		}
		return nil
	})
	env := l.env(ws.Dir)
	for _, tool := range []string{"go", "node", "npm", "python3", "pip3", "pip"} {
		if p, err := lookPath(tool, env); err == nil {
			if info, err := os.Stat(p); err == nil {
				fmt.Fprintf(h, "tool %s %s %d %d\n", tool, p, info.Size(), info.ModTime().UnixNano())
			}
		}
	}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "GOFLAGS" || k == "GOOS" || k == "GOARCH" || k == "CGO_ENABLED" || k == "GOROOT" {
			fmt.Fprintf(h, "env %s\n", kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// lookPath finds a program in the PATH of env, its links followed.
func lookPath(name string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return filepath.EvalSymlinks(p)
		}
	}
	return "", fs.ErrNotExist
}

// makePrivate makes the run's private folder — its temp folder with the
// commands' home in it, the upper folders of its caches beside it — as its
// first confined command starts: most scripted cases run none, and pay
// nothing for it.
func (l *live) makePrivate() error {
	l.privateOnce.Do(func() {
		private := filepath.Dir(l.tmp)
		_, l.releasePrivate, l.privateErr = sandbox.PrivateFolder(context.Background(), filepath.Dir(private), filepath.Base(private), l.r.Sandbox.Helper)
		if l.privateErr == nil {
			l.privateErr = os.MkdirAll(filepath.Join(l.tmp, "home"), 0o700)
		}
		if l.privateErr != nil {
			l.privateErr = fmt.Errorf("make the run's temp folder: %w", l.privateErr)
		}
	})
	return l.privateErr
}

// privateRoot is the folder of runs' private folders: <data>/tmp, not
// /tmp.
func privateRoot(data string) string {
	if data == "" {
		return filepath.Join(os.TempDir(), "proctor-tmp")
	}
	return filepath.Join(data, "tmp")
}

// scratch is the run's private folder — its temp folder and the upper
// folders of its caches — whose bytes count against max_workspace_bytes;
// "" when the run is not confined.
func (l *live) scratch() string {
	if l.tmp == "" {
		return ""
	}
	return filepath.Dir(l.tmp)
}
