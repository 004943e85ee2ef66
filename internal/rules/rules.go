// Package rules owns standing approvals: rules a person makes from an
// approval request ("allow go test … in this source folder"), so that the
// next matching call is allowed without asking. A rule is a value with its
// tool, its match, its scope, who made it and when, an optional expiry; it
// can be revoked at once. Rules only allow: a call no rule matches goes on
// to whoever would have decided it (a person, or a denial). They are kept
// in one file of the data folder, rules.json, written atomically under a
// lock, so a CLI and a server share them and they survive a restart.
package rules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
)

// Schema is the version of rules.json.
const Schema = "proctor.rules.v1"

// Matches and scopes.
const (
	MatchPrefix = "prefix" // the command starts with the rule's words
	MatchExact  = "exact"  // the command is the rule's, word for word

	ScopeSource     = "source"     // runs on one source folder (or repository)
	ScopeScenario   = "scenario"   // runs of one scenario
	ScopeEverywhere = "everywhere" // every run
)

// Rule is one standing approval.
type Rule struct {
	ID      int64  `json:"id"`
	Tool    string `json:"tool"`    // run_command
	Match   string `json:"match"`   // prefix or exact
	Command string `json:"command"` // the words it matches
	// Operators lets the rule match a command with shell operators
	// (; & | ` $ < > or a newline); without it, such a command never
	// matches, whatever its start.
	Operators bool       `json:"operators,omitempty"`
	Scope     string     `json:"scope"`
	Target    string     `json:"target,omitempty"` // the source folder or repository, or the scenario id
	CreatedBy string     `json:"created_by"`
	Created   time.Time  `json:"created"`
	Expires   *time.Time `json:"expires,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
	Revoked   *time.Time `json:"revoked,omitempty"`
}

// Where is what a run is, for the scopes.
type Where struct {
	Source   string // the source folder (absolute) or repository URL
	Scenario string // the scenario id, for a scenario run
}

// WhereRun is where the run of receipt rc works: its source folder (or
// what the folder was chosen as, when it is a copy made for the run) or
// repository, and its scenario.
func WhereRun(rc bundle.Receipt) Where {
	w := Where{Source: rc.Source.Path}
	switch {
	case rc.Source.IsGit():
		w.Source = rc.Source.Repository
	case rc.Source.Origin != "":
		w.Source = rc.Source.Origin
	}
	if rc.Scenario != nil {
		w.Scenario = rc.Scenario.ID
	}
	return w
}

// Active reports whether the rule decides at now: not revoked, not expired.
func (r Rule) Active(now time.Time) bool {
	return r.Revoked == nil && (r.Expires == nil || now.Before(*r.Expires))
}

// State is active, expired or revoked.
func (r Rule) State(now time.Time) string {
	switch {
	case r.Revoked != nil:
		return "revoked"
	case !r.Active(now):
		return "expired"
	}
	return "active"
}

// Allows reports whether the rule allows the call in a run at where.
func (r Rule) Allows(req agent.ApprovalRequest, where Where, now time.Time) bool {
	if !r.Active(now) || req.Tool != r.Tool {
		return false
	}
	switch r.Scope {
	case ScopeSource:
		if where.Source == "" || where.Source != r.Target {
			return false
		}
	case ScopeScenario:
		if where.Scenario == "" || where.Scenario != r.Target {
			return false
		}
	case ScopeEverywhere:
	default:
		return false
	}
	cmd := words(req.Command())
	if cmd == "" || (!r.Operators && agent.HasShellOperators(req.Command())) {
		return false
	}
	want := words(r.Command)
	switch r.Match {
	case MatchExact:
		return cmd == want
	case MatchPrefix:
		return agent.StartsWithWords(cmd, want)
	}
	return false
}

// Words are the command words the rule allows ("go test …" for a prefix).
func (r Rule) Words() string {
	if r.Match == MatchPrefix {
		return r.Command + " …"
	}
	return r.Command
}

// Where says where the rule applies: "everywhere", "in FOLDER" or "in
// scenario ID".
func (r Rule) Where() string {
	switch r.Scope {
	case ScopeSource:
		return "in " + r.Target
	case ScopeScenario:
		return "in scenario " + r.Target
	}
	return "everywhere"
}

// Describe says what the rule allows, in a line.
func (r Rule) Describe() string {
	s := fmt.Sprintf("%s `%s` %s", r.Tool, r.Words(), r.Where())
	if r.Operators {
		s += ", shell operators included"
	}
	if r.Expires != nil {
		s += ", until " + r.Expires.UTC().Format(time.RFC3339)
	}
	return s
}

// words is s with its whitespace made single spaces.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// Check refuses a rule that could not be meant: what a person gives is
// checked before it is kept.
func (r Rule) Check() error {
	switch {
	case r.Tool != "run_command":
		return fmt.Errorf("tool %q: rules are for run_command", r.Tool)
	case r.Match != MatchPrefix && r.Match != MatchExact:
		return fmt.Errorf("match %q: want prefix or exact", r.Match)
	case words(r.Command) == "":
		return errors.New("command: missing; give the command (or its first words) the rule allows")
	case len(r.Command) > 1000:
		return errors.New("command: longer than 1,000 characters")
	case !r.Operators && agent.HasShellOperators(r.Command):
		return fmt.Errorf("command %q has shell operators; a rule allows them only when it says so (operators)", r.Command)
	case !slices.Contains([]string{ScopeSource, ScopeScenario, ScopeEverywhere}, r.Scope):
		return fmt.Errorf("scope %q: want source, scenario or everywhere", r.Scope)
	case r.Scope != ScopeEverywhere && r.Target == "":
		return fmt.Errorf("scope %s: name the %s it is for", r.Scope, r.Scope)
	case r.Scope == ScopeScenario && !bundle.ValidID(r.Target):
		return fmt.Errorf("scenario %q: not a scenario id", r.Target)
	case r.Scope == ScopeSource && !filepath.IsAbs(r.Target) && !strings.HasPrefix(r.Target, "https://") && !strings.HasPrefix(r.Target, "file://"):
		return fmt.Errorf("source %q: want an absolute folder or a repository URL", r.Target)
	case r.Expires != nil && !r.Expires.After(r.Created):
		return errors.New("expires: must be later than now")
	case strings.TrimSpace(r.CreatedBy) == "":
		return errors.New("created_by: missing")
	}
	return nil
}

// File is rules.json.
type File struct {
	Path string
	Now  func() time.Time // nil: time.Now
}

// At is the rules file of a data folder.
func At(dataDir string) *File { return &File{Path: filepath.Join(dataDir, "rules.json")} }

type doc struct {
	Schema string `json:"schema"`
	NextID int64  `json:"next_id"`
	Rules  []Rule `json:"rules"`
}

func (f *File) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

// List is every rule, revoked and expired ones included, oldest first.
func (f *File) List() ([]Rule, error) {
	d, err := f.read()
	return d.Rules, err
}

func (f *File) read() (doc, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc{Schema: Schema, NextID: 1}, nil
	}
	if err != nil {
		return doc{}, fmt.Errorf("read rules %s: %w", f.Path, err)
	}
	var d doc
	if err := json.Unmarshal(data, &d); err != nil {
		return doc{}, fmt.Errorf("read rules %s: %w (fix or remove the file; no rule applies until it reads)", f.Path, err)
	}
	if d.Schema != Schema {
		return doc{}, fmt.Errorf("read rules %s: schema %q, want %q", f.Path, d.Schema, Schema)
	}
	return d, nil
}

// update changes the file under its lock.
func (f *File) update(change func(d *doc) error) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	l, err := flock.Wait(context.Background(), f.Path+".lock", true)
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	defer l.Unlock()
	d, err := f.read()
	if err != nil {
		return err
	}
	if err := change(&d); err != nil {
		return err
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return osfile.WriteFile(f.Path, 0o600, true, osfile.Bytes(append(data, '\n')))
}

// Add checks and keeps a new rule, giving it the next id and the time.
func (f *File) Add(r Rule) (Rule, error) {
	r.Created, r.Revoked, r.RevokedBy = f.now().UTC(), nil, ""
	r.Command = strings.TrimSpace(r.Command)
	if err := r.Check(); err != nil {
		return Rule{}, fmt.Errorf("add rule: %w", err)
	}
	err := f.update(func(d *doc) error {
		r.ID = d.NextID
		d.NextID++
		d.Rules = append(d.Rules, r)
		return nil
	})
	return r, err
}

// ErrNoRule is a revocation of a rule that does not exist.
var ErrNoRule = errors.New("no such rule")

// Revoke ends rule id at once; revoking a revoked rule changes nothing.
func (f *File) Revoke(id int64, by string) (Rule, error) {
	var out Rule
	err := f.update(func(d *doc) error {
		for i := range d.Rules {
			if d.Rules[i].ID != id {
				continue
			}
			if d.Rules[i].Revoked == nil {
				now := f.now().UTC()
				d.Rules[i].Revoked, d.Rules[i].RevokedBy = &now, by
			}
			out = d.Rules[i]
			return nil
		}
		return fmt.Errorf("%w #%d", ErrNoRule, id)
	})
	return out, err
}

// Set is the rules of a file as they apply to a run at Where, read fresh
// for every call (a revoked rule stops at once). A rules file that cannot
// be read allows nothing.
type Set struct {
	File  *File
	Where Where
}

// Allow implements agent.Allower.
func (s Set) Allow(req agent.ApprovalRequest) (agent.Decision, bool) {
	list, err := s.File.List()
	if err != nil {
		return agent.Decision{}, false
	}
	now := s.File.now()
	for _, r := range list {
		if r.Allows(req, s.Where, now) {
			return agent.Decision{Approved: true, By: fmt.Sprintf("rule #%d", r.ID),
				Reason: fmt.Sprintf("allowed by rule #%d (%s; made by %s)", r.ID, r.Describe(), r.CreatedBy)}, true
		}
	}
	return agent.Decision{}, false
}
