package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Probe starts a confined `true` under conf in dir, as a run's commands
// start: the walls it had, or a *StartError naming the wall this host
// cannot give. Nothing is read from sysctls: the kernel answers.
func Probe(ctx context.Context, conf *Confinement, dir string) (Walls, error) {
	res, err := Command{Argv: []string{"true"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Confine: conf, Timeout: time.Minute}.Run(ctx)
	switch {
	case err != nil:
		return Walls{}, err
	case res.Walls == nil:
		return Walls{}, &StartError{Wall: WallInit, Err: errors.New("the init did not say which walls it put up")}
	case res.Code != 0:
		return Walls{}, &StartError{Wall: WallInit, Err: fmt.Errorf("a confined `true` ended with exit %d (signal %d): %s", res.Code, res.Signal, res.Output)}
	}
	return *res.Walls, nil
}

// ProbeHost starts a confined `true` as a run's commands start, in a
// folder of its own below dir (made and removed; "": the system's temp
// folder), on dir's file system as the runs' private folders are: a folder
// to write and a toolchain cache as an overlay. When dir's file system
// cannot hold an overlay's upper folder it probes again without the cache,
// and the walls say the caches are plain and why.
func ProbeHost(ctx context.Context, helper, dir string, landlockABI int, host *HostFiles) (Walls, error) {
	var work string
	if dir == "" {
		w, err := os.MkdirTemp("", "proctor-probe-")
		if err != nil {
			return Walls{}, fmt.Errorf("probe the sandbox: %w", err)
		}
		work = w
		defer os.RemoveAll(work)
	} else {
		w, release, err := PrivateFolder(ctx, dir, "", helper)
		if err != nil {
			return Walls{}, fmt.Errorf("probe the sandbox: %w", err)
		}
		work = w
		defer release()
	}
	os.Chmod(work, 0o755)
	// A cache with a layer, so that the probe mounts an overlay as a warm
	// run's commands do (a cache with none is only bound).
	layer := filepath.Join(work, "layer")
	if err := os.Mkdir(layer, 0o755); err != nil {
		return Walls{}, fmt.Errorf("probe the sandbox: %w", err)
	}
	conf := &Confinement{Helper: helper, Host: host, Policy: Policy{Write: []string{work}, LandlockABI: landlockABI,
		Caches: []Cache{{At: filepath.Join(work, "cache"), Upper: filepath.Join(work, "upper"), Layers: []string{layer}}}}}
	walls, err := Probe(ctx, conf, work)
	var se *StartError
	if !errors.As(err, &se) || se.Wall != WallCaches {
		return walls, err
	}
	conf.Policy.Caches = nil
	walls, err = Probe(ctx, conf, work)
	walls.Caches = "plain: the data folder's file system cannot hold the caches' overlays (" + se.Err.Error() + ")"
	return walls, err
}

// Probed remembers a probe of this host for the runs of a process: walls
// that held are not probed again (the kernel and its settings do not change
// under a process), a wall that failed is probed again after retryAfter,
// so that a host fixed while a server runs is found.
type Probed struct {
	mu     sync.Mutex
	done   bool
	walls  Walls
	err    error
	failed time.Time
}

const retryAfter = 10 * time.Second

// Do returns the walls probe found, probing once (or again after a
// failure more than retryAfter ago).
func (p *Probed) Do(ctx context.Context, probe func(context.Context) (Walls, error)) (Walls, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done && (p.err == nil || time.Since(p.failed) < retryAfter) {
		return p.walls, p.err
	}
	walls, err := probe(ctx)
	if ctx.Err() != nil {
		return walls, err // a stopped run learned nothing of the host
	}
	p.done, p.walls, p.err = true, walls, err
	if err != nil {
		p.failed = time.Now()
	}
	return walls, err
}
