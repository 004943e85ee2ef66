package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
)

// runsIn are the run ids of a data folder.
func runsIn(t *testing.T, data string) []string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(data, "runs"))
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// newRun is the one run of after that is not in before.
func newRun(t *testing.T, before, after []string) string {
	t.Helper()
	var found []string
	for _, r := range after {
		if !strings.Contains(strings.Join(before, " "), r) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one new run, got %v", found)
	}
	return found[0]
}

// Every example scenario's run, made a scenario again, passes offline, and
// under proctor's own agent reproduces the run's diff byte for byte: the
// fixture, the turns, the yield reply, the approvals and the replies as
// intents are the run's. The scenario made passes `scenario prove`, and
// `scenario list` names the run it was made from.
func TestAScenarioMadeFromARunReproducesIt(t *testing.T) {
	examples, _ := filepath.Abs("../../examples/scenarios")
	data, out := t.TempDir(), t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if r := invoke(t, env, "scenario", "run", "--sandbox", "off", examples); r.code != 0 {
		t.Fatalf("the examples: %+v", r)
	}
	originals := runsIn(t, data)
	if len(originals) != 5 {
		t.Fatalf("want 5 example runs, got %v", originals)
	}
	for _, id := range originals {
		dir := filepath.Join(out, "from-"+id)
		r := invoke(t, env, "scenario", "from", id, "--out", dir)
		if r.code != 0 || !strings.Contains(r.stdout, "made scenario from-"+id) {
			t.Fatalf("scenario from %s: %+v", id, r)
		}
		before := runsIn(t, data)
		if r := invoke(t, env, "scenario", "run", "--sandbox", "off", dir); r.code != 0 {
			t.Fatalf("the scenario made from %s fails:\n%s%s", id, r.stdout, r.stderr)
		}
		again := newRun(t, before, runsIn(t, data))
		want, _ := os.ReadFile(filepath.Join(data, "runs", id, "diff.patch"))
		got, _ := os.ReadFile(filepath.Join(data, "runs", again, "diff.patch"))
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: the scenario's run changed\n%s\nthe run changed\n%s", id, got, want)
		}
	}
	one := filepath.Join(out, "from-"+originals[0])
	if r := invoke(t, env, "scenario", "prove", one); r.code != 0 {
		t.Errorf("scenario prove of a scenario made from a run: %+v", r)
	}
	if r := invoke(t, env, "scenario", "list", out); !strings.Contains(r.stdout, "MADE FROM") || !strings.Contains(r.stdout, originals[0]) {
		t.Errorf("scenario list does not name the runs scenarios were made from:\n%s", r.stdout)
	}
	// A folder that exists already is not overwritten, and a bad name,
	// a run that is not there and a run id that is a path are refused.
	for _, args := range [][]string{
		{"scenario", "from", originals[0], "--out", one},
		{"scenario", "from", originals[0], "--out", filepath.Join(out, "bad name!")},
		{"scenario", "from", "20990101-000000-nosuch", "--out", filepath.Join(out, "x")},
		{"scenario", "from", "../../etc", "--out", filepath.Join(out, "y")},
		{"scenario", "from", originals[0]},
	} {
		if r := invoke(t, env, args...); r.code == 0 {
			t.Errorf("%v was taken: %+v", args, r)
		}
	}
	for _, name := range []string{"bad name!", "x", "y"} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("a refused scenario left %s", name)
		}
	}
}

// A run whose hunk the reviewer edited before applying it makes a scenario
// that checks the edit: the agent's own content fails it, the reviewer's
// passes. A file that looks secret is left out of the fixture and named,
// and a secret of the environment is in no file made.
func TestAScenarioMadeFromAnEditedReviewChecksTheEdit(t *testing.T) {
	const secret = "planted-s3cret-9f2c71"
	t.Setenv("DEPLOY_TOKEN", secret)
	data, src, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n", ".env": "DEPLOY_TOKEN=" + secret + "\n", "config.txt": "token " + secret + "\n", "b.txt": "keep\n"})
	writeTree(t, dir, map[string]string{"model.yaml": `steps:
  - reply: {content: "I will use ` + secret + `", tool_calls: [{name: write_file, arguments: {path: a.txt, content: "agent\n"}}]}
  - reply: {content: done}
`})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	if r := invoke(t, env, "run", "--dir", src, "--task", "write a.txt; the token is "+secret, "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off"); r.code != 0 {
		t.Fatalf("the run: %+v", r)
	}
	id := runsIn(t, data)[0]
	runDir := filepath.Join(data, "runs", id)
	edited := "reviewer"
	_, err := gate.Review(context.Background(), runDir, gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "test", Parts: []patch.Choice{{File: 0, Hunk: 0, Accept: true, Edit: &edited}}}, nil
	}), gate.Options{Workspace: filepath.Join(runDir, "workspace")})
	if err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(out, "edited")
	r := invoke(t, env, "scenario", "from", id, "--out", scen)
	if r.code != 0 || !strings.Contains(r.stdout, ".env (looks like a secret)") || !strings.Contains(r.stdout, "config.txt (holds a secret of the environment)") {
		t.Fatalf("scenario from: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(scen, "expected", "a.txt")); string(got) != "reviewer\n" {
		t.Fatalf("expected/a.txt is %q, want the reviewer's edit", got)
	}
	filepath.WalkDir(scen, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if raw, _ := os.ReadFile(p); bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s holds the environment's secret", p)
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(scen, "fixture", ".env")); err == nil {
		t.Error("the fixture holds .env")
	}
	if r := invoke(t, env, "scenario", "run", "--sandbox", "off", scen); r.code != 1 || !strings.Contains(r.stdout, "a.txt differs from expected/a.txt") {
		t.Fatalf("the agent's own content passed a scenario made from an edited review: %+v", r)
	}
	script := filepath.Join(scen, "model.yaml")
	raw, _ := os.ReadFile(script)
	os.WriteFile(script, bytes.Replace(raw, []byte("  agent\n"), []byte("  reviewer\n"), 1), 0o644)
	if r := invoke(t, env, "scenario", "run", "--sandbox", "off", scen); r.code != 0 {
		t.Fatalf("the reviewer's content fails the scenario:\n%s\n%s", r.stdout, raw)
	}
}

// A session of two runs — the second a reviewer's Request changes — makes
// one two-turn scenario: the request is its second turn, the replies of
// both runs its script, and the file as the second run left it its check.
func TestASessionMakesAMultiTurnScenario(t *testing.T) {
	data, src, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{
		"one.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\n\"}}]}\n  - reply: {content: done}\n",
		"two.yaml": "steps:\n  - expect: {last_contains: two}\n    reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"two\\n\"}}]}\n  - reply: {content: done again}\n",
	})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	if r := invoke(t, env, "run", "--dir", src, "--task", "write one into a.txt", "--script", filepath.Join(dir, "one.yaml"), "--sandbox", "off"); r.code != 0 {
		t.Fatalf("the first run: %+v", r)
	}
	first := runsIn(t, data)[0]
	if r := invoke(t, env, "review", "--request-changes", "Make it two, please.", "--script", filepath.Join(dir, "two.yaml"), "--sandbox", "off", first); r.code != 0 {
		t.Fatalf("request changes: %+v", r)
	}
	scen := filepath.Join(out, "two-turns")
	r := invoke(t, env, "scenario", "from", "sess-"+first, "--out", scen)
	if r.code != 0 || !strings.Contains(r.stdout, "(2 runs)") || !strings.Contains(r.stdout, "2 turns") {
		t.Fatalf("scenario from the session: %+v", r)
	}
	raw, _ := os.ReadFile(filepath.Join(scen, "scenario.yaml"))
	if !strings.Contains(string(raw), "turns:") || !strings.Contains(string(raw), "Make it two, please.") {
		t.Fatalf("the request is not the second turn:\n%s", raw)
	}
	if got, _ := os.ReadFile(filepath.Join(scen, "expected", "a.txt")); string(got) != "two\n" {
		t.Fatalf("expected/a.txt is %q, want the second run's", got)
	}
	if r := invoke(t, env, "scenario", "run", "--sandbox", "off", scen); r.code != 0 {
		t.Fatalf("the two-turn scenario fails:\n%s%s\n%s", r.stdout, r.stderr, raw)
	}
}

// A bundle is hostile input: a diff that names a path outside the
// workspace makes no scenario, and nothing is written outside the folder.
func TestAHostileDiffMakesNoScenario(t *testing.T) {
	data, src, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n"})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	if r := invoke(t, env, "run", "--dir", src, "--task", "t", "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off"); r.code != 0 {
		t.Fatalf("the run: %+v", r)
	}
	id := runsIn(t, data)[0]
	// Over the size bound: nothing is made, and the error says which flag.
	if r := invoke(t, env, "scenario", "from", id, "--out", filepath.Join(out, "scen", "big"), "--max-bytes", "3"); r.code == 0 || !strings.Contains(r.stderr, "--max-bytes") {
		t.Fatalf("a fixture over --max-bytes: %+v", r)
	}
	hostile := "diff --git a/../../escape.txt b/../../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../../escape.txt\n@@ -0,0 +1 @@\n+pwned\n"
	os.WriteFile(filepath.Join(data, "runs", id, "diff.patch"), []byte(hostile), 0o644)
	r := invoke(t, env, "scenario", "from", id, "--out", filepath.Join(out, "scen", "hostile"))
	if r.code == 0 || !strings.Contains(r.stderr, "outside the workspace") {
		t.Fatalf("a hostile diff made a scenario: %+v", r)
	}
	for _, p := range []string{filepath.Join(out, "escape.txt"), filepath.Join(out, "scen", "escape.txt"), filepath.Join(out, "scen", "hostile"), filepath.Join(out, "scen", "big")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(out, "scen", ".*")); len(left) != 0 {
		t.Errorf("a refused scenario left %v", left)
	}
}

// A run of a git source makes a scenario of that source pinned to the
// run's commit, with no fixture copied, and it passes.
func TestAGitSourceStaysAGitSource(t *testing.T) {
	data, repo, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, repo, map[string]string{"a.txt": "old\n"})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n"})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	if r := invoke(t, env, "run", "--repo", "file://"+repo, "--task", "t", "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off"); r.code != 0 {
		t.Fatalf("the run: %+v", r)
	}
	id := runsIn(t, data)[0]
	scen := filepath.Join(out, "from-git")
	if r := invoke(t, env, "scenario", "from", id, "--out", scen); r.code != 0 {
		t.Fatalf("scenario from: %+v", r)
	}
	raw, _ := os.ReadFile(filepath.Join(scen, "scenario.yaml"))
	head, _ := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if !strings.Contains(string(raw), "repo: file://"+repo) || !strings.Contains(string(raw), "commit: "+strings.TrimSpace(string(head))) {
		t.Fatalf("the scenario does not pin the source:\n%s", raw)
	}
	if _, err := os.Stat(filepath.Join(scen, "fixture")); err == nil {
		t.Fatal("a git source's scenario has a fixture folder too")
	}
	if r := invoke(t, env, "scenario", "run", scen); r.code != 0 {
		t.Fatalf("the scenario of a git source fails:\n%s%s", r.stdout, r.stderr)
	}
}

// A secret the run did not know of (its environment lacked it) is in its
// bundle as it was written; `scenario from`, run where the secret is in
// the environment, writes it into no file — not the task, the agent's
// words, its commands, the files it wrote, the checks or the fixture.
func TestScenarioFromRedactsEveryTextItWrites(t *testing.T) {
	const secret = "late-s3cret-7e41d0b2"
	data, src, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "old " + secret + "\n", "b.txt": "keep\n"})
	writeTree(t, dir, map[string]string{"model.yaml": `steps:
  - reply: {content: "I will use ` + secret + `", tool_calls: [{name: run_command, arguments: {command: "echo ` + secret + `"}}]}
  - reply: {tool_calls: [{name: write_file, arguments: {path: c.txt, content: "new ` + secret + `\n"}}]}
  - reply: {tool_calls: [{name: edit_file, arguments: {path: a.txt, old: "old ` + secret + `", new: "edited ` + secret + `"}}]}
  - reply: {tool_calls: [{name: ask_user, arguments: {question: "is ` + secret + ` right?"}}]}
  - reply: {content: "done with ` + secret + `"}
`})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	r := invoke(t, env, "run", "--dir", src, "--task", "use "+secret, "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off",
		"--allow", "echo", "--check", "test -n "+secret, "--approve", "policy")
	if r.code != 0 {
		t.Fatalf("the run: %+v", r)
	}
	id := runsIn(t, data)[0]
	if raw, _ := os.ReadFile(filepath.Join(data, "runs", id, bundle.TranscriptFile)); !bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the run's transcript does not hold the secret: the test proves nothing")
	}
	t.Setenv("DEPLOY_TOKEN", secret)
	scen := filepath.Join(out, "late")
	if r := invoke(t, env, "scenario", "from", id, "--out", scen); r.code != 0 {
		t.Fatalf("scenario from: %+v", r)
	}
	files := 0
	filepath.WalkDir(scen, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
			if raw, _ := os.ReadFile(p); bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s holds the secret:\n%s", p, raw)
			}
		}
		return nil
	})
	if files < 3 {
		t.Fatalf("scenario from made %d files", files)
	}
}

// `scenario from` leaves out of the fixture every file that holds a
// login or a secret — by its name (Docker's and kubectl's logins, .envrc,
// .htpasswd, ssh keys…) or by its content (a literal password) — and
// lists each; ordinary source that reads a token from the environment is
// kept.
func TestScenarioFromLeavesOutSecretFiles(t *testing.T) {
	data, src, dir, out := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	secrets := map[string]string{
		".docker/config.json":   `{"auths": {"registry.example.com": {"auth": "dXNlcjpwYXNz"}}}`,
		"kubeconfig":            "apiVersion: v1\nusers:\n- name: ci\n  user: {token: abc123}\n",
		".kube/config":          "apiVersion: v1\n",
		".envrc":                "export AWS_SECRET_ACCESS_KEY=abc123\n",
		"web/.htpasswd":         "admin:$apr1$x$y\n",
		"config.ini":            "[db]\nhost=localhost\nPASSWORD=hunter2\n",
		"app/settings_local.py": "SECRET_KEY = 'django-insecure-8f2k1x0q'\n",
		".pgpass":               "localhost:5432:*:app:pw1\n",
		".git-credentials":      "https://x:tok1@example.com\n",
		"deploy/id_ed25519":     "-----BEGIN OPENSSH PRIVATE KEY-----\n",
	}
	kept := map[string]string{
		"a.txt":           "old\n",
		"main.go":         "package main\n\nimport \"os\"\n\nvar token = os.Getenv(\"TOKEN\")\n",
		"app/settings.py": "SECRET_KEY = os.environ[\"SECRET_KEY\"]\n",
		"docs/setup.md":   "Put PASSWORD=... in config.ini\n",
	}
	writeTree(t, src, secrets)
	writeTree(t, src, kept)
	writeTree(t, dir, map[string]string{"model.yaml": commandScript})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	if r := invoke(t, env, "run", "--dir", src, "--task", "touch", "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off", "--allow", "touch"); r.code != 0 {
		t.Fatalf("the run: %+v", r)
	}
	scen := filepath.Join(out, "secrets")
	r := invoke(t, env, "scenario", "from", runsIn(t, data)[0], "--out", scen)
	if r.code != 0 {
		t.Fatalf("scenario from: %+v", r)
	}
	for p := range secrets {
		if _, err := os.Lstat(filepath.Join(scen, "fixture", filepath.FromSlash(p))); err == nil {
			t.Errorf("the fixture holds %s", p)
		}
		if !strings.Contains(r.stdout, p+" (") {
			t.Errorf("scenario from does not say it left out %s:\n%s", p, r.stdout)
		}
	}
	for p := range kept {
		if _, err := os.Stat(filepath.Join(scen, "fixture", filepath.FromSlash(p))); err != nil {
			t.Errorf("the fixture lacks the ordinary file %s", p)
		}
	}
}
