package suite_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
)

func runSuite(t *testing.T, paths []string, opt suite.Options) (suite.Report, string) {
	t.Helper()
	var out strings.Builder
	opt.Out = &out
	scenarios, probs := scenario.Discover(paths...)
	r := &run.Runner{DataDir: t.TempDir(), Environ: os.Environ()}
	return suite.Run(context.Background(), r, scenarios, probs, opt), out.String()
}

func TestExamplesPassOffline(t *testing.T) {
	rep, out := runSuite(t, []string{"../../examples/scenarios"}, suite.Options{Parallel: 2})
	if p, f, b := rep.Counts(); p != 5 || f != 0 || b != 0 || rep.ExitCode() != 0 {
		t.Fatalf("passed %d failed %d broken %d:\n%s", p, f, b, out)
	}
}

func TestFailingAbortedAndBrokenCases(t *testing.T) {
	os.Chmod("../../testdata/scenarios/broken-check/checks/no-run-bit", 0o644)
	rep, out := runSuite(t, []string{"../../testdata/scenarios"}, suite.Options{Parallel: 2, Repeat: 1})
	byID := map[string]suite.Case{}
	entries := map[string]suite.Entry{}
	for i, c := range rep.Cases {
		byID[c.Scenario.ID] = c
		e, err := rep.Entry(i)
		if err != nil {
			t.Fatal(err)
		}
		entries[c.Scenario.ID] = e
	}
	verdict := func(id string) suite.Entry {
		e, ok := entries[id]
		if !ok || len(e.Results) == 0 {
			t.Fatalf("%s: no verdict (%+v)", id, e)
		}
		return e
	}
	if v := verdict("fails-scope"); v.Passed || v.Results[1].Name != "scope" || v.Results[1].Passed || v.Aborted != "" {
		t.Errorf("fails-scope: %+v", v)
	}
	if v := verdict("aborted-messages"); v.Aborted != "max_messages=2" || v.Results[1].Passed != true {
		t.Errorf("aborted-messages: %+v", v)
	}
	if v := verdict("aborted-clock"); v.Aborted != "wall_clock_s=1" {
		t.Errorf("aborted-clock: %+v", v)
	}
	if c, e := byID["broken-check"], entries["broken-check"]; !c.Broken() || e.Failure.Domain != bundle.DomainCheck {
		t.Errorf("broken-check: %+v", e.Failure)
	}
	if c, e := byID["script-ends"], entries["script-ends"]; e.Failure == nil || e.Failure.Code != "script_ended" || c.Status != bundle.StatusError {
		t.Errorf("script-ends: %s %+v", c.Status, e.Failure)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Err.Error(), "unreadable/scenario.yaml:2:1") {
		t.Errorf("problems: %+v", rep.Problems)
	}
	if rep.ExitCode() != 2 {
		t.Errorf("exit code %d, want 2 (broken)", rep.ExitCode())
	}
	for _, want := range []string{"FAIL post.scope: changed outside [greeting.txt]: extra.txt", "BROKEN post.no-run-bit", "verdict broken-check #1: broken",
		"BROKEN ../../testdata/scenarios/unreadable", "5 cases", "pass^k (every repeat passed): 0 of 5"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Every run, aborted ones included, left a whole bundle.
	for id, c := range byID {
		if _, err := bundle.ReadRun(c.Dir, bundle.DefaultLimits()); err != nil {
			t.Errorf("%s: bundle: %v", id, err)
		}
	}

	junit := filepath.Join(t.TempDir(), "junit.xml")
	if err := rep.WriteJUnit(junit); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	data, _ := os.ReadFile(junit)
	if err := xml.Unmarshal(data, &doc); err != nil || doc.Tests != 6 || doc.Failures != 4 || doc.Errors != 2 {
		t.Fatalf("junit %+v %v:\n%s", doc, err, data)
	}
	js := filepath.Join(t.TempDir(), "suite.json")
	if err := rep.WriteJSON(js); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Cases []struct {
			Scenario string `json:"scenario"`
			Aborted  string `json:"aborted"`
		} `json:"cases"`
		Problems []any `json:"problems"`
	}
	data, _ = os.ReadFile(js)
	if err := json.Unmarshal(data, &j); err != nil || len(j.Cases) != 5 || len(j.Problems) != 1 {
		t.Fatalf("json: %v\n%s", err, data)
	}
}

func TestRepeatsAndPassRate(t *testing.T) {
	rep, out := runSuite(t, []string{"../../examples/scenarios/rename-config-key"}, suite.Options{Repeat: 3})
	st := rep.PerScenario()
	if len(rep.Cases) != 3 || len(st) != 1 || st[0].Passed != 3 || !strings.Contains(out, "3/3 passed (100%)") {
		t.Fatalf("%+v\n%s", st, out)
	}
	for i, c := range rep.Cases {
		b, err := bundle.ReadRun(c.Dir, bundle.DefaultLimits())
		if err != nil || c.Repeat != i+1 || b.Receipt.Scenario.Repeat != i+1 || b.Receipt.Scenario.Suite != rep.ID {
			t.Fatalf("case %d (repeat %d) receipt scenario %+v: %v", i, c.Repeat, b.Receipt.Scenario, err)
		}
	}
}

func TestFixtureIsAGitRepositoryWithOrigin(t *testing.T) {
	rep, _ := runSuite(t, []string{"../../examples/scenarios/rename-config-key"}, suite.Options{})
	c := rep.Cases[0]
	b, err := bundle.ReadRun(c.Dir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(c.Dir, "workspace")
	out, err := exec.Command("git", "-C", ws, "log", "--format=%s|%an", "origin/main").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "fixture: initial state|proctor" {
		t.Fatalf("git log origin/main: %v %s", err, out)
	}
	head, _ := exec.Command("git", "-C", ws, "rev-parse", "origin/main").Output()
	if strings.TrimSpace(string(head)) != b.Receipt.Source.CommitSHA {
		t.Fatalf("origin/main %s, receipt %s", head, b.Receipt.Source.CommitSHA)
	}
}

// A run the pack cannot take is kept as a folder of its own under the data
// folder, with a warning; nothing is left in the scratch folder.
func TestRunsThePackCannotTakeAreKeptAsFolders(t *testing.T) {
	data := t.TempDir()
	opt := suite.Options{Parallel: 2}
	cleanup, err := opt.UsePack(data)
	if err != nil {
		t.Fatal(err)
	}
	opt.Pack.Close() // every add fails from here on
	var out strings.Builder
	opt.Out = &out
	scenarios, _ := scenario.Discover("../../examples/scenarios/go-rounding-fix", "../../examples/scenarios/multi-turn")
	rep := suite.Run(context.Background(), &run.Runner{DataDir: data, Environ: os.Environ()}, scenarios, nil, opt)
	if p, _, _ := rep.Counts(); p != 2 {
		t.Fatalf("%d passed:\n%s", p, out.String())
	}
	for _, c := range rep.Cases {
		if filepath.Dir(c.Dir) != filepath.Join(data, "runs") {
			t.Fatalf("run kept at %s", c.Dir)
		}
		b, err := bundle.ReadRun(c.Dir, bundle.DefaultLimits())
		if err != nil || len(b.Problems) > 0 || b.Verdict == nil || !b.Verdict.Passed {
			t.Fatalf("kept run %s: %v %v", c.Dir, err, b)
		}
	}
	if strings.Count(out.String(), "the run was kept in") != 2 {
		t.Fatalf("no warning per run:\n%s", out.String())
	}
	if err := cleanup(); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
}

// pass^k and flaky have one definition, used by the CLI summary and the
// dashboard's matrix alike.
func TestPassKAndFlaky(t *testing.T) {
	for _, tc := range []struct {
		passed, runs int
		passK, flaky bool
	}{
		{0, 0, false, false}, // no judged run yet: not passed
		{3, 3, true, false},
		{2, 3, false, true},
		{0, 3, false, false},
		{1, 1, true, false},
	} {
		if got := suite.PassK(tc.passed, tc.runs); got != tc.passK {
			t.Errorf("PassK(%d, %d) = %v", tc.passed, tc.runs, got)
		}
		if got := suite.Flaky(tc.passed, tc.runs); got != tc.flaky {
			t.Errorf("Flaky(%d, %d) = %v", tc.passed, tc.runs, got)
		}
	}
}
