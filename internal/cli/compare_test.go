package cli

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// TestCompareSuitesInCI plays a CI job: the main branch's suite is set as
// the baseline, a later suite of the same scenario is compared with it, a
// change that breaks a check fails the job by --fail-on, and proctor
// compare gives the same answer in every format.
func TestCompareSuitesInCI(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	in := t.TempDir()
	if r := invoke(t, env, "scenario", "new", "--in", in, "fix-greeting"); r.code != ExitOK {
		t.Fatalf("new: %+v", r)
	}
	dir := filepath.Join(in, "fix-greeting")
	suiteOf := regexp.MustCompile(`baseline \S+ is suite (\S+)`)

	r := invoke(t, env, "scenario", "run", dir, "--repeat", "2", "--set-baseline", "main")
	if r.code != ExitOK || !suiteOf.MatchString(r.stdout) {
		t.Fatalf("main branch: %+v", r)
	}
	base := suiteOf.FindStringSubmatch(r.stdout)[1]
	if l := invoke(t, env, "baseline", "list"); l.code != ExitOK || !strings.Contains(l.stdout, "main  "+base) {
		t.Fatalf("baseline list: %+v", l)
	}

	// Unchanged: the job passes.
	r = invoke(t, env, "scenario", "run", dir, "--repeat", "2", "--baseline", "main", "--fail-on", "any", "--set-baseline", "same")
	if r.code != ExitOK || !strings.Contains(r.stdout, "OK (--fail-on any): no change") {
		t.Fatalf("unchanged: %+v", r)
	}
	same := suiteOf.FindStringSubmatch(r.stdout)[1]

	// A change breaks a check: the job fails on a regression, and the
	// markdown for the pull request names it.
	yaml := filepath.Join(dir, "scenario.yaml")
	spec, _ := os.ReadFile(yaml)
	os.WriteFile(yaml, []byte(strings.Replace(string(spec), "text: hello, world", "text: goodbye", 1)), 0o644)
	md := filepath.Join(t.TempDir(), "comment.md")
	r = invoke(t, env, "scenario", "run", dir, "--repeat", "2", "--baseline", "main", "--fail-on", "regression",
		"--compare-format", "markdown", "--compare-out", md, "--url", "https://proctor.example", "--set-baseline", "broken")
	if r.code != ExitProblems || !strings.Contains(r.stderr, "FAIL (--fail-on regression): 1 regressed") {
		t.Fatalf("regressed: %+v", r)
	}
	head := suiteOf.FindStringSubmatch(r.stdout)[1]
	comment, _ := os.ReadFile(md)
	for _, want := range []string{"### ❌ proctor: `" + head + "` compared with `" + base + "`", "| regressed | fix-greeting (native, scripted) | 2/2 (100%, 34–100%) | 0/2 (0%, 0–66%) | greeting-changed | [2026",
		"](https://proctor.example/runs/2026"} {
		if !strings.Contains(string(comment), want) {
			t.Errorf("markdown lacks %q:\n%s", want, comment)
		}
	}

	// A second broken suite: still failing, which only --fail-on any fails.
	r = invoke(t, env, "scenario", "run", dir, "--repeat", "2")
	if r.code != ExitProblems {
		t.Fatalf("broken again: %+v", r)
	}

	cases := []struct {
		base, head, failOn string
		code               int
	}{
		{"main", head, "none", ExitOK},
		{"main", head, "regression", ExitProblems},
		{"main", head, "flaky", ExitProblems},
		{"main", head, "any", ExitProblems},
		{"main", same, "regression", ExitOK},
		{"main", same, "flaky", ExitOK},
		{"main", same, "any", ExitOK},
		{head, "main", "regression", ExitOK}, // the other way round: fixed
		{head, "main", "any", ExitOK},
	}
	for _, tc := range cases {
		if r := invoke(t, env, "compare", "--fail-on", tc.failOn, tc.base, tc.head); r.code != tc.code {
			t.Errorf("compare --fail-on %s %s %s: exit %d, want %d\n%s%s", tc.failOn, tc.base, tc.head, r.code, tc.code, r.stdout, r.stderr)
		}
	}
	if r := invoke(t, env, "compare", "broken", head); r.code != ExitUsage || !strings.Contains(r.stderr, "the same suite") {
		t.Errorf("compare a suite with itself: %+v", r)
	}

	// Every format.
	r = invoke(t, env, "compare", "main", head)
	for _, want := range []string{"compare " + head + " (head) with " + base + " (base)", "pass rate  2/2 (100%, 34–100%)", "REGRESSED  fix-greeting",
		"first failing check: greeting-changed", "1 regressed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, r.stdout)
		}
	}
	r = invoke(t, env, "compare", "--format", "json", "main", head)
	var got struct {
		Base, Head string
		Classes    map[string]int
		Fails      map[string]bool
		Rows       []struct {
			Scenario, Class string
			Head            struct {
				Run          string
				FirstFailure string `json:"first_failure"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != ExitOK {
		t.Fatalf("json: %v %+v", err, r)
	}
	if got.Base != base || got.Classes["regressed"] != 1 || !got.Fails["regression"] || got.Fails["none"] || len(got.Rows) != 1 ||
		got.Rows[0].Head.FirstFailure != "greeting-changed" || got.Rows[0].Head.Run == "" {
		t.Fatalf("json: %+v", got)
	}
	r = invoke(t, env, "compare", "--format", "junit", "--fail-on", "regression", "main", head)
	var ju struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Type string `xml:"type,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &ju); err != nil || r.code != ExitProblems || ju.Tests != 1 || ju.Failures != 1 || ju.Cases[0].Failure.Type != "regressed" {
		t.Fatalf("junit: %v %+v %+v", err, ju, r)
	}
	r = invoke(t, env, "compare", "--format", "markdown", "main", same)
	if r.code != ExitOK || !strings.Contains(r.stdout, "### ✅ proctor") || !strings.Contains(r.stdout, "**no change**") {
		t.Fatalf("markdown unchanged: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "cmp.json")
	if r = invoke(t, env, "compare", "--format", "json", "--out", out, "main", head); r.code != ExitOK || r.stdout != "" || !strings.Contains(r.stderr, "1 regressed") {
		t.Fatalf("--out: %+v", r)
	}
	if b, err := os.ReadFile(out); err != nil || !json.Valid(b) {
		t.Fatalf("--out file: %v", err)
	}
}

func TestCompareRefusesBadInput(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"compare", "one"}, "name two suites, BASE and HEAD; got 1"},
		{[]string{"compare", "--fail-on", "sometimes", "a", "b"}, `--fail-on: want one of none, regression, flaky, any; got "sometimes"`},
		{[]string{"compare", "--format", "html", "a", "b"}, `--format: want one of text, json, junit, markdown; got "html"`},
		{[]string{"compare", "--url", "proctor.lan", "a", "b"}, `--url "proctor.lan": give the dashboard's http:// or https:// address`},
		{[]string{"compare", "../etc", "b"}, `BASE: "../etc" is neither a baseline nor a suite id`},
		{[]string{"compare", "a", "b"}, "has no index"},
		{[]string{"baseline", "set", "../main", "suite-1"}, `baseline name "../main": use letters, digits`},
		{[]string{"baseline", "set", "main"}, "takes 2 argument(s), got 1"},
		{[]string{"baseline", "rm", "nope"}, `no baseline is called "nope"`},
		{[]string{"baseline", "move"}, `unknown verb "move"`},
		{[]string{"scenario", "run", "--fail-on", "regression", "x"}, "give --baseline NAME too"},
		{[]string{"scenario", "run", "--baseline", "../x", "x"}, `--baseline: "../x" is neither a baseline nor a suite id`},
		{[]string{"scenario", "run", "--set-baseline", "a/b", "x"}, `--set-baseline "a/b"`},
	}
	for _, tc := range cases {
		r := invoke(t, env, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// An index that lacks a suite names it.
	in := t.TempDir()
	invoke(t, env, "scenario", "new", "--in", in, "s")
	if r := invoke(t, env, "scenario", "run", filepath.Join(in, "s"), "--set-baseline", "main"); r.code != ExitOK {
		t.Fatalf("run: %+v", r)
	}
	if r := invoke(t, env, "compare", "main", "suite-nope"); r.code != ExitUsage || !strings.Contains(r.stderr, "no run of suite suite-nope is indexed") {
		t.Fatalf("unknown suite: %+v", r)
	}
	// A baselines file that is not JSON is named, with what to do.
	os.WriteFile(filepath.Join(data, "baselines.json"), []byte("{"), 0o644)
	if r := invoke(t, env, "compare", "main", "x"); r.code != ExitUsage || !strings.Contains(r.stderr, "baselines.json") || !strings.Contains(r.stderr, "fix the file") {
		t.Fatalf("bad baselines file: %+v", r)
	}
}

// A scenario that became flaky fails --fail-on flaky and any, not
// regression; one that still fails only any. Its suites are bundles
// indexed with proctor index.
func TestCompareFailsOnFlakyAndStillFailing(t *testing.T) {
	data, root := t.TempDir(), t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	n := 0
	write := func(suite, scenario string, passes ...bool) {
		for k, passed := range passes {
			n++
			id := fmt.Sprintf("20261206-cli-%04d", n)
			dir := filepath.Join(root, "runs", id)
			os.MkdirAll(dir, 0o755)
			start := time.Date(2026, 12, 6, 9, 0, n, 0, time.UTC)
			end := start.Add(time.Second)
			r := &bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindScenario, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
				Task: "t", Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: "m"}, StartedAt: start, EndedAt: &end,
				Scenario: &bundle.ScenarioRef{ID: scenario, Repeat: k + 1, Suite: suite}}
			if err := bundle.WriteReceipt(dir, r); err != nil {
				t.Fatal(err)
			}
			if err := bundle.WriteJSON(filepath.Join(dir, bundle.VerdictFile), &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: passed, Results: []bundle.CheckResult{}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("suite-a", "steady", true, true)
	write("suite-b", "steady", true, false) // newly flaky
	write("suite-c", "steady", false, false)
	write("suite-d", "steady", false, false) // still failing, from c
	if r := invoke(t, env, "index", root); r.code != ExitOK {
		t.Fatalf("index: %+v", r)
	}
	for _, tc := range []struct {
		base, head, failOn string
		code               int
	}{
		{"suite-a", "suite-b", "regression", ExitOK},
		{"suite-a", "suite-b", "flaky", ExitProblems},
		{"suite-a", "suite-b", "any", ExitProblems},
		{"suite-c", "suite-d", "regression", ExitOK},
		{"suite-c", "suite-d", "flaky", ExitOK},
		{"suite-c", "suite-d", "any", ExitProblems},
	} {
		r := invoke(t, env, "compare", "--fail-on", tc.failOn, tc.base, tc.head)
		if r.code != tc.code {
			t.Errorf("compare --fail-on %s %s %s: exit %d, want %d\n%s%s", tc.failOn, tc.base, tc.head, r.code, tc.code, r.stdout, r.stderr)
		}
	}
	if r := invoke(t, env, "compare", "suite-a", "suite-b"); !strings.Contains(r.stdout, "NEWLY FLAKY  steady") || !strings.Contains(r.stdout, "1 newly flaky") {
		t.Errorf("text: %s", r.stdout)
	}
}

func TestExportARunAsOneHTMLFile(t *testing.T) {
	env := map[string]string{"PROCTOR_DATA": t.TempDir()}
	if r := invoke(t, env, "index", "../../testdata/bundles"); r.code != ExitOK {
		t.Fatalf("index: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "run.html")
	if r := invoke(t, env, "export", "20261201-093012-k3f9qa", "--html", out); r.code != ExitOK || !strings.Contains(r.stdout, "wrote run 20261201-093012-k3f9qa to "+out) {
		t.Fatalf("export: %+v", r)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), "math.Round") || strings.Contains(string(page), "<script") {
		t.Fatalf("the file: %v %.300s", err, page)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "20261201-093012-k3f9qa"}, "name one RUN_ID and --html FILE"},
		{[]string{"export", "../x", "--html", out}, `"../x" is not a run id`},
		{[]string{"export", "nope", "--html", out}, "no run nope is indexed"},
	} {
		if r := invoke(t, env, tc.args...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
