// Package gitcmd is how proctor runs git outside the sandbox, for a source
// it fetches as for a workspace it diffs: with none of the GIT_* variables
// of proctor's own environment (a GIT_DIR, GIT_CONFIG_* or GIT_SSH_COMMAND
// set around proctor must not steer it), no system or global config, and
// no prompt.
package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"strings"

	"github.com/proctor-dev/proctor/internal/proc"
)

// base is what every git proctor runs is given.
var base = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS="}

// Env is proctor's environment less every GIT_* variable, with git's
// config and prompts off, then extra (the caller's own GIT_* settings).
func Env(extra ...string) []string {
	environ := os.Environ()
	env := make([]string, 0, len(environ)+len(base)+len(extra))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "SSH_ASKPASS=") {
			env = append(env, kv)
		}
	}
	env = append(env, base...)
	return append(env, extra...)
}

// Command is git with args in dir, run with Env(extra...), started as
// every process proctor runs is (internal/proc).
func Command(ctx context.Context, dir string, extra []string, args ...string) *exec.Cmd {
	cmd := proc.Command(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, Env(extra...)
	return cmd
}
