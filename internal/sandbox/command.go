package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/proctor-dev/proctor/internal/proc"
)

// Confinement is how a Command is confined: what it may do and the helper
// (the proctor binary) that makes it so.
type Confinement struct {
	Policy Policy
	Helper string // the proctor binary, run as `proctor sandbox-exec --init`
	// ReadProgram lets the command also read the folders its program is
	// run from (ProgramDirs): an npm-installed agent's node_modules.
	ReadProgram bool
	// Host keeps what of /etc every user may read, worked out once for many
	// commands; nil works it out for this command.
	Host *HostFiles
	// Start, when set, is called as the command starts, with the
	// command's own copy of the policy: it makes what the run had no need
	// of before its first command (its private folder, its id) and adds
	// them — the id, the toolchain caches — to the policy. A run builds
	// confinements it may never use.
	Start func(p *Policy) error
	// survey: the init tries every wall and reports each (Survey); it
	// starts no command.
	survey bool
}

// Command is a command proctor starts for a run, and the one way it starts
// one: in a process group of its own that is killed whole, killed when
// proctor dies (Pdeathsig), confined when Confine is set, its output kept
// up to a bound.
type Command struct {
	Argv []string
	Dir  string
	Env  []string
	// Stdin is the command's input; nil is /dev/null.
	Stdin io.Reader
	// Stdout and Stderr, when Stdout is set, get the command's output as
	// it is (Result.Output stays empty); otherwise both are kept together,
	// up to MaxOutput bytes, and passed on to Live as they come.
	Stdout, Stderr io.Writer
	Live           io.Writer
	MaxOutput      int // 0: 1 MiB
	// Confine, when set, confines the command; nil runs it with proctor's
	// own permissions (the sandbox off).
	Confine *Confinement
	Timeout time.Duration // 0: no limit but ctx
	// Stop is the signal the command's process group gets when ctx ends or
	// the time limit passes (0: SIGKILL); what is left of it WaitDelay later
	// (0: 2 s) is killed.
	Stop      syscall.Signal
	WaitDelay time.Duration
}

// Result is how a command ended.
type Result struct {
	Code     int            // its exit status; -1 when it did not exit by itself
	Signal   syscall.Signal // the signal that ended it, when one did
	TimedOut bool           // stopped at its time limit
	Elapsed  time.Duration
	Output   []byte // stdout and stderr as they came, the first MaxOutput bytes
	Cut      int64  // bytes of output past MaxOutput, not kept
	// Walls are the walls a confined command had (its init's report);
	// nil for a command run unconfined.
	Walls *Walls
}

// Run runs the command to its end. The error says why it could not start
// (a *StartError when a wall of its sandbox could not be put up: a harness
// error, never the command's), or that ctx ended first (ctx's error); a
// command that ran and failed is not an error, its Result says how it
// ended.
func (c Command) Run(ctx context.Context) (Result, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return Result{Code: -1}, errors.New("run: no command")
	}
	// The time limit counts from the command's start: what proctor does to
	// confine it first (its folders given to its id, its caches) is not the
	// command's time.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	cmd, alive, report, sc, err := c.build(cctx)
	if err != nil {
		return Result{Code: -1}, err
	}
	if alive != nil {
		defer alive.Close()
		defer report.Close()
	}
	out := c.wire(cmd)
	start := time.Now()
	err = cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the init's
	}
	if sc != nil && err != nil {
		sc.close()
	}
	if err != nil && ctx.Err() != nil {
		return Result{Code: -1}, ctx.Err() // stopped before it started: no wall failed
	}
	if err != nil {
		if c.Confine != nil {
			return Result{Code: -1}, &StartError{Wall: WallNamespaces, Err: fmt.Errorf("start %s in namespaces of its own: %w", c.Argv[0], err)}
		}
		return Result{Code: -1}, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	if sc != nil {
		if err := sc.mapped(ctx, cmd.Process.Pid); err != nil {
			proc.KillGroup(cmd.Process)
			cmd.Wait()
			if ctx.Err() != nil {
				return Result{Code: -1}, ctx.Err()
			}
			return Result{Code: -1}, &StartError{Wall: WallNamespaces, Err: fmt.Errorf("start %s: %w", c.Argv[0], err)}
		}
	}
	if c.Timeout > 0 {
		limit := time.AfterFunc(c.Timeout, func() { timedOut.Store(true); cancel() })
		defer limit.Stop()
	}
	err = cmd.Wait()
	proc.KillGroup(cmd.Process) // what it left running (a confined command leaves nothing: its init took it along)
	res := Result{Code: -1, Elapsed: time.Since(start)}
	if sc != nil {
		if gerr := sc.giveBack(context.WithoutCancel(ctx)); gerr != nil {
			return res, &StartError{Wall: WallNamespaces, Err: fmt.Errorf("after %s: %w", c.Argv[0], gerr)}
		}
	}
	res.Output, res.Cut = out.bytes()
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if report != nil {
		walls, rerr := readReport(report, res.Output)
		if rerr != nil {
			return res, rerr
		}
		res.Walls = &walls
	}
	if err := res.ended(err, timedOut.Load()); err != nil {
		return res, fmt.Errorf("run %s: %w", c.Argv[0], err)
	}
	return res, nil
}

// wire gives cmd its output (c's writers, else a bounded buffer, which it
// returns) and how it is stopped: c.Stop to its process group, then what
// is left WaitDelay later.
func (c Command) wire(cmd *exec.Cmd) *boundedOutput {
	out := &boundedOutput{max: c.MaxOutput, live: c.Live}
	if out.max <= 0 {
		out.max = 1 << 20
	}
	if c.Stdout != nil {
		cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
		if c.Stderr == nil {
			cmd.Stderr = c.Stdout
		}
	} else {
		cmd.Stdout, cmd.Stderr = out, out
	}
	stop := c.Stop
	if stop == 0 {
		stop = syscall.SIGKILL
	}
	proc.Stop(cmd, stop, c.WaitDelay)
	return out
}

// ended says in res how the command ended, from Wait's error: an error
// of its own when it is not the command's way of ending.
func (res *Result) ended(err error, timedOut bool) error {
	var exit *exec.ExitError
	switch {
	case timedOut:
		res.TimedOut = true
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		} else {
			res.Code = exit.ExitCode()
		}
	case err != nil:
		return err
	default:
		res.Code = 0
	}
	return nil
}

// build is the exec.Cmd of the command: itself, or the helper as the init
// of its namespaces, which confines itself and then starts it. A confined
// command's init learns that proctor died from a pipe whose write end
// (alive, to be closed once the command has ended) closes with proctor,
// however it ends: Pdeathsig alone is cleared when the init becomes the
// command's id. It says how the command started on another pipe, whose
// read end is report. A command that runs as one of the user's
// subordinate ids has sc: its ids are mapped once it has started (its
// init waits), and its folders given back once it has ended.
func (c Command) build(ctx context.Context) (cmd *exec.Cmd, alive, report *os.File, sc *subCommand, err error) {
	cmd = proc.Command(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, c.Env, c.Stdin
	if c.Confine == nil {
		return cmd, nil, nil, nil, nil
	}
	alive, report, sc, err = c.confine(cmd)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return cmd, alive, report, sc, nil
}

// ProgramDirs are the folders a program is run from: its own, and for an
// npm-installed command the node_modules folder its package lives in.
func ProgramDirs(name string) []string {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	if i := strings.LastIndex(dir, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		return []string{dir[:i+len("/node_modules")]}
	}
	if strings.HasPrefix(dir, "/usr/") || dir == "/bin" || dir == "/usr/bin" {
		return nil // the system is readable anyway
	}
	return []string{dir}
}

// boundedOutput keeps the first max bytes written, counts the rest, and
// passes everything on to live.
type boundedOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	cut  int64
	live io.Writer
}

func (o *boundedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	keep := min(len(p), o.max-o.buf.Len())
	o.buf.Write(p[:keep])
	o.cut += int64(len(p) - keep)
	if o.live != nil {
		o.live.Write(p)
	}
	return len(p), nil
}

func (o *boundedOutput) bytes() ([]byte, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes()), o.cut
}
