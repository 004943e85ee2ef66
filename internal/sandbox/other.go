//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"

	"github.com/proctor-dev/proctor/internal/osfile"
)

// On a system that is not Linux proctor has no sandbox: the dashboard,
// review, the index, push, compare and runs with --sandbox off work; a
// confined command is refused with what to use instead.

// errNoSandbox is what a confined command meets here.
func errNoSandbox() error {
	return &StartError{Wall: WallNamespaces, Err: fmt.Errorf("proctor's sandbox needs Linux's namespaces, and this is %s", runtime.GOOS)}
}

func (c Command) confine(*exec.Cmd) (alive, report *os.File, sc *subCommand, err error) {
	return nil, nil, nil, errNoSandbox()
}

// subCommand: no command runs as another id here.
type subCommand struct{}

func (*subCommand) mapped(context.Context, int) error { return errNoSandbox() }
func (*subCommand) giveBack(context.Context) error    { return nil }
func (*subCommand) close()                            {}

func (in invocation) run(io.Writer) (int, error) { return 0, errNoSandbox() }

// Survey says the sandbox is not here.
func Survey(context.Context, string, string, int) ([]Finding, error) { return nil, errNoSandbox() }

// LeaseID: no run is confined here.
func LeaseID(context.Context, string) (*ID, error) { return nil, errNoSandbox() }

// Reclaim has nothing to take back: no command ran as another id.
func (*ID) Reclaim(context.Context, ...string) error { return nil }

// ShareLayer has nothing to share: no command ran confined.
func (*ID) ShareLayer(context.Context, ...string) error { return nil }

// RemoveAll removes path: no command ran as another id.
func RemoveAll(_ context.Context, _, path string) error { return osfile.RemoveAll(path) }
