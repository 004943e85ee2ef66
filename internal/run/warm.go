package run

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/proc"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/toolcache"
	"github.com/proctor-dev/proctor/internal/workspace"
)

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
	// It builds on the modules' and the standard library's layers alone.
	held, err := store.Hold(l.modKey, l.stdKey)
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
		Start: func(p *sandbox.Policy) error {
			p.Caches = append(p.Caches, l.cachesOver(w.Upper, &toolcache.Held{})...)
			return nil
		}}
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

// The bounds on what a modules warm reads and how long it may take.
const (
	maxGoModBytes     = 16 << 20
	modulesWarmBudget = 10 * time.Minute
)

// warmModules downloads the modules a Go module's go.mod requires into a
// layer of the store that every run of the same go.mod and go.sum sees as
// its GOMODCACHE (modKey), once — a confined command has no network, so
// without it a module with dependencies could not build. proctor runs
// `go mod download` itself, unconfined, with its own environment, in a
// folder that holds nothing but copies of the two files (no scenario code
// and none of the workspace's other files; a replace by a local path is
// not found there): every module is verified against that go.sum, or
// against the checksum database for a line it lacks, before it is kept,
// so the layer holds only the public (or the user's GOPRIVATE) modules by
// their hashes. They come from the user's own module cache when it has
// them (as a file:// proxy, checked like any download), else from the
// user's GOPROXY — never directly from a version control server. Unlike
// the standard library's, every run makes it (a plain run's agent builds
// too); a module with a vendor folder, or no go.sum, needs none.
func (l *live) warmModules(ctx context.Context, ws *workspace.Workspace) {
	store := l.r.Sandbox.Caches
	if store == nil || l.plainCaches {
		return
	}
	mod, sum, ok := goModFiles(ws.Dir)
	if !ok {
		return
	}
	dir := filepath.Join(l.tmp, "mod")
	env := scrubbedEnv(l.r.Environ, dir)
	goBin, err := lookPath("go", env)
	if err != nil {
		return
	}
	key := modKey(goBin, mod, sum)
	l.modKey = key
	w := l.beginWarm(ctx, key, "the modules go.mod requires, verified against its go.sum (once for this go.mod and go.sum)")
	if w == nil {
		return
	}
	defer w.Drop()
	if err := l.makePrivate(); err != nil {
		l.warmNote("toolchain caches: the modules not downloaded: %v", err)
		return
	}
	start := time.Now()
	if err := downloadModules(ctx, goBin, env, dir, mod, sum, w.Files("go-mod")); err != nil {
		l.warmNote("toolchain caches: the modules not downloaded: %v; a command that builds this module will find them missing (GOPROXY=off)", err)
		return
	}
	if err := l.keepLayer(ctx, w); err != nil {
		l.warmNote("toolchain caches: not kept: %v", err)
		return
	}
	l.warmNote("the modules downloaded and verified in %s", time.Since(start).Round(time.Millisecond))
}

// goModFiles reads a Go module's go.mod and go.sum at the root of dir:
// regular files (not links), of a bounded size. ok is false when there is
// nothing to download: no go.mod, an empty or missing go.sum, or a vendor
// folder, which go builds from instead.
func goModFiles(dir string) (mod, sum []byte, ok bool) {
	read := func(name string) []byte {
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxGoModBytes {
			return nil
		}
		raw, _ := os.ReadFile(p)
		return raw
	}
	if info, err := os.Lstat(filepath.Join(dir, "vendor", "modules.txt")); err == nil && info.Mode().IsRegular() {
		return nil, nil, false
	}
	mod, sum = read("go.mod"), read("go.sum")
	return mod, sum, len(mod) > 0 && len(bytes.TrimSpace(sum)) > 0
}

// modKey names a module's layer: the go binary (its path, size and time:
// which modules `go mod download` takes depends on the version) and the
// two files.
func modKey(goBin string, mod, sum []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "toolcache mod 1\n")
	if info, err := os.Stat(goBin); err == nil {
		fmt.Fprintf(h, "go %s %d %d\n", goBin, info.Size(), info.ModTime().UnixNano())
	}
	fmt.Fprintf(h, "go.mod %d\n%s\ngo.sum %d\n%s\n", len(mod), mod, len(sum), sum)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// downloadModules runs `go mod download` on copies of go.mod and go.sum
// in dir, into the module cache folder into.
func downloadModules(ctx context.Context, goBin string, env []string, dir string, mod, sum []byte, into string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	defer osfile.RemoveAll(dir)
	for name, raw := range map[string][]byte{"go.mod": mod, "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, modulesWarmBudget)
	defer cancel()
	// GOFLAGS, the toolchain and the workspace are proctor's, not the
	// user's or the module's: no vendor mode, no toolchain download, no
	// go.work from a folder above; GOVCS=*:off fetches nothing directly
	// (GOPRIVATE's modules included).
	env = append(slices.Clone(env), "GOFLAGS=-mod=mod -modcacherw", "GOTOOLCHAIN=local", "GOWORK=off", "GOVCS=*:off")
	goEnv := proc.Command(ctx, goBin, "env", "GOPROXY", "GOMODCACHE")
	goEnv.Dir, goEnv.Env = dir, env
	out, err := goEnv.Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	proxy, own, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	proxy = moduleProxy(proxy, strings.TrimSpace(own))
	if proxy == "" {
		return fmt.Errorf("no module proxy: GOPROXY has none but direct or off, and there is no module cache (GOMODCACHE) to read")
	}
	download := proc.Command(ctx, goBin, "mod", "download")
	download.Dir = dir
	download.Env = append(env, "GOMODCACHE="+into, "GOPROXY="+proxy)
	if out, err := download.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("go mod download: not done in %s", modulesWarmBudget)
		}
		return fmt.Errorf("go mod download: %w: %s", err, clip.Head(strings.TrimSpace(string(out)), 600))
	}
	return nil
}

// moduleProxy is the GOPROXY a modules warm downloads through: the user's
// module cache first (a file:// proxy of its downloads, when it has
// any), then the proxies of the user's GOPROXY — without direct and off,
// so nothing is fetched from a version control server.
func moduleProxy(goproxy, modcache string) string {
	var out []string
	if modcache != "" && filepath.IsAbs(modcache) {
		downloads := filepath.Join(modcache, "cache", "download")
		if info, err := os.Stat(downloads); err == nil && info.IsDir() {
			out = append(out, (&url.URL{Scheme: "file", Path: downloads}).String())
		}
	}
	for _, p := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if p = strings.TrimSpace(p); p != "" && p != "direct" && p != "off" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ",")
}
