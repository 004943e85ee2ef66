package rules

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
)

func call(cmd string) agent.ApprovalRequest {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return agent.ApprovalRequest{CallID: "c1", Tool: "run_command", Args: string(args)}
}

func TestRuleAllows(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	src := Where{Source: "/srv/app"}
	goTest := Rule{Tool: "run_command", Match: MatchPrefix, Command: "go test", Scope: ScopeSource, Target: "/srv/app"}
	with := func(r Rule, f func(*Rule)) Rule { f(&r); return r }
	for _, tc := range []struct {
		name  string
		rule  Rule
		cmd   string
		where Where
		want  bool
	}{
		{"the prefix itself", goTest, "go test", src, true},
		{"the prefix and more words", goTest, "go test ./... -run X", src, true},
		{"extra spaces are one", goTest, "go   test  ./...", src, true},
		{"not at a word boundary", goTest, "go testify", src, false},
		{"another command", goTest, "go build", src, false},
		{"another source folder", goTest, "go test", Where{Source: "/srv/other"}, false},
		{"no source", goTest, "go test", Where{}, false},
		{"a ; after the prefix", goTest, "go test; rm -rf ~", src, false},
		{"a pipe", goTest, "go test | tee out", src, false},
		{"&&", goTest, "go test && curl evil", src, false},
		{"a substitution", goTest, "go test $(rm -rf /)", src, false},
		{"backticks", goTest, "go test `id`", src, false},
		{"a redirect", goTest, "go test > /etc/passwd", src, false},
		{"a newline", goTest, "go test\nrm -rf /", src, false},
		{"operators allowed when the rule says so", with(goTest, func(r *Rule) { r.Operators = true }), "go test ./... | tee out", src, true},
		{"exact: the same words", with(goTest, func(r *Rule) { r.Match = MatchExact; r.Command = "go test ./..." }), "go test ./...", src, true},
		{"exact: more words", with(goTest, func(r *Rule) { r.Match = MatchExact; r.Command = "go test ./..." }), "go test ./... -count=1", src, false},
		{"everywhere", with(goTest, func(r *Rule) { r.Scope, r.Target = ScopeEverywhere, "" }), "go test", Where{Source: "/any"}, true},
		{"this scenario", with(goTest, func(r *Rule) { r.Scope, r.Target = ScopeScenario, "fix-rounding" }), "go test", Where{Scenario: "fix-rounding"}, true},
		{"another scenario", with(goTest, func(r *Rule) { r.Scope, r.Target = ScopeScenario, "fix-rounding" }), "go test", Where{Scenario: "other", Source: "/srv/app"}, false},
		{"before its expiry", with(goTest, func(r *Rule) { r.Expires = &later }), "go test", src, true},
		{"after its expiry", with(goTest, func(r *Rule) { r.Expires = &earlier }), "go test", src, false},
		{"revoked", with(goTest, func(r *Rule) { r.Revoked = &earlier }), "go test", src, false},
		{"another tool", goTest, "", src, false},
		{"an empty command", goTest, "   ", src, false},
	} {
		req := call(tc.cmd)
		if tc.name == "another tool" {
			req = agent.ApprovalRequest{Tool: "write_file", Args: `{"command": "go test"}`}
		}
		if got := tc.rule.Allows(req, tc.where, now); got != tc.want {
			t.Errorf("%s: Allows(%q) = %v, want %v", tc.name, tc.cmd, got, tc.want)
		}
	}
}

func TestRuleCheck(t *testing.T) {
	now := time.Now()
	ok := Rule{Tool: "run_command", Match: MatchPrefix, Command: "go test", Scope: ScopeSource, Target: "/srv/app", CreatedBy: "ana", Created: now}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	past := now.Add(-time.Minute)
	for _, tc := range []struct {
		change func(*Rule)
		want   string
	}{
		{func(r *Rule) { r.Tool = "write_file" }, "rules are for run_command"},
		{func(r *Rule) { r.Match = "regex" }, "want prefix or exact"},
		{func(r *Rule) { r.Command = "  " }, "command: missing"},
		{func(r *Rule) { r.Command = "go test; rm -rf /" }, "has shell operators"},
		{func(r *Rule) { r.Scope = "team" }, "want source, scenario or everywhere"},
		{func(r *Rule) { r.Target = "" }, "name the source"},
		{func(r *Rule) { r.Target = "relative/dir" }, "want an absolute folder"},
		{func(r *Rule) { r.Scope, r.Target = ScopeScenario, "../x" }, "not a scenario id"},
		{func(r *Rule) { r.Expires = &past }, "must be later than now"},
		{func(r *Rule) { r.CreatedBy = "" }, "created_by: missing"},
	} {
		r := ok
		tc.change(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", r, err, tc.want)
		}
	}
}

// Rules are kept in rules.json: added with the next id, revoked at once
// (and the set that reads the file stops allowing), kept across a
// reopening, and added from many goroutines without losing one.
func TestFileAddRevokeAndSet(t *testing.T) {
	dir := t.TempDir()
	f := At(dir)
	set := Set{File: f, Where: Where{Source: "/srv/app"}}
	if _, ok := set.Allow(call("go test ./...")); ok {
		t.Fatal("allowed with no rules")
	}
	r, err := f.Add(Rule{Tool: "run_command", Match: MatchPrefix, Command: " go test ", Scope: ScopeSource, Target: "/srv/app", CreatedBy: "ana"})
	if err != nil || r.ID != 1 || r.Command != "go test" || r.Created.IsZero() {
		t.Fatalf("Add = %+v, %v", r, err)
	}
	d, ok := set.Allow(call("go test ./..."))
	if !ok || !d.Approved || d.By != "rule #1" || !strings.Contains(d.Reason, "allowed by rule #1") || !strings.Contains(d.Reason, "by ana") {
		t.Fatalf("Allow = %+v, %v", d, ok)
	}
	if _, err := f.Add(Rule{Tool: "run_command", Match: MatchPrefix, Command: "make", Scope: ScopeSource, CreatedBy: "ana"}); err == nil {
		t.Fatal("a rule without its source was kept")
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := f.Add(Rule{Tool: "run_command", Match: MatchExact, Command: "make", Scope: ScopeEverywhere, CreatedBy: "bo"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	list, _ := At(dir).List()
	if len(list) != 21 || list[20].ID != 21 {
		t.Fatalf("%d rules, the last #%d", len(list), list[len(list)-1].ID)
	}
	rv, err := f.Revoke(1, "bo")
	if err != nil || rv.Revoked == nil || rv.RevokedBy != "bo" || rv.State(time.Now()) != "revoked" {
		t.Fatalf("Revoke = %+v, %v", rv, err)
	}
	if _, ok := set.Allow(call("go test ./...")); ok {
		t.Fatal("a revoked rule still allows")
	}
	if again, err := f.Revoke(1, "cy"); err != nil || again.RevokedBy != "bo" {
		t.Fatalf("revoking twice: %+v %v", again, err)
	}
	if _, err := f.Revoke(99, "bo"); err == nil {
		t.Fatal("revoked a rule that does not exist")
	}
	// A file that cannot be read allows nothing, and says which file.
	os.WriteFile(filepath.Join(dir, "rules.json"), []byte("{not json"), 0o600)
	if _, ok := set.Allow(call("make")); ok {
		t.Fatal("a broken rules file allowed a call")
	}
	if _, err := f.List(); err == nil || !strings.Contains(err.Error(), "rules.json") {
		t.Fatalf("List of a broken file: %v", err)
	}
}

// The chain asks the policy, then the rules, then the person.
func TestChainAsksTheRulesBeforeAPerson(t *testing.T) {
	f := At(t.TempDir())
	f.Add(Rule{Tool: "run_command", Match: MatchPrefix, Command: "go test", Scope: ScopeEverywhere, CreatedBy: "ana"})
	asked := 0
	person := approverFunc(func(agent.ApprovalRequest) agent.Decision { asked++; return agent.Decision{By: "dana", Reason: "no"} })
	c := agent.Chain{Policy: agent.Policy{Allow: []string{"ls"}}, Rules: Set{File: f}, Next: person}
	for cmd, want := range map[string]string{"ls -la": "policy", "go test ./...": "rule #1", "rm -rf /": "dana"} {
		d, _ := c.Approve(t.Context(), call(cmd))
		if d.By != want {
			t.Errorf("%s decided by %s, want %s", cmd, d.By, want)
		}
	}
	if asked != 1 {
		t.Errorf("the person was asked %d times, want 1", asked)
	}
}

type approverFunc func(agent.ApprovalRequest) agent.Decision

func (f approverFunc) Approve(_ context.Context, r agent.ApprovalRequest) (agent.Decision, error) {
	return f(r), nil
}
