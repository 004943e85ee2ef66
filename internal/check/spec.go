// Package check owns judging a finished run: declarative checks (file
// exists or absent, file contains or matches, only allowed paths changed,
// the final message contains a text, a tool was or was not called, the agent
// asked the user a question, a command
// holds, no budget was exceeded) and executable checks (checks/<name> of a
// scenario: exit 0 held, exit 1 failed with its output as the reason,
// anything else broken — the scenario author's mistake, reported apart).
package check

import (
	"regexp"
	"time"
)

// Kinds of declarative check.
const (
	KindFileExists        = "file_exists"
	KindFileAbsent        = "file_absent"
	KindFileContains      = "file_contains"
	KindFileMatches       = "file_matches"
	KindFileEquals        = "file_equals"
	KindOnlyPathsChanged  = "only_paths_changed"
	KindFinalMessage      = "final_message_contains"
	KindToolCalled        = "tool_called"
	KindToolNotCalled     = "tool_not_called"
	KindAsked             = "asked"
	KindCommand           = "command"
	KindBudgetNotExceeded = "budget_not_exceeded"
	KindExecutable        = "executable"
)

// Kinds lists the declarative kinds.
func Kinds() []string {
	return []string{KindFileExists, KindFileAbsent, KindFileContains, KindFileMatches, KindFileEquals, KindOnlyPathsChanged,
		KindFinalMessage, KindToolCalled, KindToolNotCalled, KindAsked, KindCommand, KindBudgetNotExceeded}
}

// Outcome says which calls a tool check counts.
type Outcome string

// The outcomes a tool check may ask for.
const (
	Succeeded Outcome = "true"  // the calls that succeeded: a command exited 0, another tool's result is not an error
	Failed    Outcome = "false" // the calls that did not
	Any       Outcome = "any"   // every call
)

// Outcomes lists them, as a scenario writes them.
func Outcomes() []string { return []string{string(Succeeded), string(Failed), string(Any)} }

// Spec is one check as a scenario declares it.
type Spec struct {
	Name    string
	Kind    string
	Path    string         // file_*: the file, relative to the workspace
	Text    string         // file_contains, final_message_contains, asked (optional)
	Pattern *regexp.Regexp // file_matches
	// Expected: file_equals: the file the workspace's must equal byte for
	// byte, relative to Dir (the scenario folder: expected/<path>, as
	// `proctor scenario from` writes it).
	Expected, Dir string
	Paths         []string       // only_paths_changed: globs (** matches across folders)
	Tool          string         // tool_called, tool_not_called
	Args          *regexp.Regexp // tool_called, tool_not_called: matched against the call's arguments
	// Succeeded: tool_called, tool_not_called: which calls count, by how
	// they went (Call.Succeeded); "" is the kind's default: tool_called
	// counts the calls that succeeded, tool_not_called every call.
	Succeeded Outcome
	Command   string        // command
	Timeout   time.Duration // command, executable; default 60s
	Exec      string        // executable: the checks/<name> file
	Line      int           // where it is declared, for messages
}
