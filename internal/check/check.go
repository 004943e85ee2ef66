package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// Call is one tool call the agent made, and how its result said it went:
// OK unless the agent marked the result an error, and for a command, its
// exit status when the result says it (intent.Exit).
type Call struct {
	ID   string `json:"id,omitempty"`
	Tool string `json:"tool"`
	Args string `json:"args"`
	OK   bool   `json:"ok"`
	Exit *int   `json:"exit,omitempty"`
}

// Succeeded reports whether the call did what it was for: a command that
// ran and exited 0 (known from its result; a command whose result does
// not say how it ended has not been shown to succeed), any other tool
// whose result is not an error.
// (tb: the tools of the run's agent).
func (c Call) Succeeded(tb intent.Table) bool {
	if c.runs(tb) {
		return c.OK && c.Exit != nil && *c.Exit == 0
	}
	return c.OK
}

// runs reports whether the call is of a tool that runs a command.
func (c Call) runs(tb intent.Table) bool {
	if c.Tool == "run_command" {
		return true
	}
	in, ok := tb.Of(c.Tool, c.Args)
	return ok && in.Kind == intent.Run
}

// Calls are the tool calls of a run, built from its events as they come
// (a live run) or as they were recorded (a check run again): each call's
// result is matched to it by the call's id.
type Calls struct {
	list []Call
}

// Add takes one event; only tool calls and results matter.
func (cs *Calls) Add(ev bundle.EventData) {
	switch ev := ev.(type) {
	case bundle.ToolCallEvent:
		cs.list = append(cs.list, Call{ID: ev.ID, Tool: ev.Name, Args: string(ev.Args)})
	case bundle.ToolResultEvent:
		if c := cs.last(ev.ID); c != nil {
			c.OK, c.Exit = ev.OK, ev.Exit
		}
		if c := cs.last(ev.Ends); c != nil && ev.Ends != "" {
			c.Exit = ev.Exit // the command it started ended so
		}
	}
}

// last is the latest call with id.
func (cs *Calls) last(id string) *Call {
	for i := len(cs.list) - 1; i >= 0; i-- {
		if cs.list[i].ID == id {
			return &cs.list[i]
		}
	}
	return nil
}

// List is the calls so far, in the order they were made.
func (cs *Calls) List() []Call { return cs.list }

// calls says whether the call is of tool with arguments matching args
// (any, when nil). A check that names one of proctor's own tools for an
// intent (run_command, read_file, write_file, edit_file) finds whichever
// agent's tool did it (Claude Code's Bash, Gemini CLI's
// run_shell_command…), its arguments read as proctor's tool's.
func (c Call) calls(tb intent.Table, tool string, args *regexp.Regexp) bool {
	match := func(a string) bool { return args == nil || args.MatchString(a) }
	if c.Tool == tool && match(c.Args) {
		return true
	}
	if in, ok := tb.Of(c.Tool, c.Args); ok {
		name, native := in.Native()
		return name == tool && match(native)
	}
	return false
}

// Input is what checks judge: the finished workspace and what the agent
// did.
type Input struct {
	Workspace string
	RunDir    string
	Changed   []string // paths changed since the fixture's initial state
	Final     string   // the agent's last message
	Calls     []Call
	Questions []string // the questions the agent asked the user
	Aborted   string   // the budget that aborted the run, e.g. "wall_clock_s=60"
	Env       []string
	Confine   *sandbox.Confinement // when set, a check's command runs confined (a sandbox)
	// Tools are the tools of the run's agent: its own (agents.yaml), then
	// every tool proctor knows (the zero value).
	Tools intent.Table
}

// CallsFile is the file in the run folder that executable checks read the
// calls from (PROCTOR_CALLS).
const CallsFile = "calls.json"

// Run runs every spec in order, phase "post", and returns one result each.
func Run(ctx context.Context, specs []Spec, in Input) []bundle.CheckResult {
	var out []bundle.CheckResult
	callsWritten := false
	for _, s := range specs {
		if s.Kind == KindExecutable && !callsWritten && in.RunDir != "" {
			writeCalls(in)
			callsWritten = true
		}
		r := One(ctx, s, in)
		r.Phase = "post"
		out = append(out, r)
	}
	return out
}

func writeCalls(in Input) {
	calls := in.Calls
	if calls == nil {
		calls = []Call{}
	}
	data, _ := json.MarshalIndent(calls, "", "  ")
	osfile.WriteFile(filepath.Join(in.RunDir, CallsFile), 0o644, true, osfile.Bytes(append(data, '\n')))
}

// One runs a single check.
func One(ctx context.Context, s Spec, in Input) bundle.CheckResult {
	switch s.Kind {
	case KindFileExists, KindFileAbsent, KindFileContains, KindFileMatches, KindFileEquals:
		return fileCheck(s, in)
	case KindOnlyPathsChanged:
		var outside []string
		for _, c := range in.Changed {
			if !anyGlob(s.Paths, c) {
				outside = append(outside, c)
			}
		}
		if len(outside) > 0 {
			return held(s, false, "changed outside %v: %s", s.Paths, strings.Join(outside, ", "))
		}
		return held(s, true, "%d changed path(s), all within %v", len(in.Changed), s.Paths)
	case KindFinalMessage:
		if strings.Contains(in.Final, s.Text) {
			return held(s, true, "the final message contains %q", s.Text)
		}
		return held(s, false, "the final message does not contain %q: %s", s.Text, clip.Head(in.Final, 200))
	case KindToolCalled, KindToolNotCalled:
		return toolCheck(s, in.Calls, in.Tools)
	case KindAsked:
		n := 0
		for _, q := range in.Questions {
			if strings.Contains(q, s.Text) {
				n++
			}
		}
		what := "a question"
		if s.Text != "" {
			what = fmt.Sprintf("a question containing %q", s.Text)
		}
		return held(s, n > 0, "%s asked %d time(s)", what, n)
	case KindBudgetNotExceeded:
		if in.Aborted != "" {
			return held(s, false, "budget exceeded: %s", in.Aborted)
		}
		return held(s, true, "no budget exceeded")
	case KindCommand:
		res := runProc(ctx, in, []string{"bash", "-c", s.Command}, s.Timeout)
		switch {
		case res.err != nil:
			return broken(s, "command %q: %v", s.Command, res.err)
		case res.timedOut:
			return broken(s, "command %q: no answer within %s", s.Command, res.limit)
		case res.code == 0:
			return held(s, true, "command %q: exit 0", s.Command)
		}
		return held(s, false, "command %q: exit %d%s", s.Command, res.code, outputTail(res.out))
	case KindExecutable:
		return runExecutable(ctx, s, in)
	}
	return broken(s, "unknown kind %q", s.Kind)
}

// toolCheck judges whether the agent called a tool (with matching
// arguments, with the outcome asked for).
func toolCheck(s Spec, calls []Call, tb intent.Table) bundle.CheckResult {
	want := s.Succeeded
	if want == "" {
		want = Any
		if s.Kind == KindToolCalled {
			want = Succeeded
		}
	}
	var counted, other []string
	for _, c := range calls {
		if !c.calls(tb, s.Tool, s.Args) {
			continue
		}
		if want == Any || c.Succeeded(tb) == (want == Succeeded) {
			counted = append(counted, c.outcome(tb))
		} else {
			other = append(other, c.outcome(tb))
		}
	}
	what := s.Tool
	if s.Args != nil {
		what += fmt.Sprintf(" with arguments matching /%s/", s.Args)
	}
	detail := fmt.Sprintf("%s called %d time(s)", what, len(counted)+len(other))
	switch want {
	case Succeeded:
		detail += fmt.Sprintf(", %d succeeded", len(counted))
	case Failed:
		detail += fmt.Sprintf(", %d did not succeed", len(counted))
	}
	if len(other) > 0 {
		detail += " (" + strings.Join(other, ", ") + ")"
	} else if want != Any && len(counted) > 0 {
		detail += " (" + strings.Join(counted, ", ") + ")"
	}
	return held(s, (len(counted) > 0) == (s.Kind == KindToolCalled), "%s", detail)
}

// outcome says how the call went, for a check's detail.
func (c Call) outcome(tb intent.Table) string {
	runs := c.runs(tb)
	switch {
	case runs && c.Exit != nil && *c.Exit == intent.Killed:
		return "killed"
	case runs && c.Exit != nil:
		return fmt.Sprintf("exit %d", *c.Exit)
	case runs && !c.OK:
		return "refused or failed, no exit status"
	case runs:
		return "exit status unknown"
	case c.OK:
		return "ok"
	}
	return "error"
}

// held is the result of check s that could judge: passed or not, and why.
func held(s Spec, ok bool, detail string, args ...any) bundle.CheckResult {
	return bundle.CheckResult{Name: s.Name, Passed: ok, Detail: fmt.Sprintf(detail, args...)}
}

// broken is the result of check s that could not judge.
func broken(s Spec, detail string, args ...any) bundle.CheckResult {
	return bundle.CheckResult{Name: s.Name, Broken: true, Detail: fmt.Sprintf(detail, args...)}
}

// fileCheck judges a file of the workspace, read through an os.Root of it
// (a symlink out is not followed).
func fileCheck(s Spec, in Input) bundle.CheckResult {
	root, err := os.OpenRoot(in.Workspace)
	if err != nil {
		return broken(s, "%s: %v", s.Path, err)
	}
	defer root.Close()
	path := filepath.FromSlash(s.Path)
	if s.Kind == KindFileExists || s.Kind == KindFileAbsent {
		_, err := root.Stat(path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return broken(s, "%s: %v", s.Path, err)
		}
		if s.Kind == KindFileExists {
			return held(s, exists, "%s %s", s.Path, map[bool]string{true: "exists", false: "does not exist"}[exists])
		}
		return held(s, !exists, "%s %s", s.Path, map[bool]string{true: "exists", false: "is absent"}[exists])
	}
	data, err := root.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return held(s, false, "%s does not exist", s.Path)
	}
	if err != nil {
		return broken(s, "%s: %v", s.Path, err)
	}
	if s.Kind == KindFileEquals {
		return fileEquals(s, data)
	}
	if s.Kind == KindFileContains {
		if i := bytes.Index(data, []byte(s.Text)); i >= 0 {
			return held(s, true, "%s contains %q at line %d", s.Path, s.Text, bytes.Count(data[:i], []byte("\n"))+1)
		}
		return held(s, false, "%s does not contain %q", s.Path, s.Text)
	}
	if loc := s.Pattern.FindIndex(data); loc != nil {
		return held(s, true, "%s matches /%s/ at line %d", s.Path, s.Pattern, bytes.Count(data[:loc[0]], []byte("\n"))+1)
	}
	return held(s, false, "%s does not match /%s/", s.Path, s.Pattern)
}

// fileEquals judges a file of the workspace against its expected content,
// read inside the scenario folder (a link out of it is not followed).
func fileEquals(s Spec, data []byte) bundle.CheckResult {
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return broken(s, "%s: %v", s.Expected, err)
	}
	defer root.Close()
	want, err := root.ReadFile(filepath.FromSlash(s.Expected))
	if err != nil {
		return broken(s, "%s: %v", s.Expected, err)
	}
	if bytes.Equal(data, want) {
		return held(s, true, "%s is %s byte for byte (%d bytes)", s.Path, s.Expected, len(data))
	}
	got, exp := strings.Split(string(data), "\n"), strings.Split(string(want), "\n")
	line := 0
	for line < len(got) && line < len(exp) && got[line] == exp[line] {
		line++
	}
	at := func(lines []string) string {
		if line < len(lines) {
			return fmt.Sprintf("%q", clip.Head(lines[line], 120))
		}
		return "the end of the file"
	}
	return held(s, false, "%s differs from %s at line %d: %s, want %s", s.Path, s.Expected, line+1, at(got), at(exp))
}

func runExecutable(ctx context.Context, s Spec, in Input) bundle.CheckResult {
	r := bundle.CheckResult{Name: s.Name}
	info, err := os.Stat(s.Exec)
	switch {
	case err != nil:
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: %v", s.Name, err)
		return r
	case info.Mode()&0o111 == 0:
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: not executable (no run bit); run chmod +x on it", s.Name)
		return r
	}
	res := runProc(ctx, in, []string{s.Exec}, s.Timeout)
	out := strings.TrimSpace(res.out)
	switch {
	case res.err != nil:
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: cannot run: %v", s.Name, res.err)
	case res.timedOut:
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: no answer within %s (a check must finish)", s.Name, res.limit)
	case res.signal != "":
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: killed by %s%s", s.Name, res.signal, outputTail(out))
	case res.code == 0:
		r.Passed, r.Detail = true, clip.Head(firstLine(out), 300)
		if r.Detail == "" {
			r.Detail = "held (exit 0)"
		}
	case res.code == 1:
		r.Detail = clip.Head(out, 2000)
		if r.Detail == "" {
			r.Detail = fmt.Sprintf("checks/%s failed (exit 1) without saying why", s.Name)
		}
	default:
		r.Broken, r.Detail = true, fmt.Sprintf("checks/%s: exit %d; a check exits 0 (held) or 1 (failed)%s", s.Name, res.code, outputTail(out))
	}
	return r
}

type procResult struct {
	out      string
	code     int
	signal   string
	timedOut bool
	limit    time.Duration
	err      error
}

// runProc runs argv in the workspace with the check environment (a
// sandbox.Command: its process group is killed at the time limit).
func runProc(ctx context.Context, in Input, argv []string, limit time.Duration) procResult {
	if limit <= 0 {
		limit = 60 * time.Second
	}
	env := append(append([]string{}, in.Env...),
		"PROCTOR_RUN_DIR="+in.RunDir, "PROCTOR_WORKSPACE="+in.Workspace, "PROCTOR_CALLS="+filepath.Join(in.RunDir, CallsFile))
	r, err := sandbox.Command{Argv: argv, Dir: in.Workspace, Env: env, Confine: in.Confine, Timeout: limit}.Run(ctx)
	res := procResult{out: string(r.Output), code: r.Code, timedOut: r.TimedOut, limit: limit, err: err}
	if r.Signal != 0 {
		res.signal = r.Signal.String()
	}
	return res
}

// Glob reports whether path matches pattern, where * and ? stay within a
// folder and ** crosses folders.
func Glob(pattern, path string) bool {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				i++
				if i+1 < len(pattern) && pattern[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	ok, _ := regexp.MatchString(b.String(), path)
	return ok
}

func anyGlob(patterns []string, path string) bool {
	for _, p := range patterns {
		if Glob(p, path) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func outputTail(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	return "\n" + clip.Tail(out, 1000)
}
