package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/sandbox"
)

// hostileAgents are the ways an agent's command runs in a run: as
// proctor's own agent's run_command (approved), and as an external agent.
// Each runs `sh attack.sh` in its workspace (a file of the source): the
// model script is hostileScript.
var hostileAgents = []struct {
	name string
	args func(script string) []string
}{
	{"run_command", func(script string) []string {
		return []string{"--script", script, "--allow", "sh attack.sh"}
	}},
	{"external agent", func(script string) []string {
		return []string{"--script", script, "--agent", "command", "--", "sh", "attack.sh"}
	}},
}

// hostileScript is a model script whose model asks to run attack.sh.
const hostileScript = "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"sh attack.sh\"}}]}\n  - reply: {content: done}\n"

// The agent plays an attacker in its own workspace: it sets git config
// that runs a program (core.fsmonitor; a clean filter named by
// .gitattributes) and a diff format of its own (diff.noprefix). proctor's
// own git, which runs unconfined after the agent, runs none of it, and the
// diff it records is the one format it applies.
func TestTheAgentsGitConfigRunsNothingOutsideTheSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	out := t.TempDir()
	marker := filepath.Join(out, "pwned")
	attack := `printf '#!/bin/sh\necho ran >> ` + marker + `\ncat\n' > "$PWD/.p"; chmod +x "$PWD/.p"; ` +
		`git config core.fsmonitor "$PWD/.p"; git config filter.x.clean "$PWD/.p"; git config filter.x.required true; ` +
		`echo '* filter=x' > .gitattributes; git config diff.noprefix true; echo changed >> a.txt`
	dir := t.TempDir()
	script := filepath.Join(dir, "model.yaml")
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
	for _, mode := range []string{"workspace", "strict"} {
		for _, a := range hostileAgents {
			t.Run(mode+"/"+a.name, func(t *testing.T) {
				os.Remove(marker)
				data, src := t.TempDir(), t.TempDir()
				writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": attack})
				args := append([]string{"run", "--dir", src, "--task", "change a.txt", "--sandbox", mode}, a.args(script)...)
				r := invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")}, args...)
				if r.code != ExitOK {
					t.Fatalf("%+v", r)
				}
				if got, err := os.ReadFile(marker); err == nil {
					t.Fatalf("proctor's git ran the agent's program outside the sandbox: %s", got)
				}
				diffs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "diff.patch"))
				if len(diffs) != 1 {
					t.Fatalf("%d diffs", len(diffs))
				}
				diff, _ := os.ReadFile(diffs[0])
				if !strings.Contains(string(diff), "diff --git a/a.txt b/a.txt\n") || !strings.Contains(string(diff), "+changed\n") {
					t.Fatalf("the recorded diff is not in proctor's format:\n%s", diff)
				}
			})
		}
	}
}
