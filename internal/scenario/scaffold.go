package scenario

import (
	"fmt"
	"os"
	"path/filepath"
)

// Scaffold creates a new, valid scenario folder named id in dir: a fixture,
// a model script that solves it, a declarative check and an executable one.
func Scaffold(dir, id string) error {
	files := map[string]string{
		File: fmt.Sprintf(`# A scenario: a fixture, a conversation, limits, and checks (see docs/scenarios.md).
id: %s
description: Change the greeting in greeting.txt to "hello, world".
tags: [example]
task: Change the greeting in greeting.txt to "hello, world". Change nothing else.
criteria:
  - greeting.txt says hello, world.
out_of_scope:
  - Any other file.
budgets:
  max_messages: 6
  wall_clock_s: 60
model:
  script: model.yaml   # replace with {profile: NAME} to try a live model
checks:
  - name: greeting-changed
    kind: file_contains
    path: greeting.txt
    text: hello, world
  - name: nothing-else
    kind: only_paths_changed
    paths: [greeting.txt]
  - kind: budget_not_exceeded
`, id),
		ModelFile: `# The scripted model: what an agent that solves the scenario says.
steps:
  - expect: {last_role: user, last_contains: greeting}
    reply:
      tool_calls:
        - name: read_file
          arguments: {path: greeting.txt}
  - expect: {last_role: tool}
    reply:
      tool_calls:
        - name: write_file
          arguments: {path: greeting.txt, content: "hello, world\n"}
  - reply:
      content: greeting.txt now says hello, world.
`,
		filepath.Join(Fixture, "greeting.txt"): "hello\n",
		filepath.Join(ChecksDir, "greeting-ends-with-newline"): `#!/bin/sh
# An executable check: exit 0 held, exit 1 failed (print why), anything else
# is a broken check. It runs in the finished workspace; PROCTOR_RUN_DIR,
# PROCTOR_WORKSPACE and PROCTOR_CALLS (a JSON list of tool calls) are set.
if [ "$(tail -c 1 greeting.txt | od -An -c | tr -d ' ')" != '\n' ]; then
  echo "greeting.txt does not end with a newline"
  exit 1
fi
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("scaffold %s: %w", dir, err)
		}
		mode := os.FileMode(0o644)
		if filepath.Dir(name) == ChecksDir {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			return fmt.Errorf("scaffold %s: %w", dir, err)
		}
	}
	return nil
}
