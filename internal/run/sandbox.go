package run

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// Sandbox says how a runner confines the commands of its runs.
type Sandbox struct {
	Mode   string   // sandbox.ModeWorkspace (default), ModeStrict or ModeOff
	Helper string   // the proctor binary, run as `proctor sandbox-exec`
	Read   []string // the read allow-list (toolchains, module caches); not in strict mode
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

// mode is the sandbox mode of the run: the spec's, else the runner's.
func (l *live) mode() string {
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

// checkSandbox refuses a confined run on a kernel that cannot confine it.
func (l *live) checkSandbox() error {
	if m := l.mode(); m == "" || m == sandbox.ModeOff {
		return nil
	}
	if err := sandbox.Available(); err != nil {
		return fmt.Errorf("%v: proctor runs no command unconfined unless told to; pass --sandbox off to run this run's commands with your own permissions", err)
	}
	return nil
}

// confine is how the run's commands are confined: writing only ws, the
// run's private temp folder and write, reaching the model only through
// proxy (nil: not at all); nil when the run is not confined.
func (l *live) confine(ws string, proxy *sandbox.Proxy, write ...string) *sandbox.Confinement {
	m := l.mode()
	if m == "" || m == sandbox.ModeOff {
		return nil
	}
	b := l.spec.Bounds
	p := sandbox.Policy{Write: append([]string{ws, l.tmp}, write...), Proxy: proxy,
		MaxFile: uint64(b.MaxWorkspaceBytes), MaxProcs: uint64(b.MaxProcesses), CPU: uint64(b.MaxCPUS),
		// Its own run folder (checks read calls.json there) and proctor's
		// repository of the workspace, whose objects the workspace's own
		// .git reads.
		Read: []string{l.dir, workspace.GitDir(ws)}}
	if l.spec.Scenario != nil && l.spec.Scenario.Path != "" {
		p.Read = append(p.Read, l.spec.Scenario.Path) // setup, ready and executable checks
	}
	if m == sandbox.ModeWorkspace {
		p.Read = append(p.Read, l.r.Sandbox.Read...)
	}
	helper := l.r.Sandbox.Helper
	// proctor's own binary, alone (its folder may hold anything): an
	// agent's permission hook runs it to ask the run's approvals.
	if self, err := filepath.EvalSymlinks(helper); err == nil && filepath.IsAbs(self) {
		p.Run = append(p.Run, self)
	}
	return &sandbox.Confinement{Policy: p, Helper: helper, ReadProgram: m == sandbox.ModeWorkspace}
}

// sandboxEnv points a confined command's home and caches into the run's
// private temp folder.
func (l *live) sandboxEnv(env []string) []string {
	if m := l.mode(); m == "" || m == sandbox.ModeOff {
		return env
	}
	home := filepath.Join(l.tmp, "home")
	os.MkdirAll(home, 0o700)
	return append(env, "HOME="+home, "TMPDIR="+l.tmp, "XDG_CACHE_HOME="+filepath.Join(l.tmp, "cache"),
		"GOCACHE="+filepath.Join(l.tmp, "cache", "go-build"), "GOTMPDIR="+l.tmp, "npm_config_cache="+filepath.Join(l.tmp, "cache", "npm"), "GOTOOLCHAIN=local")
}

// privateTemp makes a run's private temp folder under <data>/tmp, locked
// (an flock on the folder, which the kernel drops however the process
// ends) while the run works; release removes it. The folders of runs that
// no process works on any more — left by a proctor killed with -9 — are
// removed first.
func privateTemp(data string) (string, func(), error) {
	root := filepath.Join(data, "tmp")
	if data == "" {
		root = filepath.Join(os.TempDir(), "proctor-tmp")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", nil, fmt.Errorf("make the run's temp folder: %w", err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		// A folder made this minute may not be locked yet by its run.
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		if l, err := flock.TryLock(p, false); err == nil {
			os.RemoveAll(p) // its run is gone
			l.Unlock()
		}
	}
	dir, err := os.MkdirTemp(root, "run-*")
	if err != nil {
		return "", nil, fmt.Errorf("make the run's temp folder: %w", err)
	}
	l, err := flock.TryLock(dir, false)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("the run's temp folder: %w", err)
	}
	return dir, func() { os.RemoveAll(dir); l.Unlock() }, nil
}
