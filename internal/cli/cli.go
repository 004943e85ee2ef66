package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitProblems = 1 // the command ran and found problems (index problems, failed checks)
	ExitUsage    = 2 // wrong usage, or a set-up error that stopped the command
)

// Env is what a command may use from the process: its streams and its
// environment, passed in so that tests can supply their own.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env Env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "serve the dashboard and API", runServe},
		{"index", "index run bundles into the data folder's database", runIndex},
		{"migrate", "show or apply database migrations", runMigrate},
		{"run", "run an agent on a copy of a folder", runRun},
		{"apply", "review a run's diff at a terminal and apply it", runApply},
		{"review", "ask for changes of a run: comments that become the agent's next turn", runReview},
		{"script", "serve, lint or export model scripts", runScript},
		{"session", "list, show, resume or replay sessions", runSession},
		{"cache", "list or prune the git mirrors runs on repositories share", runCache},
		{"rule", "list, add or revoke approval rules (commands allowed without asking)", runRule},
		{"scenario", "run, prove, list or scaffold scenarios", runScenario},
		{"check", "run a scenario run's checks again against its workspace", runCheck},
		{"compare", "compare two suites: regressions, fixes, flaky scenarios, cost (exit 1 by --fail-on)", runCompare},
		{"baseline", "list, set or remove the named suites others are compared with", runBaseline},
		{"push", "send run bundles to a team's proctor host", runPush},
		{"export", "write a run as one self-contained HTML file", runExport},
		{"user", "add, list, change or remove accounts for a shared host", runUser},
		{"token", "create, list or revoke API tokens", runToken},
		{"selftest", "run the built-in demo end to end and check the result", runSelftest},
		{"doctor", "say what this host gives the sandbox, wall by wall, and what to change", runDoctor},
		{"version", "print the version", runVersion},
	}
}

// usageError is wrong usage: printed as one line, exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return usageError{fmt.Sprintf("proctor %s: %s (see 'proctor %s --help')", cmd, fmt.Sprintf(format, args...), cmd)}
}

// exitError carries an exit code other than 0 and 2 together with a message
// that has already been printed (or needs none).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs proctor with args (without the program name) and returns the exit
// code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			return Main(ctx, []string{args[1], "--help"}, env)
		}
		printTopUsage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "agent-hook" { // an agent's permission hook, which its configuration runs (internal/external)
		if len(args) != 2 || !slices.Contains(external.HookKinds(), args[1]) {
			fmt.Fprintf(env.Stderr, "usage: proctor agent-hook %s (an agent's permission hook, written by proctor into its settings)\n", strings.Join(external.HookKinds(), "|"))
			return ExitUsage
		}
		if err := external.Hook(ctx, args[1], env.Stdin, env.Stdout, env.Getenv); err != nil {
			fmt.Fprintln(env.Stderr, err)
			return 2 // Claude Code blocks the call
		}
		return ExitOK
	}
	if args[0] == "sandbox-exec" { // proctor's own helper, run by proctor (internal/sandbox)
		code, err := sandbox.Main(args[1:], env.Stderr)
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			return 126 // as a shell says of a command it cannot run
		}
		return code
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == args[0] {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		fmt.Fprintf(env.Stderr, "proctor: unknown command %q (see 'proctor --help')\n", args[0])
		return ExitUsage
	}
	err := cmd.run(ctx, env, args[1:])
	var ue usageError
	var ee exitError
	var pe printedError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(env.Stderr, "proctor %s: %v\n", cmd.name, pe.err)
		return pe.code
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintln(env.Stderr, ue.msg)
		return ExitUsage
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(env.Stderr, "proctor %s: %v\n", cmd.name, err)
		return ExitUsage
	}
}

func printTopUsage(w io.Writer) {
	fmt.Fprint(w, `proctor — a harness and review dashboard for AI coding agents.

Usage: proctor <command> [flags] [args]

Commands:
`)
	cmds := commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'proctor <command> --help' for a command's flags.
Data folder: --data DIR, else $PROCTOR_DATA, else $XDG_DATA_HOME/proctor (~/.local/share/proctor).
Exit codes: 0 ok; 1 the command found problems; 2 wrong usage or set-up error.
`)
}

// flagSet is a command's flags with its help text.
type flagSet struct {
	*flag.FlagSet
	name, usage, help string
	env               Env
}

// newFlags makes a flag set for a command whose errors come back as one-line
// usage errors and whose --help prints usage and the flags to stdout.
func newFlags(env Env, name, usage, help string) *flagSet {
	fs := flag.NewFlagSet("proctor "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // wrong usage prints one line, not the whole help
	return &flagSet{FlagSet: fs, name: name, usage: usage, help: help, env: env}
}

func (fs *flagSet) printHelp() {
	w := fs.env.Stdout
	fmt.Fprintf(w, "Usage: proctor %s %s\n\n%s\n", fs.name, fs.usage, strings.TrimSpace(fs.help))
	var hasFlags bool
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// parseFlags parses args, flags and arguments in any order ("--" ends the
// flags), and turns flag errors into one-line usage errors.
func parseFlags(fs *flagSet, name string, args []string) error {
	var positional []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.printHelp()
			return flag.ErrHelp
		}
		if err != nil {
			return usagef(name, "%v", explainFlagError(fs, err))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

var badFlagValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z0-9-]+): parse error$`)

// explainFlagError says what a flag wants where the flag package says only
// "parse error": a duration needs a unit.
func explainFlagError(fs *flagSet, err error) error {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if f := fs.Lookup(m[2]); f != nil {
		if _, derr := time.ParseDuration(f.DefValue); derr == nil {
			return fmt.Errorf("--%s %q: want a duration with its unit, like 30s, 5m or 1h30m", m[2], m[1])
		}
	}
	return fmt.Errorf("--%s %q: not a valid value", m[2], m[1])
}

// dataDir resolves the data folder: the flag, else $PROCTOR_DATA, else
// $XDG_DATA_HOME/proctor, else ~/.local/share/proctor.
func dataDir(flagValue string, getenv func(string) string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = getenv("PROCTOR_DATA")
	}
	if dir == "" {
		if x := getenv("XDG_DATA_HOME"); x != "" {
			dir = filepath.Join(x, "proctor")
		}
	}
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("find the data folder: no --data, PROCTOR_DATA, XDG_DATA_HOME or home folder: %w", err)
			}
			home = h
		}
		dir = filepath.Join(home, ".local", "share", "proctor")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data folder %s: %w", dir, err)
	}
	return abs, nil
}

// ensureDataDir creates the data folder and its runs/ and sessions/
// folders, private to proctor's user (0700): what a run left there — a
// workspace, a cache layer — is no other local user's to reach. A data
// folder made before with wider modes is narrowed.
func ensureDataDir(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, "runs"), filepath.Join(dir, "sessions")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create data folder: %w", err)
		}
		if err := privateFolder(d); err != nil {
			return err
		}
	}
	return nil
}

func dbPath(dir string) string { return filepath.Join(dir, "proctor.db") }
