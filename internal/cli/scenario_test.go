package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestScenarioCommands(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	in := t.TempDir()
	if r := invoke(t, env, "scenario", "new", "--in", in, "fix-greeting"); r.code != ExitOK || !strings.Contains(r.stdout, "created") {
		t.Fatalf("new: %+v", r)
	}
	if r := invoke(t, env, "scenario", "new", "--in", in, "fix-greeting"); r.code != ExitUsage || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("new twice: %+v", r)
	}
	dir := filepath.Join(in, "fix-greeting")
	r := invoke(t, env, "scenario", "prove", dir)
	if r.code != ExitOK || strings.Count(r.stdout, "ok  ") != 5 {
		t.Fatalf("prove: %+v", r)
	}
	if r = invoke(t, env, "scenario", "list", in); r.code != ExitOK || !strings.Contains(r.stdout, "fix-greeting") {
		t.Fatalf("list: %+v", r)
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	r = invoke(t, env, "scenario", "run", dir, "--repeat", "2", "--junit", junit)
	if r.code != ExitOK || !strings.Contains(r.stdout, "2 passed, 0 failed, 0 broken") {
		t.Fatalf("run: %+v", r)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Fatal("no JUnit file")
	}
	runID := regexp.MustCompile(`runs/(\S+)`).FindStringSubmatch(r.stdout)[1]
	// proctor check re-runs the checks; editing the workspace makes one fail.
	if r = invoke(t, env, "check", runID); r.code != ExitOK || !strings.Contains(r.stdout, "PASS post.greeting-changed") {
		t.Fatalf("check: %+v", r)
	}
	os.WriteFile(filepath.Join(data, "runs", runID, "workspace", "greeting.txt"), []byte("bye\n"), 0o644)
	if r = invoke(t, env, "check", "--check", "greeting-changed", runID); r.code != ExitProblems || !strings.Contains(r.stdout, "FAIL post.greeting-changed") {
		t.Fatalf("check after edit: %+v", r)
	}
	if r = invoke(t, env, "check", "--check", "nope", runID); r.code != ExitUsage || !strings.Contains(r.stderr, "has no check \"nope\"") {
		t.Fatalf("check unknown: %+v", r)
	}
	// A vacuous scenario fails prove, naming the rule and the file.
	os.WriteFile(filepath.Join(dir, "fixture", "greeting.txt"), []byte("hello, world\n"), 0o644)
	r = invoke(t, env, "scenario", "prove", dir)
	if r.code != ExitProblems || !strings.Contains(r.stdout, "FAIL fix-greeting not-vacuous: "+filepath.Join(dir, "scenario.yaml")) {
		t.Fatalf("prove vacuous: %+v", r)
	}
	if r = invoke(t, env, "scenario", "run", filepath.Join(in, "missing")); r.code != ExitUsage {
		t.Fatalf("run missing: %+v", r)
	}
}

// scenario run --pack records every run in one pack file, indexed; the
// runs are checked, listed and exported like runs in folders.
func TestScenarioRunPack(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	in := t.TempDir()
	if r := invoke(t, env, "scenario", "new", "--in", in, "fix-greeting"); r.code != ExitOK {
		t.Fatalf("new: %+v", r)
	}
	r := invoke(t, env, "scenario", "run", "--pack", "--repeat", "3", "--parallel", "2", in)
	if r.code != ExitOK || !strings.Contains(r.stdout, "3 passed, 0 failed, 0 broken") {
		t.Fatalf("run --pack: %+v", r)
	}
	m := regexp.MustCompile(`(\S+\.tar)#(\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no packed bundle named in:\n%s", r.stdout)
	}
	pack, runID := m[1], m[2]
	if filepath.Dir(pack) != filepath.Join(data, "runs") {
		t.Fatalf("pack at %s", pack)
	}
	entries, _ := os.ReadDir(filepath.Join(data, "runs"))
	if len(entries) != 1 {
		t.Fatalf("runs/ holds %d entries, want the pack alone", len(entries))
	}
	if r = invoke(t, env, "check", runID); r.code != ExitOK || !strings.Contains(r.stdout, "PASS post.greeting-changed") {
		t.Fatalf("check a packed run: %+v", r)
	}
	if r = invoke(t, env, "script", "export", runID); r.code != ExitOK || !strings.Contains(r.stdout, "steps:") {
		t.Fatalf("export a packed run: %+v", r)
	}
	// Rebuilding the index finds the three runs in the pack.
	if r = invoke(t, env, "index", "--rebuild", filepath.Join(data, "runs")); r.code != ExitOK || !strings.Contains(r.stdout, "indexed 3,") || !strings.Contains(r.stdout, "problems 0") {
		t.Fatalf("index --rebuild: %+v", r)
	}
}

// --quiet prints only what did not pass, then the summary.
func TestScenarioRunQuiet(t *testing.T) {
	env := map[string]string{"PROCTOR_DATA": t.TempDir()}
	r := invoke(t, env, "scenario", "run", "--quiet", "../../examples/scenarios/multi-turn", "../../testdata/scenarios/fails-scope")
	if r.code != ExitProblems {
		t.Fatalf("run: %+v", r)
	}
	for _, want := range []string{"FAIL post.", "verdict fails-scope #1: failed", "1 passed, 1 failed, 0 broken", "multi-turn"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("quiet output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, unwanted := range []string{"verdict multi-turn"} {
		if strings.Contains(r.stdout, unwanted) {
			t.Errorf("quiet output holds %q:\n%s", unwanted, r.stdout)
		}
	}
}

// A scenario whose agent ran the tests, which could not even start: the
// check that the agent ran them fails, and so does the verdict (it passed
// when a call counted whatever became of it). Asked for, a failed call
// counts.
func TestAVerdictDoesNotPassOnACommandThatFailed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tests-cannot-start")
	writeTree(t, dir, map[string]string{
		"fixture/notes.txt": "one\n",
		"scenario.yaml": "id: tests-cannot-start\ntask: Run the tests.\napprovals:\n  default: deny\n  rules:\n    - {tool: run_command, args: '^ls'}\n" +
			"checks:\n  - {name: ran-the-tests, kind: tool_called, tool: run_command, args: ls tests}\n" +
			"  - {name: tried-the-tests, kind: tool_called, tool: run_command, args: ls tests, succeeded: false}\n" +
			"  - {name: notes-kept, kind: file_exists, path: notes.txt}\n",
		"model.yaml": "steps:\n  - reply: {tool_calls: [{run: ls tests}]}\n  - expect: {last_role: tool, last_contains: exit 2}\n    reply: {content: The tests ran.}\n",
	})
	r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir(), "PATH": os.Getenv("PATH")}, "scenario", "run", "--sandbox", "off", dir)
	if r.code != ExitProblems || !strings.Contains(r.stdout, "FAIL post.ran-the-tests: run_command with arguments matching /ls tests/ called 1 time(s), 0 succeeded (exit 2)") ||
		!strings.Contains(r.stdout, "PASS post.tried-the-tests") || !strings.Contains(r.stdout, "0 passed, 1 failed") {
		t.Fatalf("%+v", r)
	}
}

// scenario prove --data keeps the solvable run in that data folder,
// indexed, and says where; without it the run goes with a scratch folder.
func TestProveKeepsItsRunsWithData(t *testing.T) {
	data := t.TempDir()
	r := invoke(t, nil, "scenario", "prove", "--data", data, "../../examples/scenarios/rename-config-key")
	m := regexp.MustCompile(`solvable: the scripted run passes every check \(run (\S+)\)`).FindStringSubmatch(r.stdout)
	if r.code != ExitOK || m == nil || !strings.HasPrefix(m[1], filepath.Join(data, "runs")) {
		t.Fatalf("%+v", r)
	}
	if r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "index", filepath.Join(data, "runs")); r.code != ExitOK || !strings.Contains(r.stdout, "unchanged 1") {
		t.Fatalf("the run is not indexed: %+v", r)
	}
	r = invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir()}, "scenario", "prove", "../../examples/scenarios/rename-config-key")
	m = regexp.MustCompile(`\(run (\S+)\)`).FindStringSubmatch(r.stdout)
	if r.code != ExitOK || m == nil {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(m[1]); err == nil {
		t.Fatalf("the scratch run %s was kept", m[1])
	}
}
