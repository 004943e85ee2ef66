package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// Limits bound what the tools may do and say.
type Limits struct {
	MaxToolOutputChars int
	MaxFiles           int
	MaxWorkspaceBytes  int64
	MaxFileBytes       int64
	CommandTimeout     time.Duration // default and ceiling for run_command
	// Scratch is the run's private folder (a confined command's TMPDIR
	// and HOME, and what it wrote into its toolchain caches), whose bytes
	// count against MaxWorkspaceBytes; "" when there is none.
	Scratch string
}

// Toolbox runs tools on one workspace.
type Toolbox struct {
	root   string   // the workspace folder, where run_command runs
	fs     *os.Root // every file operation goes through it
	limits Limits
	env    []string // the environment of run_command
	// Confine, when set, makes run_command's command run confined (a
	// sandbox).
	Confine *sandbox.Confinement

	mu    sync.Mutex
	files int
	bytes int64
}

// ErrBound is wrapped by the error of a tool call that breached a workspace
// bound: the run must stop.
var ErrBound = errors.New("workspace bound exceeded")

// New returns a toolbox for the workspace folder root. env is the
// environment run_command gets (already scrubbed of secrets).
func New(root string, lim Limits, env []string) (*Toolbox, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	fsys, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", abs, err)
	}
	tb := &Toolbox{root: abs, fs: fsys, limits: lim, env: env}
	if tb.files, tb.bytes, err = tb.usage(); err != nil {
		fsys.Close()
		return nil, fmt.Errorf("measure workspace %s: %w", abs, err)
	}
	if err := tb.checkBounds(); err != nil {
		fsys.Close()
		return nil, err
	}
	return tb, nil
}

// Close releases the workspace.
func (tb *Toolbox) Close() error { return tb.fs.Close() }

// Gated reports whether a tool must be approved before it runs.
func Gated(name string) bool { return name == "run_command" }

// Result is what a tool call returns to the model.
type Result struct {
	Output  string
	IsError bool
	Cut     int   // characters cut from the output
	Bound   error // a workspace bound the call breached, which ends the run
	// Harness is the sandbox that could not start the call's command (a
	// *sandbox.StartError): the harness's failure, never the agent's; it
	// ends the run, and the model never sees it.
	Harness error
}

// Run executes the named tool with the model's JSON arguments. Problems
// with the call (unknown tool, bad arguments, a path outside) come back as an
// error result for the model, not as a Go error. live, when not nil, gets a
// command's output as it is written (the result has all of it).
func (tb *Toolbox) Run(ctx context.Context, name, args string, live io.Writer) Result {
	var out string
	var err error
	switch name {
	case "list_files":
		out, err = tb.listFiles(args)
	case "read_file":
		out, err = tb.readFile(args)
	case "write_file":
		out, err = tb.writeFile(args)
	case "edit_file":
		out, err = tb.editFile(args)
	case "delete_file":
		out, err = tb.deleteFile(args)
	case "search":
		out, err = tb.search(ctx, args)
	case "run_command":
		out, err = tb.runCommand(ctx, args, live)
	default:
		err = fmt.Errorf("unknown tool %q; the tools are: %s", name, strings.Join(Names(), ", "))
	}
	r := Result{Output: out}
	if err != nil {
		r.IsError = true
		r.Output = "error: " + err.Error()
		if out != "" {
			r.Output += "\n" + out
		}
		if errors.Is(err, ErrBound) {
			r.Bound = err
		}
		var se *sandbox.StartError
		if errors.As(err, &se) {
			r.Harness = err
			r.Output = "not run: the sandbox could not start the command (a harness error, not the agent's); the run ends"
		}
	}
	r.Output, r.Cut = Cut(r.Output, tb.limits.MaxToolOutputChars)
	return r
}

// Cut shortens s to at most max characters, ending it with a marker that
// says how much was cut.
func Cut(s string, max int) (string, int) {
	if max <= 0 {
		return s, 0
	}
	kept, cut, total := clip.Cut(s, max)
	if cut == 0 {
		return s, 0
	}
	return kept + fmt.Sprintf("\n[… output cut: %d of %d characters not shown …]", cut, total), cut
}

func decode(args string, v any) error {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid for this tool: %v (got %s)", err, clip.Head(args, 200))
	}
	return nil
}

// requirePath checks a path argument that must be given.
func requirePath(p string) (string, error) {
	if p == "" {
		return "", errors.New("path: missing")
	}
	return clean(p)
}

func (tb *Toolbox) listFiles(args string) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	dir, err := clean(a.Path)
	if err != nil {
		return "", err
	}
	var lines []string
	err = fs.WalkDir(tb.fs.FS(), filepath.ToSlash(dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == filepath.ToSlash(dir) {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if d.IsDir() {
			lines = append(lines, path+"/")
		} else {
			lines = append(lines, path)
		}
		if len(lines) > 5000 {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("list %s: %w", a.Path, tb.explain(dir, err))
	}
	if len(lines) == 0 {
		return "(empty)", nil
	}
	return strings.Join(lines, "\n"), nil
}

func (tb *Toolbox) readFile(args string) (string, error) {
	var a struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	p, err := requirePath(a.Path)
	if err != nil {
		return "", err
	}
	info, err := tb.fs.Stat(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", a.Path, tb.explain(p, err))
	}
	if info.IsDir() {
		return "", fmt.Errorf("read %s: it is a folder; use list_files", a.Path)
	}
	if tb.limits.MaxFileBytes > 0 && info.Size() > tb.limits.MaxFileBytes {
		return "", fmt.Errorf("read %s: %d bytes is over max_file_bytes (%d); read a line range with start_line and end_line", a.Path, info.Size(), tb.limits.MaxFileBytes)
	}
	data, err := tb.fs.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", a.Path, tb.explain(p, err))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return fmt.Sprintf("(binary file, %d bytes; not shown)", len(data)), nil
	}
	if a.StartLine == 0 && a.EndLine == 0 {
		return string(data), nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	start, end := max(a.StartLine, 1), a.EndLine
	if end == 0 || end > len(lines) {
		end = len(lines)
	}
	if start > end {
		return "", fmt.Errorf("read %s: start_line %d is past end_line %d (the file has %d lines)", a.Path, a.StartLine, end, len(lines))
	}
	return fmt.Sprintf("[lines %d-%d of %d]\n%s", start, end, len(lines), strings.Join(lines[start-1:end], "")), nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// write puts content at p, keeping the workspace within its bounds.
func (tb *Toolbox) write(rel, p string, content []byte) error {
	if tb.limits.MaxFileBytes > 0 && int64(len(content)) > tb.limits.MaxFileBytes {
		return fmt.Errorf("write %s: %d bytes is over max_file_bytes (%d)", rel, len(content), tb.limits.MaxFileBytes)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var oldSize int64
	isNew := true
	if info, err := tb.fs.Lstat(p); err == nil {
		if info.IsDir() {
			return fmt.Errorf("write %s: it is a folder", rel)
		}
		oldSize, isNew = info.Size(), false
	}
	files, total := tb.files, tb.bytes-oldSize+int64(len(content))
	if isNew {
		files++
	}
	if tb.limits.MaxFiles > 0 && files > tb.limits.MaxFiles {
		return fmt.Errorf("%w: write %s would make %d files, over max_files (%d)", ErrBound, rel, files, tb.limits.MaxFiles)
	}
	if tb.limits.MaxWorkspaceBytes > 0 && total > tb.limits.MaxWorkspaceBytes {
		return fmt.Errorf("%w: write %s would make the workspace %d bytes, over max_workspace_bytes (%d)", ErrBound, rel, total, tb.limits.MaxWorkspaceBytes)
	}
	if err := tb.fs.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", rel, tb.explain(p, err))
	}
	mode := os.FileMode(0o644)
	if info, err := tb.fs.Stat(p); err == nil {
		mode = info.Mode().Perm()
	}
	// Written beside its place, then renamed over it: a reader sees the old
	// file or the new one (not synced: the workspace is a run's scratch).
	err := osfile.WriteAtomic(tb.fs, p, mode, false, osfile.Bytes(content))
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, tb.explain(p, err))
	}
	tb.files, tb.bytes = files, total
	return nil
}

func (tb *Toolbox) writeFile(args string) (string, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	p, err := requirePath(a.Path)
	if err != nil {
		return "", err
	}
	if err := tb.write(a.Path, p, []byte(a.Content)); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s (%d bytes)", a.Path, len(a.Content)), nil
}

func (tb *Toolbox) editFile(args string) (string, error) {
	var a struct {
		Path    string `json:"path"`
		Search  string `json:"search"`
		Replace string `json:"replace"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if a.Path == "" || a.Search == "" {
		return "", errors.New("path and search are required; search is the exact text to replace")
	}
	p, err := clean(a.Path)
	if err != nil {
		return "", err
	}
	data, err := tb.fs.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("edit %s: %w", a.Path, tb.explain(p, err))
	}
	switch n := strings.Count(string(data), a.Search); n {
	case 1:
	case 0:
		return "", fmt.Errorf("edit %s: the search text was not found (0 matches); read the file and copy the text exactly, whitespace included", a.Path)
	default:
		return "", fmt.Errorf("edit %s: the search text was found %d times; include more surrounding lines so that it matches once", a.Path, n)
	}
	out := strings.Replace(string(data), a.Search, a.Replace, 1)
	if err := tb.write(a.Path, p, []byte(out)); err != nil {
		return "", err
	}
	return fmt.Sprintf("edited %s: 1 replacement", a.Path), nil
}

func (tb *Toolbox) deleteFile(args string) (string, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	p, err := requirePath(a.Path)
	if err != nil {
		return "", err
	}
	info, err := tb.fs.Lstat(p)
	if err != nil {
		return "", fmt.Errorf("delete %s: %w", a.Path, tb.explain(p, err))
	}
	if info.IsDir() {
		return "", fmt.Errorf("delete %s: it is a folder; delete_file deletes files", a.Path)
	}
	if err := tb.fs.Remove(p); err != nil {
		return "", fmt.Errorf("delete %s: %w", a.Path, tb.explain(p, err))
	}
	tb.mu.Lock()
	if info.Mode().IsRegular() {
		tb.files--
		tb.bytes -= info.Size()
	}
	tb.mu.Unlock()
	return "deleted " + a.Path, nil
}

const maxMatches = 200

func (tb *Toolbox) search(ctx context.Context, args string) (string, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Glob    string `json:"glob"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil || a.Pattern == "" {
		return "", fmt.Errorf("pattern %q is not a valid regular expression (RE2 syntax): %v", a.Pattern, err)
	}
	if a.Glob != "" {
		if _, err := filepath.Match(a.Glob, "x"); err != nil {
			return "", fmt.Errorf("glob %q: %v", a.Glob, err)
		}
	}
	dir, err := clean(a.Path)
	if err != nil {
		return "", err
	}
	if _, err := tb.fs.Stat(dir); err != nil {
		return "", fmt.Errorf("search %s: %w", a.Path, tb.explain(dir, err))
	}
	var out []string
	more := false
	buf := make([]byte, 0, 64<<10) // one line buffer for every file of the search
	err = fs.WalkDir(tb.fs.FS(), filepath.ToSlash(dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (a.Glob != "" && !globMatch(a.Glob, path)) {
			return nil
		}
		f, err := tb.fs.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(buf, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if n == 1 && bytes.IndexByte(line, 0) >= 0 {
				return nil // binary
			}
			if re.Match(line) {
				if len(out) == maxMatches {
					more = true
					return fs.SkipAll
				}
				out = append(out, fmt.Sprintf("%s:%d:%s", path, n, clip.Head(string(line), 300)))
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "no matches", nil
	}
	if more {
		out = append(out, fmt.Sprintf("[… more than %d matches; narrow the pattern or the path …]", maxMatches))
	}
	return strings.Join(out, "\n"), nil
}

func globMatch(glob, rel string) bool {
	if ok, _ := filepath.Match(glob, rel); ok {
		return true
	}
	ok, _ := filepath.Match(glob, filepath.Base(rel))
	return ok
}

func (tb *Toolbox) runCommand(ctx context.Context, args string, live io.Writer) (string, error) {
	var a struct {
		Command  string `json:"command"`
		TimeoutS int    `json:"timeout_s"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Command) == "" {
		return "", errors.New("command: missing")
	}
	limit := tb.limits.CommandTimeout
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	if a.TimeoutS > 0 && time.Duration(a.TimeoutS)*time.Second < limit {
		limit = time.Duration(a.TimeoutS) * time.Second
	}
	// The workspace is measured while the command runs, and the command
	// stopped once it is over a bound (each file alone is held to
	// max_workspace_bytes by the sandbox's RLIMIT_FSIZE).
	wctx, stop := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tb.watchBounds(wctx, stop)
	}()
	out, code, elapsed, err := RunShell(wctx, tb.root, a.Command, tb.env, limit, tb.Confine, live)
	stop(nil)
	<-watched
	if cause := context.Cause(wctx); errors.Is(cause, ErrBound) && ctx.Err() == nil {
		return out, fmt.Errorf("%w (the command was stopped)", cause)
	}
	if err != nil {
		return out, err
	}
	// A command may write anything: measure the workspace again.
	files, total, werr := tb.usage()
	if werr == nil {
		tb.mu.Lock()
		tb.files, tb.bytes = files, total
		tb.mu.Unlock()
		if berr := tb.checkBounds(); berr != nil {
			return out, berr
		}
	}
	// No duration here: the text goes to the model and the transcript, which
	// a replay must reproduce byte for byte.
	_ = elapsed
	head := fmt.Sprintf("exit %d", code)
	if code == -1 {
		head = fmt.Sprintf("killed after the %s time limit", limit)
	}
	if out == "" {
		return head, nil
	}
	return head + "\n" + out, nil
}

// watchBounds measures the workspace every half second until ctx ends,
// and stops it (with the bound's error as the cause) once the workspace is
// over max_files or max_workspace_bytes.
func (tb *Toolbox) watchBounds(ctx context.Context, stop context.CancelCauseFunc) {
	if tb.limits.MaxFiles <= 0 && tb.limits.MaxWorkspaceBytes <= 0 {
		return
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if files, total, err := tb.usage(); err == nil {
			if berr := tb.limits.over(files, total); berr != nil {
				stop(berr)
				return
			}
		}
	}
}

// over is the bound a workspace of files and bytes is over, nil for none.
func (lim Limits) over(files int, bytes int64) error {
	if lim.MaxFiles > 0 && files > lim.MaxFiles {
		return fmt.Errorf("%w: the workspace holds %d files, over max_files (%d)", ErrBound, files, lim.MaxFiles)
	}
	if lim.MaxWorkspaceBytes > 0 && bytes > lim.MaxWorkspaceBytes {
		what := "the workspace holds"
		if lim.Scratch != "" {
			what = "the workspace and the run's temp folder hold"
		}
		return fmt.Errorf("%w: %s %d bytes, over max_workspace_bytes (%d)", ErrBound, what, bytes, lim.MaxWorkspaceBytes)
	}
	return nil
}

func (tb *Toolbox) checkBounds() error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.limits.over(tb.files, tb.bytes)
}

// RunShell runs command with bash in dir under a time limit (a
// sandbox.Command: its process group is killed at the limit or when ctx
// ends); confine, when not nil, confines it; live, when not nil, gets the
// output as it is written. It returns the combined output (its first
// 16 MiB), the exit code (-1 when killed) and how long it ran.
func RunShell(ctx context.Context, dir, command string, env []string, limit time.Duration, confine *sandbox.Confinement, live io.Writer) (string, int, time.Duration, error) {
	res, err := sandbox.Command{Argv: []string{"bash", "-c", command}, Dir: dir, Env: env, Live: live, MaxOutput: 16 << 20,
		Confine: confine, Timeout: limit}.Run(ctx)
	out := string(res.Output)
	switch {
	case err != nil && ctx.Err() != nil:
		return out, -1, res.Elapsed, ctx.Err()
	case err != nil:
		return out, -1, res.Elapsed, fmt.Errorf("run %q: %w", command, err)
	}
	return out, res.Code, res.Elapsed, nil
}

// Names lists the tools in the order they are offered.
func Names() []string {
	return []string{"list_files", "read_file", "write_file", "edit_file", "delete_file", "search", "run_command"}
}

// Specs are the tools as offered to the model.
func Specs() []model.ToolSpec {
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
	}
	return []model.ToolSpec{
		{Name: "list_files", Description: "List the files and folders under a folder of the workspace (recursive; .git is left out).", Parameters: obj(`"path":{"type":"string","description":"folder relative to the workspace root; default the root"}`)},
		{Name: "read_file", Description: "Read a text file of the workspace, whole or a range of lines.", Parameters: obj(`"path":{"type":"string"},"start_line":{"type":"integer","minimum":1},"end_line":{"type":"integer","minimum":1}`, "path")},
		{Name: "write_file", Description: "Create or overwrite a file with the given content. Folders are created as needed.", Parameters: obj(`"path":{"type":"string"},"content":{"type":"string"}`, "path", "content")},
		{Name: "edit_file", Description: "Replace one exact occurrence of search with replace in a file. The search text must occur exactly once.", Parameters: obj(`"path":{"type":"string"},"search":{"type":"string"},"replace":{"type":"string"}`, "path", "search", "replace")},
		{Name: "delete_file", Description: "Delete a file.", Parameters: obj(`"path":{"type":"string"}`, "path")},
		{Name: "search", Description: "Search the workspace's files for a regular expression (RE2); prints path:line:text.", Parameters: obj(`"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string","description":"only files whose path or name matches, e.g. *.go"}`, "pattern")},
		{Name: "run_command", Description: "Run a shell command (bash) in the workspace root with a time limit; prints the exit code and the output. Needs approval.", Parameters: obj(`"command":{"type":"string"},"timeout_s":{"type":"integer","minimum":1}`, "command")},
	}
}

// ShellQuote is s as one word of a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
