// Package demo owns proctor's built-in demo: a small sample project with a
// rounding bug, and the model script of an agent that fixes it. `proctor
// selftest` and the dashboard's out-of-the-box demo run them; no key and no
// network are needed.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/script"
)

//go:embed _fixture demo.yaml notes.yaml
var files embed.FS

// Task is what the demo asks the agent to do.
const Task = "Fix the rounding bug in invoice totals: 3 x 0.29 EUR comes out as 86 cents instead of 87. Amounts must be rounded to the nearest cent, not truncated."

// Criteria are the demo task's criteria.
var Criteria = []string{"Totals are rounded to the nearest cent.", "go test ./... passes."}

// Commands the demo's agent may run without asking.
var AllowedCommands = []string{"go test"}

// Script is the demo's model script.
func Script() (*script.Script, error) { return Builtin("demo") }

// A BuiltinScript is a scripted model that comes with proctor, offered by
// the Launch form so that a newcomer can launch a run without a key or a
// line of YAML. FollowUp says that it answers any conversation's next
// message too (a session's next run, a reviewer's request for changes):
// its steps expect nothing of the task.
type BuiltinScript struct {
	Name, Title string
	FollowUp    bool
}

// Builtins are the built-in scripted models.
func Builtins() []BuiltinScript {
	return []BuiltinScript{
		{"notes", "notes — lists the files and writes NOTES.md (any folder)", true},
		{"demo", "demo — fixes the rounding bug of the demo's invoice project (a task that mentions rounding)", false},
	}
}

// FollowUps are the built-in scripted models that answer any
// conversation's next message.
func FollowUps() []BuiltinScript {
	var out []BuiltinScript
	for _, b := range Builtins() {
		if b.FollowUp {
			out = append(out, b)
		}
	}
	return out
}

// Builtin is the built-in scripted model called name.
func Builtin(name string) (*script.Script, error) {
	for _, b := range Builtins() {
		if b.Name == name {
			data, err := files.ReadFile(name + ".yaml")
			if err != nil {
				return nil, fmt.Errorf("read the built-in script %s: %w", name, err)
			}
			return script.Parse("builtin:"+name+".yaml", data)
		}
	}
	var names []string
	for _, b := range Builtins() {
		names = append(names, b.Name)
	}
	return nil, fmt.Errorf("no built-in script %q; there are %s", name, strings.Join(names, ", "))
}

// WriteFixture writes the sample project into dir, which must not exist or
// be empty.
func WriteFixture(dir string) error {
	sub, err := fs.Sub(files, "_fixture")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("write the demo project: %w", err)
	}
	if err := os.CopyFS(dir, sub); err != nil {
		return fmt.Errorf("write the demo project to %s: %w", dir, err)
	}
	// go.mod is kept under another name so that Go does not take the
	// fixture for a module of its own.
	if err := os.Rename(filepath.Join(dir, "go.mod.fixture"), filepath.Join(dir, "go.mod")); err != nil {
		return fmt.Errorf("write the demo project to %s: %w", dir, err)
	}
	return nil
}
