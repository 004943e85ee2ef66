package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// File names in a scenario folder.
const (
	File      = "scenario.yaml"
	Fixture   = "fixture"
	ModelFile = "model.yaml"
	SetupFile = "setup"
	ReadyFile = "ready"
	ChecksDir = "checks"
)

// Scenario is one parsed scenario folder.
type Scenario struct {
	Dir         string
	ID          string
	Description string
	Tags        []string
	Turns       []string // user messages, in order; the first is the task
	Criteria    []string
	OutOfScope  []string
	Budgets     Budgets
	Approvals   Approvals
	YieldReply  string
	Continue    string
	Model       Model
	Agent       external.Agent    // the zero value is proctor's own agent
	Sandbox     sandbox.Mode      // workspace, strict or off; "" the runner's
	Env         map[string]string // applied over a scrubbed environment
	PassEnv     []string          // process variables passed by name (secrets included)
	Context     string            // session context template: $RUN_DIR, $WORKSPACE
	Git         bool              // seed the fixture as a git repository (default true)
	Source      *source.Git       // a git repository at a ref or commit instead of fixture/
	Checks      []check.Spec      // declarative checks, then checks/<name> executables
	Repeat      int
	MadeFrom    string // the run it was made from (proctor scenario from), "" for one written by hand
}

// Budgets limit a scenario run as a whole; Bounds limit each agent turn.
type Budgets struct {
	MaxMessages     int // model replies in the whole conversation
	WallClock       time.Duration
	MaxYieldReplies int
	MaxContinues    int
	Bounds          bundle.Bounds
}

// Ruling is what a scenario's approvals say to a gated call.
type Ruling string

// The decisions.
const (
	Approve Ruling = "approve"
	Deny    Ruling = "deny"
)

// decision reads a decision from a scenario's field.
func decision(d *decoder, v *yaml.Node, field string) Ruling {
	s := Ruling(d.Str(v, field))
	if s != Approve && s != Deny {
		d.Add(v, field, "want approve or deny, got %q", s)
	}
	return s
}

// Approvals is a scenario's policy for gated tools.
type Approvals struct {
	Default      Ruling // Deny (default) or Approve
	Rules        []Rule
	MaxDecisions int // 0: no limit
}

// Rule decides calls of a tool whose arguments match.
type Rule struct {
	Tool     string
	Args     *regexp.Regexp // nil matches any arguments
	Decision Ruling         // Approve or Deny
}

// Model is how a scenario's agent is answered.
type Model struct {
	Script  string // a model script, relative to the scenario folder
	Profile string // a live profile from models.yaml
}

var (
	topFields      = []string{"id", "description", "tags", "task", "turns", "criteria", "out_of_scope", "budgets", "approvals", "yield_reply", "continue_message", "model", "agent", "sandbox", "env", "pass_env", "context", "git", "source", "checks", "repeat", "made_from"}
	budgetFields   = append([]string{"max_messages", "max_yield_replies", "max_continues"}, bounds.Keys()...) // wall_clock_s is a bound
	approvalFields = []string{"default", "rules", "max_decisions"}
	ruleFields     = []string{"tool", "args", "decision"}
	modelFields    = []string{"script", "profile"}
	checkFields    = []string{"name", "kind", "path", "text", "pattern", "paths", "tool", "args", "succeeded", "command", "timeout_s", "expected"}
	secretName     = regexp.MustCompile(`(?i)(token|password|passwd|api_?key|secret)`)
)

// decoder is the YAML decoder with scenario.yaml's own parts.
type decoder struct{ yamldoc.Decoder }

// source reads source: {repo, ref, commit}, a git repository to start from
// instead of fixture/; a local path is relative to the scenario folder.
func (d *decoder) source(v *yaml.Node, dir string) *source.Git {
	var g source.Git
	d.Fields(v, "source", []string{"repo", "ref", "commit"}, func(key string, _, n *yaml.Node) {
		switch key {
		case "repo":
			g.Repo = d.Str(n, "source.repo")
		case "ref":
			g.Ref = d.Str(n, "source.ref")
		case "commit":
			g.Commit = d.Str(n, "source.commit")
		}
	})
	switch {
	case v.Kind != yaml.MappingNode:
		return nil
	case g.Repo == "":
		d.Add(v, "source.repo", "missing: an https URL, owner/name (on github.com), a path beside scenario.yaml or a file:// URL")
		return nil
	case strings.HasPrefix(g.Repo, "./") || strings.HasPrefix(g.Repo, "../"):
		if g.Repo = filepath.Join(dir, g.Repo); !filepath.IsAbs(g.Repo) {
			g.Repo = "./" + g.Repo
		}
	}
	if _, err := g.URL("github.com"); err != nil {
		d.Add(v, "source", "%s (%s)", err.Message, err.Code)
	}
	return &g
}

// Parse parses scenario.yaml. dir is the scenario folder, for the rules that
// look at files beside it (the model script). Every problem is reported at
// once, as "file:line:col: field: problem".
func Parse(file string, data []byte, dir string) (*Scenario, error) {
	d := &decoder{yamldoc.Decoder{File: file}}
	doc, err := yamldoc.Parse(file, data)
	if err != nil {
		return nil, err
	}
	s := &Scenario{Dir: dir, Budgets: Budgets{Bounds: bounds.Defaults()}, Approvals: Approvals{Default: Deny}, Git: true, Repeat: 1,
		Env: map[string]string{}, Continue: "Please continue."}
	if doc == nil {
		return nil, fmt.Errorf("%s: empty; a scenario needs at least id, a task and a check", file)
	}
	var task taskField
	d.Fields(doc, "", topFields, func(key string, _, v *yaml.Node) { d.topField(s, dir, key, v, &task) })
	d.whole(doc, s, dir, task)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// taskField is the task field as given (a one-turn shorthand of turns).
type taskField struct {
	text string
	node *yaml.Node
}

// topField reads one top-level field of scenario.yaml into s.
func (d *decoder) topField(s *Scenario, dir, key string, v *yaml.Node, task *taskField) {
	switch key {
	case "id":
		s.ID = d.Str(v, key)
		if s.ID != "" && !bundle.ValidID(s.ID) {
			d.Add(v, key, "%q is not a safe name (letters, digits, '.', '_', '-')", s.ID)
		}
	case "description":
		s.Description = d.Str(v, key)
	case "tags":
		s.Tags = d.Strs(v, key)
	case "task":
		task.text, task.node = d.Str(v, key), v
	case "turns":
		s.Turns = d.Strs(v, key)
		if len(s.Turns) == 0 {
			d.Add(v, key, "want at least one user message")
		}
	case "criteria":
		s.Criteria = d.Strs(v, key)
	case "out_of_scope":
		s.OutOfScope = d.Strs(v, key)
	case "budgets":
		d.budgets(v, s)
	case "approvals":
		d.approvals(v, s)
	case "yield_reply":
		s.YieldReply = d.Str(v, key)
	case "continue_message":
		s.Continue = d.Str(v, key)
	case "model":
		d.model(v, s)
	case "sandbox":
		m, err := sandbox.ParseMode(d.Str(v, key))
		if err != nil || d.Str(v, key) == "" {
			d.Add(v, key, "%q: want workspace, strict or off", d.Str(v, key))
		}
		s.Sandbox = m
	case "agent":
		s.Agent = external.Decode(&d.Decoder, v, "agent")
		if s.Agent.Kind == external.KindCommand && s.Agent.Name == "" && len(s.Agent.Command) > 0 {
			s.Agent.Name = "command"
		}
	case "env":
		d.env(v, s)
	case "pass_env":
		d.passEnv(v, s)
	case "context":
		s.Context = d.Str(v, key)
		if bad := unknownVars(s.Context); len(bad) > 0 {
			d.Add(v, key, "unknown variable %s; the template may use $RUN_DIR and $WORKSPACE", strings.Join(bad, ", "))
		}
	case "git":
		s.Git = d.Bool(v, key)
	case "source":
		s.Source = d.source(v, dir)
	case "checks":
		d.checks(v, s, dir)
	case "repeat":
		s.Repeat = d.PosInt(v, key)
	case "made_from":
		if s.MadeFrom = d.Str(v, key); !bundle.ValidID(s.MadeFrom) {
			d.Add(v, key, "%q is not a run id", s.MadeFrom)
		}
	}
}

// whole checks what no one field says: a task or turns, an agent that can
// take turns, an id that names the folder; and finds the scenario's own
// model script.
func (d *decoder) whole(doc *yaml.Node, s *Scenario, dir string, task taskField) {
	switch {
	case task.text != "" && len(s.Turns) > 0:
		d.Add(task.node, "task", "give task or turns, not both (task is a one-turn shorthand)")
	case task.text != "":
		s.Turns = []string{task.text}
	case len(s.Turns) == 0:
		d.Add(doc, "task", "missing; give task (one message) or turns (a list)")
	}
	if !s.Agent.IsNative() && !s.Agent.CanResume() && len(s.Turns) > 1 {
		d.Add(doc, "agent", "turns need an agent that can continue a conversation: give it a resume: command")
	}
	if s.ID == "" {
		d.Add(doc, "id", "missing")
	} else if dir != "" && filepath.Base(dir) != s.ID {
		d.Add(doc, "id", "%q does not match its folder name %q", s.ID, filepath.Base(dir))
	}
	if s.Model.Script == "" && s.Model.Profile == "" {
		if dir != "" {
			if _, err := os.Stat(filepath.Join(dir, ModelFile)); err == nil {
				s.Model.Script = ModelFile
			}
		}
	}
}

func (d *decoder) model(n *yaml.Node, s *Scenario) {
	d.Fields(n, "model", modelFields, func(key string, _, v *yaml.Node) {
		if key == "script" {
			s.Model.Script = d.Str(v, "model.script")
		} else {
			s.Model.Profile = d.Str(v, "model.profile")
		}
	})
	if s.Model.Script != "" && s.Model.Profile != "" {
		d.Add(n, "model", "give script or profile, not both")
	}
}

func (d *decoder) passEnv(n *yaml.Node, s *Scenario) {
	s.PassEnv = d.Strs(n, "pass_env")
	for i, name := range s.PassEnv {
		if !yamldoc.EnvName(name) {
			d.Add(n, fmt.Sprintf("pass_env[%d]", i), "%q is not an environment variable name", name)
		}
	}
}

func (d *decoder) budgets(n *yaml.Node, s *Scenario) {
	d.Fields(n, "budgets", budgetFields, func(key string, _, v *yaml.Node) {
		field := "budgets." + key
		switch key {
		case "max_messages":
			s.Budgets.MaxMessages = d.PosInt(v, field)
		case "wall_clock_s":
			s.Budgets.Bounds.WallClockS = d.PosInt(v, field)
			s.Budgets.WallClock = time.Duration(s.Budgets.Bounds.WallClockS) * time.Second
		case "max_yield_replies":
			s.Budgets.MaxYieldReplies = d.Count(v, field)
		case "max_continues":
			s.Budgets.MaxContinues = d.Count(v, field)
		default:
			switch err := bounds.Set(&s.Budgets.Bounds, key, v.Value, ""); {
			case v.Kind != yaml.ScalarNode:
				d.Add(v, field, "want a positive number, got %s", yamldoc.KindName(v))
			case err != nil:
				d.Add(v, field, "%s", strings.TrimPrefix(err.Error(), ": "+key+": "))
			}
		}
	})
}

func (d *decoder) approvals(n *yaml.Node, s *Scenario) {
	d.Fields(n, "approvals", approvalFields, func(key string, _, v *yaml.Node) {
		switch key {
		case "default":
			s.Approvals.Default = decision(d, v, "approvals.default")
		case "max_decisions":
			s.Approvals.MaxDecisions = d.PosInt(v, "approvals.max_decisions")
		case "rules":
			if v.Kind != yaml.SequenceNode {
				d.Add(v, "approvals.rules", "want a list of rules")
				return
			}
			for i, rn := range v.Content {
				field := fmt.Sprintf("approvals.rules[%d]", i)
				r := Rule{Decision: Approve}
				d.Fields(rn, field, ruleFields, func(rk string, _, rv *yaml.Node) {
					switch rk {
					case "tool":
						r.Tool = d.Str(rv, field+".tool")
					case "args":
						r.Args = d.Regex(rv, field+".args")
					case "decision":
						r.Decision = decision(d, rv, field+".decision")
					}
				})
				if r.Tool == "" {
					d.Add(rn, field+".tool", "missing")
				}
				s.Approvals.Rules = append(s.Approvals.Rules, r)
			}
		}
	})
}

func (d *decoder) env(n *yaml.Node, s *Scenario) {
	if n.Kind != yaml.MappingNode {
		d.Add(n, "env", "want a mapping of variable names to values")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "env." + k.Value
		switch {
		case !yamldoc.EnvName(k.Value):
			d.Add(k, field, "not an environment variable name")
		case secretName.MatchString(k.Value) && v.Value != "":
			d.Add(v, field, "a literal secret is not allowed in a scenario; list the variable in pass_env and set it in the environment")
		default:
			s.Env[k.Value] = d.Str(v, field)
		}
	}
}

func (d *decoder) checks(n *yaml.Node, s *Scenario, dir string) {
	if n.Kind != yaml.SequenceNode {
		d.Add(n, "checks", "want a list of checks")
		return
	}
	names := map[string]bool{}
	for i, cn := range n.Content {
		field := fmt.Sprintf("checks[%d]", i)
		c := check.Spec{Line: cn.Line}
		var timeout int
		d.Fields(cn, field, checkFields, func(key string, _, v *yaml.Node) {
			f := field + "." + key
			switch key {
			case "name":
				c.Name = d.Str(v, f)
			case "kind":
				c.Kind = d.Str(v, f)
				if !slices.Contains(check.Kinds(), c.Kind) {
					if near := yamldoc.Nearest(c.Kind, check.Kinds()); near != "" {
						d.Add(v, f, "unknown kind %q; did you mean %s?", c.Kind, near)
					} else {
						d.Add(v, f, "unknown kind %q (known: %s)", c.Kind, strings.Join(check.Kinds(), ", "))
					}
				}
			case "path":
				c.Path = d.Str(v, f)
				if strings.HasPrefix(c.Path, "/") || strings.Contains("/"+c.Path+"/", "/../") {
					d.Add(v, f, "%q must be a path inside the workspace", c.Path)
				}
			case "text":
				c.Text = d.Str(v, f)
			case "pattern":
				c.Pattern = d.Regex(v, f)
			case "paths":
				c.Paths = d.Strs(v, f)
			case "tool":
				c.Tool = d.Str(v, f)
			case "args":
				c.Args = d.Regex(v, f)
			case "succeeded":
				c.Succeeded = check.Outcome(d.Str(v, f))
				if !slices.Contains(check.Outcomes(), string(c.Succeeded)) {
					d.Add(v, f, "%q is not one of true (the calls that succeeded: a command exited 0), false (those that did not) or any", v.Value)
				}
			case "command":
				c.Command = d.Str(v, f)
			case "expected":
				c.Expected, c.Dir = d.Str(v, f), dir
				if !filepath.IsLocal(c.Expected) {
					d.Add(v, f, "%q must be a file inside the scenario folder", c.Expected)
				}
			case "timeout_s":
				timeout = d.PosInt(v, f)
			}
		})
		if timeout > 0 {
			c.Timeout = time.Duration(timeout) * time.Second
		}
		if c.Succeeded != "" && c.Kind != check.KindToolCalled && c.Kind != check.KindToolNotCalled {
			d.Add(cn, field+".succeeded", "only a tool_called or tool_not_called check says which calls it counts")
		}
		for _, req := range requiredFields(c.Kind) {
			if !hasField(c, req) {
				d.Add(cn, field+"."+req, "missing; a %s check needs it", c.Kind)
			}
		}
		if c.Name == "" {
			c.Name = defaultName(c, i)
		}
		if names[c.Name] {
			d.Add(cn, field+".name", "%q is used twice; give each check its own name", c.Name)
		}
		names[c.Name] = true
		s.Checks = append(s.Checks, c)
	}
}

// requiredFields are the fields a check of kind needs.
func requiredFields(kind string) []string {
	switch kind {
	case check.KindFileExists, check.KindFileAbsent:
		return []string{"path"}
	case check.KindFileContains:
		return []string{"path", "text"}
	case check.KindFileMatches:
		return []string{"path", "pattern"}
	case check.KindFileEquals:
		return []string{"path", "expected"}
	case check.KindOnlyPathsChanged:
		return []string{"paths"}
	case check.KindFinalMessage:
		return []string{"text"}
	case check.KindToolCalled, check.KindToolNotCalled:
		return []string{"tool"}
	case check.KindCommand:
		return []string{"command"}
	}
	return nil
}

// hasField reports whether the check has a value for field.
func hasField(c check.Spec, field string) bool {
	switch field {
	case "path":
		return c.Path != ""
	case "text":
		return c.Text != ""
	case "pattern":
		return c.Pattern != nil
	case "paths":
		return len(c.Paths) > 0
	case "tool":
		return c.Tool != ""
	case "command":
		return c.Command != ""
	case "expected":
		return c.Expected != ""
	}
	return false
}

func defaultName(c check.Spec, i int) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(c.Kind, "_", "-"), i+1)
}

var templateVar = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

func unknownVars(tmpl string) []string {
	var bad []string
	for _, m := range templateVar.FindAllStringSubmatch(tmpl, -1) {
		if m[1] != "RUN_DIR" && m[1] != "WORKSPACE" {
			bad = append(bad, "$"+m[1])
		}
	}
	return bad
}

// ExpandContext fills the session-context template.
func (s *Scenario) ExpandContext(runDir, workspace string) string {
	return templateVar.ReplaceAllStringFunc(s.Context, func(m string) string {
		name := strings.Trim(m, "${}")
		if name == "RUN_DIR" {
			return runDir
		}
		return workspace
	})
}

// Load reads the scenario folder dir: scenario.yaml, and the checks/
// executables, each added as a check. It checks that the fixture and the
// model script exist.
func Load(dir string) (*Scenario, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs // checks run from the workspace, so their paths must not be relative
	}
	file := filepath.Join(dir, File)
	data, err := readInside(dir, File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s, err := Parse(file, data, dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	info, err := os.Stat(filepath.Join(dir, Fixture))
	switch fixture := err == nil && info.IsDir(); {
	case s.Source == nil && !fixture:
		problems = append(problems, fmt.Sprintf("%s: missing; a scenario needs a fixture/ folder (it may be empty), or a git repository in source:", filepath.Join(dir, Fixture)))
	case s.Source != nil && fixture:
		problems = append(problems, fmt.Sprintf("%s: source: the scenario has a fixture/ folder too; give one of them", file))
	}
	if s.Model.Script != "" {
		p := filepath.Join(dir, s.Model.Script)
		if _, err := os.Stat(p); err != nil {
			problems = append(problems, fmt.Sprintf("%s: model.script: %s is missing", file, p))
		}
	}
	for _, c := range s.Checks {
		if c.Kind == check.KindFileEquals && c.Expected != "" {
			if _, err := readInside(dir, c.Expected); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: checks: %s: expected: %s: %v", file, c.Line, c.Name, c.Expected, err))
			}
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, ChecksDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, fmt.Sprintf("%s: %v", filepath.Join(dir, ChecksDir), unwrap(err)))
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		s.Checks = append(s.Checks, check.Spec{Name: e.Name(), Kind: check.KindExecutable, Exec: filepath.Join(dir, ChecksDir, e.Name())})
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return s, nil
}

// readInside reads the file name of folder dir, refusing one that is (or
// passes through) a symlink out of dir: its text is never read, so no error
// can echo it.
func readInside(dir, name string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, unwrap(err)
	}
	defer root.Close()
	data, err := root.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		if _, lerr := root.Lstat(name); lerr == nil {
			return nil, errors.New("a symlink that leads out of the scenario folder; refused (copy the file into the folder instead)")
		}
	}
	if err != nil {
		return nil, unwrap(err)
	}
	return data, nil
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Problem is a scenario folder that could not be loaded.
type Problem struct {
	Path string
	Err  error
}

// Discover finds scenario folders under each path (a scenario folder, or a
// folder of them, searched recursively) and loads them, sorted by id. A
// folder that cannot be loaded is returned as a problem; the others load.
func Discover(paths ...string) ([]*Scenario, []Problem) {
	// Folders are loaded a few at a time as the walk finds them (a large
	// suite has thousands), then judged in the order found, so that the
	// result does not depend on timing.
	type found struct {
		dir string
		s   *Scenario
		err error
	}
	var (
		mu    sync.Mutex
		dirs  []found
		probs []Problem
	)
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				mu.Lock()
				dir := dirs[i].dir
				mu.Unlock()
				s, err := Load(dir)
				mu.Lock()
				dirs[i].s, dirs[i].err = s, err
				mu.Unlock()
			}
		})
	}
	add := func(dir string) {
		mu.Lock()
		dirs = append(dirs, found{dir: dir})
		i := len(dirs) - 1
		mu.Unlock()
		next <- i
	}
	for _, p := range paths {
		probs = append(probs, findScenarios(p, add)...)
	}
	close(next)
	wg.Wait()
	var out []*Scenario
	seen := map[string]string{}
	for _, f := range dirs {
		if f.err != nil {
			probs = append(probs, Problem{Path: f.dir, Err: f.err})
			continue
		}
		if other, ok := seen[f.s.ID]; ok {
			probs = append(probs, Problem{Path: f.dir, Err: fmt.Errorf("id %q is also used by %s", f.s.ID, other)})
			continue
		}
		seen[f.s.ID] = f.dir
		out = append(out, f.s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, probs
}

// findScenarios calls add with each scenario folder at or under p (not
// inside a scenario's fixture, nor in a hidden folder), and says what
// could not be read.
func findScenarios(p string, add func(dir string)) []Problem {
	info, err := os.Stat(p)
	if err != nil {
		return []Problem{{Path: p, Err: unwrap(err)}}
	}
	if !info.IsDir() {
		if filepath.Base(p) == File {
			add(filepath.Dir(p))
			return nil
		}
		return []Problem{{Path: p, Err: errors.New("not a scenario folder")}}
	}
	var probs []Problem
	filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			probs = append(probs, Problem{Path: path, Err: unwrap(err)})
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == Fixture) {
			return fs.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, File)); err == nil {
			add(path)
			return fs.SkipDir
		}
		return nil
	})
	return probs
}

// HasTag reports whether the scenario carries tag.
func (s *Scenario) HasTag(tag string) bool { return slices.Contains(s.Tags, tag) }
