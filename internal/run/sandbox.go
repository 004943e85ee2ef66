package run

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/sandbox"
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
	// swept is when the runner's runs last removed what killed proctors
	// left (sweep).
	sweptMu sync.Mutex
	swept   time.Time
}

// sweepEvery is how often a runner's runs look for what killed proctors
// left: each run of a suite of thousands need not list the folders again.
const sweepEvery = 30 * time.Second

// sweep removes what proctors killed with -9 left — runs' private folders
// in the data folder, warms in the store — as a run starts, when the
// runner's runs have not looked for sweepEvery.
func (sb *Sandbox) sweep(ctx context.Context, data string, progress func(string, ...any)) {
	sb.sweptMu.Lock()
	due := sb.swept.IsZero() || time.Since(sb.swept) >= sweepEvery
	if due {
		sb.swept = time.Now()
	}
	sb.sweptMu.Unlock()
	if !due {
		return
	}
	if err := sandbox.RemoveLeft(ctx, privateRoot(data), sb.Helper); err != nil {
		progress("  warning: %v", err)
	}
	if sb.Caches != nil {
		sb.Caches.RemoveDead()
	}
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
// the runner's runs (again after a failure). It leases an id and lets it
// go too: a run leases its own only with its first command, and a host
// that cannot lease one says so before any agent starts.
func (sb *Sandbox) probe(ctx context.Context, data string) (sandbox.Walls, error) {
	return sb.probed.Do(ctx, func(ctx context.Context) (sandbox.Walls, error) {
		walls, err := sandbox.ProbeHost(ctx, sb.Helper, privateRoot(data), sb.LandlockABI, sb.Host)
		if err != nil {
			return walls, err
		}
		id, err := sandbox.LeaseID(ctx, sb.Helper)
		if err != nil {
			return walls, err
		}
		id.Release()
		return walls, nil
	})
}

// DefaultRead is the read allow-list when none is given: the Go toolchain,
// from the environment or where it usually is. (A confined command's
// module cache is its warm layer, not the user's.)
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
// is the runner's, made once for its runs (again after a failure). The id
// the commands run as is leased with the first of them (makePrivate).
func (l *live) checkWalls(ctx context.Context) error {
	l.r.Sandbox.sweep(ctx, l.r.DataDir, l.progress)
	walls, err := l.r.Sandbox.probe(ctx, l.r.DataDir)
	if err != nil {
		return fmt.Errorf("%w. proctor runs no command unconfined unless told to: pass --sandbox off to run this run's commands with your own permissions", err)
	}
	l.plainCaches = walls.Caches != "overlay"
	w := bundle.Walls(walls)
	l.receipt.Walls = &w
	l.progress("  sandbox: %s", w)
	return nil
}

// leaseID takes the id the run's commands run as (sandbox.LeaseID), as
// its first command starts: a run that runs none — a scripted case of
// tools alone — takes none, and as a user who is not root spawns no
// helper to prove it. The receipt's walls name it when the run ends
// (noteID).
func (l *live) leaseID() error {
	id, err := sandbox.LeaseID(context.Background(), l.r.Sandbox.Helper)
	if err != nil {
		return err
	}
	l.sandboxID = id
	if id.Own {
		l.progress("  sandbox: as id %d (proctor's user's own, shared with the user's other runs)", id.ID)
	} else {
		l.progress("  sandbox: as id %d (the run's own)", id.ID)
	}
	if id.Why != "" {
		l.progress("  sandbox: no id of the run's own: %s", id.Why)
	}
	return nil
}

// noteID puts the id the run's commands ran as on the receipt's walls,
// once they have all ended; nothing when none ran.
func (l *live) noteID() {
	if l.sandboxID != nil && l.receipt.Walls != nil {
		l.receipt.Walls.ID, l.receipt.Walls.IDShared = l.sandboxID.ID, l.sandboxID.Own
	}
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
	p := sandbox.Policy{Write: writes, Proxy: proxy, LandlockABI: l.r.Sandbox.LandlockABI,
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
	start := func(p *sandbox.Policy) error {
		if err := l.makePrivate(); err != nil {
			return err
		}
		p.ID = l.sandboxID.ID
		p.Caches = append(p.Caches, caches()...)
		return nil
	}
	return &sandbox.Confinement{Policy: p, Helper: helper, ReadProgram: m.ReadsAllowList(), Host: l.r.Sandbox.Host, Start: start}
}

// sandboxEnv points a confined command's home and caches into the run's
// private temp folder; it has no network, so go looks for no module
// (GOPROXY=off): the modules it finds are its warm layer's (warmModules).
func (l *live) sandboxEnv(env []string) []string {
	if !l.mode().Confined() {
		return env
	}
	home := filepath.Join(l.tmp, "home")
	env = append(env, "HOME="+home, "TMPDIR="+l.tmp, "XDG_CACHE_HOME="+filepath.Join(l.tmp, "cache"), "GOTMPDIR="+l.tmp, "GOTOOLCHAIN=local", "GOPROXY=off")
	for _, k := range toolcache.Kinds() {
		env = append(env, k.Env+"="+l.cacheAt(k.Name))
	}
	return env
}

// cacheAt is where a confined command sees a toolchain cache.
func (l *live) cacheAt(kind string) string { return filepath.Join(l.tmp, "cache", kind) }

// layerKeys are the keys of the store's layers the run's commands see:
// the modules proctor downloaded and verified against the module's go.sum,
// the standard library proctor built from trusted inputs, and the warm of
// the run's own scenario on its fixture and toolchain — never another
// scenario's, whose setup could have put anything in the cache.
func (l *live) layerKeys() []string {
	var keys []string
	for _, k := range []string{l.modKey, l.stdKey, l.scenarioKey} {
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
		if l.privateErr = l.leaseID(); l.privateErr != nil {
			return
		}
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
