// Package derive makes a regression scenario from a recorded run: the
// run's source at its base commit as the fixture (or its git source, pinned
// to the commit), its task, criteria, bounds and approvals as scenario.yaml,
// its model's recorded replies as a model script (each tool call written as
// an intent where it is one, so that the script plays under any agent),
// and checks from what it did: its own check commands, the paths it
// changed, and each changed file as the reviewer applied it, compared byte
// for byte (file_equals). The folder is one `proctor scenario run` takes as
// it is.
//
// Everything read from the bundle is hostile input: paths stay inside the
// folder made, files that look secret are left out and listed, every text
// written is redacted, and the folder appears whole or not at all.
package derive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/check"
	"github.com/proctor-dev/proctor/internal/intent"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// DefaultMaxBytes bounds a fixture's files together.
const DefaultMaxBytes = 50 << 20

// ExpectedDir is the folder of a derived scenario holding each changed
// file as the reviewer applied it.
const ExpectedDir = "expected"

// Options say how a scenario is made.
type Options struct {
	MaxBytes int64            // the fixture's files together; 0: DefaultMaxBytes
	Redact   *redact.Redactor // applied to every text written; nil: none beyond the bundle's own
	Tools    intent.Table     // the tools intents are recognised among (the run's agent's, then all)
}

// Made is what was made.
type Made struct {
	Dir      string
	ID       string
	LeftOut  []string // fixture files left out because they look secret, or hold a secret
	Notes    []string // what a person should know (a rejected diff: no content checks)
	Steps    int      // model script steps
	Checks   int
	Turns    int
	FromRun  string // the (last) run it was made from
	Session  string // the session whose runs it was made from, when more than one
	Fixture  int    // files in the fixture
	Expected int    // files compared byte for byte
}

// Run is a recorded run to make a scenario of: its bundle folder, and the
// folder whose proctor repository (<Workspace>.git) holds its base commit
// (records.Data.BaseRepo; "" for a run pushed from elsewhere, whose base is
// not on this host).
type Run struct{ Dir, Workspace string }

// FromRun makes the scenario folder out from one run. out must not exist;
// its name is the scenario's id. Nothing is left at out when an error is
// returned.
func FromRun(ctx context.Context, r Run, out string, opt Options) (*Made, error) {
	return FromRuns(ctx, []Run{r}, out, opt)
}

// FromRuns makes a multi-turn scenario of a session's runs, in order: the
// first run's base is the fixture, every run's person's message a turn (a
// reviewer's Request changes the next one), the replies of all of them the
// model script, and the files as the last run left them — each run's
// change as it was applied — the checks.
func FromRuns(ctx context.Context, runs []Run, out string, opt Options) (*Made, error) {
	if len(runs) == 0 {
		return nil, errors.New("no run to make a scenario of")
	}
	var rcs []bundle.Receipt
	for _, r := range runs {
		b, err := bundle.ReadRun(r.Dir, bundle.DefaultLimits())
		if err != nil {
			return nil, err
		}
		rcs = append(rcs, b.Receipt)
	}
	rc := rcs[0]
	id := filepath.Base(out)
	if !bundle.ValidID(id) {
		return nil, fmt.Errorf("scenario folder %s: its name %q is the scenario's id: use letters, digits, '.', '_' and '-'", out, id)
	}
	if _, err := os.Lstat(out); err == nil {
		return nil, fmt.Errorf("scenario folder %s already exists: name a new folder", out)
	}
	if rc.Source.CommitSHA == "" {
		return nil, fmt.Errorf("run %s has no base commit (a workspace without git, or a run that failed before its workspace was made): a scenario needs the files it started from", rc.RunID)
	}
	if runs[0].Workspace == "" {
		return nil, fmt.Errorf("run %s was pushed to this host from elsewhere: the files it started from are not here; make the scenario where it ran", rc.RunID)
	}
	ws := workspace.Open(runs[0].Workspace, rc.Source.CommitSHA)
	if !ws.HasCommit(ctx, rc.Source.CommitSHA) {
		return nil, fmt.Errorf("run %s: its repository %s does not hold the base commit %s", rc.RunID, workspace.GitDir(ws.Dir), rc.Source.CommitSHA)
	}
	m := &Made{Dir: out, ID: id, FromRun: rcs[len(rcs)-1].RunID}
	if len(runs) > 1 {
		// A session made of a run after it ended: only the later runs' receipts name it.
		m.Session = rcs[len(rcs)-1].SessionID
	}
	err := osfile.Publish(out, func(tmp string) error {
		d := &deriver{ctx: ctx, runs: runs, rcs: rcs, rc: rc, ws: ws, dir: tmp, opt: opt, made: m}
		if d.opt.MaxBytes <= 0 {
			d.opt.MaxBytes = DefaultMaxBytes
		}
		if err := d.make(); err != nil {
			return fmt.Errorf("make a scenario of run %s: %w", rc.RunID, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("make scenario %s: %w", out, err)
	}
	return m, nil
}

type deriver struct {
	ctx     context.Context
	runs    []Run
	rcs     []bundle.Receipt // the runs' receipts, in order
	rc      bundle.Receipt   // the first's
	ws      *workspace.Workspace
	dir     string
	opt     Options
	made    *Made
	turns   []string          // the person's messages, the task first
	answers []string          // answers to the agent's questions
	base    map[string][]byte // the base commit's files, by slash path (those kept in the fixture and the changed ones)
}

func (d *deriver) redact(s string) string {
	if d.opt.Redact == nil {
		return s
	}
	return d.opt.Redact.String(s)
}

// secretIn says why a file's content is a secret a scenario may not hold
// — a secret of the environment, or a password, token or key given a
// literal value (redact.AssignsSecret) — or "" when it is none.
func (d *deriver) secretIn(path string, data []byte) string {
	switch {
	case d.opt.Redact != nil && d.opt.Redact.String(string(data)) != string(data):
		return "holds a secret of the environment"
	case redact.AssignsSecret(path, data):
		return "gives a password, token or key a literal value"
	}
	return ""
}

func (d *deriver) make() error {
	if err := d.fixture(); err != nil {
		return err
	}
	checks, err := d.checks()
	if err != nil {
		return err
	}
	steps, err := d.script()
	if err != nil {
		return err
	}
	approvals, err := d.approvals()
	if err != nil {
		return err
	}
	return d.scenarioFile(checks, steps, approvals)
}

// fixture writes the base commit's files into fixture/ — for a git source
// none: the scenario names the repository and commit — leaving out files
// that look secret (and listing them).
func (d *deriver) fixture() error {
	entries, err := d.ws.Tree(d.ctx, d.rc.Source.CommitSHA)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	d.base = map[string][]byte{}
	var total int64
	git := d.rc.Source.Kind == bundle.SourceGit
	if !git {
		if err := os.Mkdir(filepath.Join(d.dir, scenario.Fixture), 0o755); err != nil {
			return err
		}
	}
	for _, p := range paths {
		e := entries[p]
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("the base commit names %q, a path outside the fixture", p)
		}
		if redact.SecretFile(p) {
			d.made.LeftOut = append(d.made.LeftOut, p+" (looks like a secret)")
			continue
		}
		switch e.Mode {
		case "100644", "100755", "120000":
		default:
			d.made.LeftOut = append(d.made.LeftOut, fmt.Sprintf("%s (mode %s: not a file or a link)", p, e.Mode))
			continue
		}
		data, err := d.ws.Show(d.ctx, d.rc.Source.CommitSHA, p)
		if err != nil {
			return err
		}
		if total += int64(len(data)); total > d.opt.MaxBytes {
			return fmt.Errorf("the fixture is over %d bytes at %s: pass a larger --max-bytes, or make the scenario by hand from a smaller source", d.opt.MaxBytes, p)
		}
		if why := d.secretIn(p, data); why != "" {
			d.made.LeftOut = append(d.made.LeftOut, p+" ("+why+")")
			continue
		}
		d.base[p] = data
		if git {
			continue
		}
		target := filepath.Join(d.dir, scenario.Fixture, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if e.Mode == "120000" {
			if err := os.Symlink(string(data), target); err != nil {
				return err
			}
		} else if err := os.WriteFile(target, data, map[string]os.FileMode{"100755": 0o755}[e.Mode]|0o644); err != nil {
			return err
		}
		d.made.Fixture++
	}
	return nil
}

// checkYAML is a check as scenario.yaml writes it.
type checkYAML struct {
	Name     string   `yaml:"name,omitempty"`
	Kind     string   `yaml:"kind"`
	Path     string   `yaml:"path,omitempty"`
	Expected string   `yaml:"expected,omitempty"`
	Paths    []string `yaml:"paths,omitempty"`
	Command  string   `yaml:"command,omitempty"`
	Timeout  int      `yaml:"timeout_s,omitempty"`
}

// checks are the run's own check commands, the paths it changed, and each
// changed file as the reviewer applied it (expected/<path>), or absent.
func (d *deriver) checks() ([]checkYAML, error) {
	out := d.commandChecks()
	var diffs []string
	var changed []string
	for i := range d.runs {
		diff, ch, err := d.appliedDiff(i)
		if err != nil {
			return nil, err
		}
		if ch == nil {
			d.made.Checks = len(out)
			return out, nil
		}
		diffs = append(diffs, diff)
		for _, p := range ch {
			if !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, "\\") {
				return nil, fmt.Errorf("the diff of run %s names %q, a path outside the workspace", d.rcs[i].RunID, p)
			}
			if !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
		}
	}
	if len(changed) > 0 {
		out = append(out, checkYAML{Name: "only-the-changed-paths", Kind: check.KindOnlyPathsChanged, Paths: globQuote(changed)})
	}
	after, err := d.apply(diffs, changed)
	if err != nil {
		d.made.Notes = append(d.made.Notes, fmt.Sprintf("the runs' changes could not be played again on the base (%v): the scenario checks no file's content; add checks for the change you wanted", err))
		d.made.Checks = len(out)
		return out, nil
	}
	for i, p := range changed {
		data, exists := after[p]
		name := fmt.Sprintf("as-applied-%d", i+1)
		switch {
		case !exists:
			out = append(out, checkYAML{Name: name, Kind: check.KindFileAbsent, Path: p})
		case redact.SecretFile(p):
			d.made.LeftOut = append(d.made.LeftOut, ExpectedDir+"/"+p+" (looks like a secret: no content check)")
		case d.secretIn(p, data) != "":
			d.made.LeftOut = append(d.made.LeftOut, ExpectedDir+"/"+p+" ("+d.secretIn(p, data)+": no content check)")
		default:
			target := filepath.Join(d.dir, ExpectedDir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return nil, err
			}
			out = append(out, checkYAML{Name: name, Kind: check.KindFileEquals, Path: p, Expected: ExpectedDir + "/" + p})
			d.made.Expected++
		}
	}
	d.made.Checks = len(out)
	return out, nil
}

// commandChecks are the commands that judged the runs: their verify
// commands, and for a scenario's run the scenario's own check commands,
// when its folder is still there to read them from.
func (d *deriver) commandChecks() []checkYAML {
	var out []checkYAML
	commands := map[string]bool{}
	for _, rc := range d.rcs {
		if v := rc.Verify; v != nil {
			for _, c := range v.Checks {
				if c.Phase == "verify" && c.Name != "" && !commands[c.Name] {
					commands[c.Name] = true
					out = append(out, checkYAML{Kind: check.KindCommand, Command: d.redact(c.Name)})
				}
			}
		}
	}
	if sc := d.rc.Scenario; sc != nil && sc.Path != "" {
		if s, err := scenario.Load(sc.Path); err == nil {
			for _, c := range s.Checks {
				if c.Kind == check.KindCommand {
					out = append(out, checkYAML{Name: c.Name, Kind: check.KindCommand, Command: d.redact(c.Command), Timeout: int(c.Timeout.Seconds())})
				}
			}
		} else {
			d.made.Notes = append(d.made.Notes, fmt.Sprintf("the run's scenario %s could not be read for its check commands: %v", sc.Path, err))
		}
	}
	return out
}

// appliedDiff is run i's change as its reviewer applied it: the whole
// diff, or the parts accepted with their edits; changed are the paths it
// writes. A rejected diff gives no change to check (changed nil).
func (d *deriver) appliedDiff(i int) (diff string, changed []string, err error) {
	raw, err := bundle.ReadFile(d.runs[i].Dir, bundle.DiffFile, bundle.DefaultLimits().MaxTextBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", []string{}, nil // no change: only_paths_changed with nothing would refuse every change
	}
	if err != nil {
		return "", nil, fmt.Errorf("read its diff: %w", err)
	}
	diff = string(raw)
	rv := d.rcs[i].Review
	switch {
	case rv != nil && !rv.Approved:
		d.made.Notes = append(d.made.Notes, fmt.Sprintf("the reviewer rejected the diff of run %s: the scenario checks no file's content; add checks for the change you wanted", d.rcs[i].RunID))
		return "", nil, nil
	case rv != nil && len(rv.AppliedParts) > 0:
		sel, err := patch.Select(diff, choices(diff, rv))
		if err != nil {
			return "", nil, fmt.Errorf("the parts the reviewer applied: %w", err)
		}
		return sel.Diff, sel.Changed, nil
	}
	files, err := patch.Parse(diff)
	if err != nil {
		return "", nil, fmt.Errorf("read its diff: %w", err)
	}
	return diff, patch.Paths(files), nil
}

// choices are a part-by-part review as patch.Select takes it: the parts
// applied, with the reviewer's edits.
func choices(diff string, rv *bundle.Review) []patch.Choice {
	files, _ := patch.Parse(diff)
	index := map[string]int{}
	for i, f := range files {
		index[f.Path()] = i
	}
	var out []patch.Choice
	for _, p := range rv.AppliedParts {
		i, ok := index[p.Path]
		if !ok {
			continue
		}
		c := patch.Choice{File: i, Hunk: p.Hunk - 1, Accept: true}
		if p.Hunk == 0 {
			c.Hunk = patch.Whole
		}
		for _, e := range rv.Edits {
			if e.Path == p.Path && e.Hunk == p.Hunk {
				text := e.Applied
				c.Edit = &text
			}
		}
		out = append(out, c)
	}
	return out
}

// apply is the changed files after each diff is applied in turn to the
// base, by path; a file a diff deletes is absent.
func (d *deriver) apply(diffs []string, changed []string) (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "proctor-derive-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, p := range changed {
		data, ok := d.base[p]
		if !ok {
			continue
		}
		target := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return nil, err
		}
	}
	for i, diff := range diffs {
		if diff == "" {
			continue
		}
		if err := workspace.ApplyPatch(d.ctx, tmp, diff); err != nil {
			return nil, fmt.Errorf("apply the diff of run %s: %w", d.rcs[i].RunID, err)
		}
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := map[string][]byte{}
	for _, p := range changed {
		data, err := root.ReadFile(filepath.FromSlash(p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("%s after the diff: %w", p, err)
		default:
			out[p] = data
		}
	}
	return out, nil
}

// globQuote makes paths globs that match only themselves.
func globQuote(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(p)
	}
	return out
}

// ruleYAML is an approval rule as scenario.yaml writes it.
type ruleYAML struct {
	Tool     string `yaml:"tool"`
	Args     string `yaml:"args"`
	Decision string `yaml:"decision"`
}

// approvals are the run's decisions on gated calls: each approved call a
// rule that approves exactly it; everything else is denied.
func (d *deriver) approvals() ([]ruleYAML, error) {
	var events []bundle.Event
	for i, r := range d.runs {
		evs, _, err := bundle.ReadEvents(r.Dir, bundle.DefaultLimits())
		if err != nil {
			return nil, fmt.Errorf("read the events of run %s: %w", d.rcs[i].RunID, err)
		}
		events = append(events, evs...)
	}
	asked := map[string]bundle.ApprovalRequestedEvent{}
	var rules []ruleYAML
	seen := map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case bundle.EventApprovalRequested:
			var r bundle.ApprovalRequestedEvent
			if json.Unmarshal(e.Data, &r) == nil {
				asked[r.ID] = r
			}
		case bundle.EventApprovalDecided:
			var dec bundle.ApprovalDecidedEvent
			if json.Unmarshal(e.Data, &dec) != nil || !dec.Approved {
				continue
			}
			r, ok := asked[dec.ID]
			if !ok {
				continue
			}
			what := string(r.Args)
			if in, ok := d.opt.Tools.Of(r.Tool, string(r.Args)); ok && in.Kind == intent.Run {
				what = in.Command
			}
			rule := ruleYAML{Tool: r.Tool, Args: "^" + regexp.QuoteMeta(d.redact(what)) + "$", Decision: string(scenario.Approve)}
			if key := rule.Tool + "\x00" + rule.Args; !seen[key] {
				seen[key] = true
				rules = append(rules, rule)
			}
		}
	}
	return rules, nil
}

// scenarioFile writes scenario.yaml and model.yaml, and reads the folder
// back as `scenario run` will: a folder it would refuse is not made.
func (d *deriver) scenarioFile(checks []checkYAML, steps []stepYAML, rules []ruleYAML) error {
	rc := d.rc
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v any) {
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			panic(err) // only the plain values below
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &n)
	}
	add("id", d.made.ID)
	if d.made.Session != "" {
		var ids []string
		for _, r := range d.rcs {
			ids = append(ids, r.RunID)
		}
		add("description", fmt.Sprintf("Made from session %s (runs %s; %s, model %s) by proctor scenario from.", d.made.Session, strings.Join(ids, ", "), agentName(rc), rc.Model.Name))
	} else {
		add("description", fmt.Sprintf("Made from run %s (%s, model %s) by proctor scenario from.", rc.RunID, agentName(rc), rc.Model.Name))
	}
	add("made_from", d.made.FromRun)
	turns := d.turns
	if len(turns) == 0 {
		turns = []string{d.redact(rc.Task)}
	}
	if len(turns) == 1 {
		add("task", turns[0])
	} else {
		add("turns", turns)
	}
	d.made.Turns = len(turns)
	if len(d.answers) > 0 {
		add("yield_reply", d.answers[0])
		for _, a := range d.answers[1:] {
			if a != d.answers[0] {
				d.made.Notes = append(d.made.Notes, "the agent's questions got different answers; a scenario answers every question with its one yield_reply (the first)")
				break
			}
		}
	}
	if len(rc.Criteria) > 0 {
		add("criteria", redactAll(d, rc.Criteria))
	}
	if len(rc.OutOfScope) > 0 {
		add("out_of_scope", redactAll(d, rc.OutOfScope))
	}
	b := budgets(rc.Bounds)
	if len(d.answers) > 0 {
		b["max_yield_replies"] = len(d.answers)
	}
	if len(b) > 0 {
		add("budgets", b)
	}
	approvals := map[string]any{"default": string(scenario.Deny)}
	if len(rules) > 0 {
		approvals["rules"] = rules
	}
	add("approvals", approvals)
	if rc.Source.Kind == bundle.SourceGit {
		add("source", map[string]string{"repo": rc.Source.Repository, "commit": rc.Source.CommitSHA})
	}
	if rc.Sandbox != "" {
		add("sandbox", rc.Sandbox)
	}
	if len(checks) == 0 {
		checks = append(checks, checkYAML{Kind: check.KindBudgetNotExceeded})
	}
	add("checks", checks)
	if err := writeYAML(filepath.Join(d.dir, scenario.File), "# Made by proctor scenario from "+d.made.FromRun+"; edit it as any scenario.\n", doc); err != nil {
		return err
	}
	script := map[string]any{"name": "replies of run " + rc.RunID, "steps": steps}
	if err := writeYAML(filepath.Join(d.dir, scenario.ModelFile), "# The recorded replies of run "+rc.RunID+", each tool call an intent where it is one.\n", script); err != nil {
		return err
	}
	if _, err := scenario.Load(d.dir); err != nil && !strings.Contains(err.Error(), "does not match its folder name") {
		return fmt.Errorf("the scenario made does not load: %w", err)
	}
	return nil
}

func redactAll(d *deriver, in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = d.redact(s)
	}
	return out
}

// budgets are the run's bounds as scenario.yaml's budgets: those not at
// their defaults.
func budgets(b bundle.Bounds) map[string]any {
	values := func(b bundle.Bounds) map[string]any {
		raw, _ := json.Marshal(b)
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		var m map[string]any
		dec.Decode(&m)
		return m
	}
	defaults := values(bounds.Defaults())
	out := map[string]any{}
	for k, v := range values(b) {
		n, ok := v.(json.Number)
		if !ok || n.String() == "0" || (defaults[k] != nil && defaults[k].(json.Number) == n) {
			continue
		}
		if i, err := n.Int64(); err == nil {
			out[k] = i
		} else if f, err := n.Float64(); err == nil {
			out[k] = f
		}
	}
	return out
}

func agentName(rc bundle.Receipt) string {
	if rc.Agent == nil || rc.Agent.Name == "" {
		return "proctor's own agent"
	}
	return "agent " + rc.Agent.Name
}

func writeYAML(path, header string, v any) error {
	var buf strings.Builder
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, []byte(buf.String()), 0o644)
}
