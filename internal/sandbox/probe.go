package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// ProbeHost probes the sandbox as helper (the proctor binary) gives it to
// any command: the system folders, and one folder of its own to write.
func ProbeHost(ctx context.Context, helper string, landlockABI int) (Walls, error) {
	dir, err := os.MkdirTemp("", "proctor-probe-")
	if err != nil {
		return Walls{}, fmt.Errorf("probe the sandbox: %w", err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // the sandbox's id, as root, enters it
	return Probe(ctx, &Confinement{Policy: Policy{Write: []string{dir}, LandlockABI: landlockABI}, Helper: helper}, dir)
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
