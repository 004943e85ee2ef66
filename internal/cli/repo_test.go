package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// proctor run --repo works on a private repository with --token-env and
// fails clearly without it; the receipt pins the commit and tree; the token
// is nowhere in the data folder (bundles, database), stdout or stderr.
func TestRunOnAGitRepository(t *testing.T) {
	base, caEnv, commits := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	data, dir := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}]}\n  - reply: {content: Wrote b.txt.}\n"})
	env := map[string]string{"PROCTOR_DATA": data, "REPO_TOKEN": testutil.GitToken}
	args := func(more ...string) []string {
		return append([]string{"run", "--task", "Add b.txt", "--script", filepath.Join(dir, "model.yaml"), "--repo", base + "/private.git"}, more...)
	}
	receipt := func(out string) bundle.Receipt {
		t.Helper()
		i := strings.Index(out, "bundle: ")
		if i < 0 {
			t.Fatalf("no bundle in %s", out)
		}
		path := strings.TrimSpace(strings.SplitN(out[i+len("bundle: "):], "\n", 2)[0])
		var rc bundle.Receipt
		raw, _ := os.ReadFile(filepath.Join(path, bundle.ReceiptFile))
		if err := json.Unmarshal(raw, &rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}

	r := invoke(t, env, args("--token-env", "REPO_TOKEN")...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "status: awaiting review") {
		t.Fatalf("with the token: %+v", r)
	}
	rc := receipt(r.stdout)
	if rc.Source.Kind != "git" || rc.Source.Repository != base+"/private.git" || rc.Source.CommitSHA != commits["private"] || len(rc.Source.Tree) != 40 || strings.Join(rc.Changed, ",") != "b.txt" {
		t.Fatalf("source %+v changed %v", rc.Source, rc.Changed)
	}
	all := r.stdout + r.stderr

	r = invoke(t, env, args()...)
	if rc := receipt(r.stdout); r.code != ExitProblems || rc.Failure == nil || rc.Failure.Domain != bundle.DomainSource || rc.Failure.Code != "clone_failed" ||
		rc.Failure.Stage != bundle.StageAcquiringSource || !strings.Contains(rc.Failure.Message, "--token-env") {
		t.Fatalf("without the token: %+v\n%+v", r, rc.Failure)
	}
	r = invoke(t, env, args("--token-env", "REPO_TOKEN", "--commit", strings.Repeat("0", 40))...)
	if rc := receipt(r.stdout); rc.Failure == nil || rc.Failure.Code != "commit_mismatch" || rc.Failure.Retryable {
		t.Fatalf("a commit it does not have: %+v", rc.Failure)
	}
	all += r.stdout + r.stderr
	for _, tc := range []struct{ repo, ref, commit, code string }{
		{"git@example.com:o/n.git", "", "", "repository_invalid"},
		{"o/n", "a..b", "", "ref_invalid"},
		{"o/n", "", "abc", "commit_invalid"},
	} {
		a := []string{"run", "--task", "x", "--script", filepath.Join(dir, "model.yaml"), "--repo", tc.repo}
		if tc.ref != "" {
			a = append(a, "--ref", tc.ref)
		}
		if tc.commit != "" {
			a = append(a, "--commit", tc.commit)
		}
		r := invoke(t, env, a...)
		if rc := receipt(r.stdout); rc.Failure == nil || rc.Failure.Code != tc.code || rc.Failure.Domain != bundle.DomainSource {
			t.Errorf("%v: %+v", tc, rc.Failure)
		}
	}
	if r := invoke(t, env, args("--token-env", "NOT_SET")...); r.code != ExitUsage || !strings.Contains(r.stderr, "NOT_SET: the variable is not set") {
		t.Fatalf("an unset token variable: %+v", r)
	}
	if strings.Contains(all, testutil.GitToken) {
		t.Fatal("the token was printed")
	}
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), testutil.GitToken) {
				t.Errorf("the token is in %s", p)
			}
		}
		return nil
	})
	// The mirror (walked above) is listed, and pruned.
	if r := invoke(t, env, "cache", "list"); r.code != ExitOK || !strings.Contains(r.stdout, base+"/private.git") {
		t.Fatalf("cache list: %+v", r)
	}
	if r := invoke(t, env, "cache", "prune", "--older-than", "0"); r.code != ExitOK || !strings.Contains(r.stdout, "1 mirror(s) removed") {
		t.Fatalf("cache prune: %+v", r)
	}
}

// An approved git run is offered as an mbox that git am applies on the
// pinned commit, and proctor apply --to applies it to a checkout — only
// when the files it touches are as they were at that commit.
func TestAnApprovedGitRunIsOfferedAndAppliedToACheckout(t *testing.T) {
	g := newGitRun(t, "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"three\\n\"}}]}\n  - reply: {content: Changed a.txt.}\n")
	env, base, runID, rn, git := g.env, g.base, g.runID, g.rn, g.git
	checkout := filepath.Join(t.TempDir(), "checkout")
	git("", "clone", "-q", base+"/public.git", checkout)

	if r := invoke(t, env, "apply", "--to", checkout, runID); r.code != ExitUsage || !strings.Contains(r.stderr, "not reviewed yet") {
		t.Fatalf("apply --to before a review, without a terminal: %+v", r)
	}
	if rv := g.review(gate.Verdict{Approved: true, By: "Dana", Reason: "good"}); !rv.Approved || rv.Applied {
		t.Fatalf("the review of a git run: %+v (approved, applied nowhere)", rv)
	}

	mbox, err := rn.Records().Mbox(context.Background(), runID)
	if err != nil || !strings.Contains(string(mbox), "Subject: [PATCH] Make a.txt say three") {
		t.Fatalf("mbox: %v\n%s", err, mbox)
	}
	am := filepath.Join(t.TempDir(), "am")
	git("", "clone", "-q", base+"/public.git", am)
	os.WriteFile(filepath.Join(am, "change.mbox"), mbox, 0o644)
	git(am, "am", "-q", "change.mbox")
	if got, _ := os.ReadFile(filepath.Join(am, "a.txt")); string(got) != "three\n" || !strings.Contains(git(am, "log", "-1", "--format=%s%n%b"), "approved by Dana") {
		t.Fatalf("after git am: a.txt %q", got)
	}

	os.WriteFile(filepath.Join(checkout, "a.txt"), []byte("mine\n"), 0o644)
	if r := invoke(t, env, "apply", "--to", checkout, runID); r.code == ExitOK || !strings.Contains(r.stderr, "a.txt changed in") {
		t.Fatalf("apply --to over a local change: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(checkout, "a.txt")); string(got) != "mine\n" {
		t.Fatalf("a refused apply changed a.txt: %q", got)
	}
	git(checkout, "checkout", "--", "a.txt")
	if r := invoke(t, env, "apply", "--to", checkout, runID); r.code != ExitOK || !strings.Contains(r.stdout, "applied to") {
		t.Fatalf("apply --to: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(checkout, "a.txt")); string(got) != "three\n" {
		t.Fatalf("after apply --to: a.txt %q", got)
	}
}

// A scenario may start from a git repository (source:), private ones read
// with the token of their host from sources.yaml; the token goes to no
// other host and is nowhere in the data folder or the output.
func TestAScenarioStartsFromAPrivateRepositoryWithSourcesYAML(t *testing.T) {
	base, caEnv, commits := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	host := strings.TrimPrefix(base, "https://")
	data, dir, cfg := t.TempDir(), filepath.Join(t.TempDir(), "from-git"), t.TempDir()
	writeTree(t, dir, map[string]string{
		"scenario.yaml": "id: from-git\ntask: Make a.txt say three\nsource:\n  repo: " + base + "/private.git\n  commit: " + commits["private-first"] + "\n" +
			"checks:\n  - {kind: file_contains, path: a.txt, text: three}\n",
		"model.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"three\\n\"}}]}\n  - reply: {content: Done.}\n",
	})
	writeTree(t, cfg, map[string]string{"sources.yaml": "sources:\n  - host: \"" + host + "\"\n    token_env: PRIVATE_GIT_TOKEN\n"})
	env := map[string]string{"PROCTOR_DATA": data, "PRIVATE_GIT_TOKEN": testutil.GitToken, "PROCTOR_SOURCES": filepath.Join(cfg, "sources.yaml")}
	r := invoke(t, env, "scenario", "run", dir)
	if r.code != ExitOK || !strings.Contains(r.stdout, "from-git") {
		t.Fatalf("scenario run: %+v", r)
	}
	receipts, _ := filepath.Glob(filepath.Join(data, "runs", "*", bundle.ReceiptFile))
	var rc bundle.Receipt
	raw, _ := os.ReadFile(receipts[0])
	json.Unmarshal(raw, &rc)
	verdict, _ := os.ReadFile(filepath.Join(filepath.Dir(receipts[0]), bundle.VerdictFile))
	if rc.Source.Kind != "git" || rc.Source.CommitSHA != commits["private-first"] || !strings.Contains(string(verdict), `"passed": true`) {
		t.Fatalf("receipt: source %+v failure %+v\nverdict %s", rc.Source, rc.Failure, verdict)
	}
	if strings.Contains(r.stdout+r.stderr, testutil.GitToken) {
		t.Fatal("the token was printed")
	}
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), testutil.GitToken) {
				t.Errorf("the token is in %s", p)
			}
		}
		return nil
	})
	// Without the variable, sources.yaml is refused before anything runs.
	delete(env, "PRIVATE_GIT_TOKEN")
	if r := invoke(t, env, "scenario", "run", dir); r.code != ExitUsage || !strings.Contains(r.stderr, "token_env PRIVATE_GIT_TOKEN (for "+host+") is not set") {
		t.Fatalf("an unset token variable: %+v", r)
	}
}

// A git run approved part by part offers only the accepted parts: the
// mbox, apply --to and the run's accepted.patch hold them, not the rest.
func TestAGitRunApprovedPartByPartOffersOnlyTheAcceptedParts(t *testing.T) {
	g := newGitRun(t, "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"three\\n\"}}, {name: write_file, arguments: {path: b.txt, content: \"not wanted\\n\"}}]}\n  - reply: {content: Changed a.txt and b.txt.}\n")
	// The files of the diff in path order: a.txt (0), b.txt (1, new: a whole file).
	rv := g.review(gate.Verdict{Approved: true, By: "Dana", Parts: []patch.Choice{{File: 0, Hunk: 0, Accept: true}, {File: 1, Hunk: patch.Whole, Accept: false}}})
	if !rv.Approved || rv.Applied || len(rv.AppliedParts) != 1 || rv.AppliedParts[0].Path != "a.txt" || len(rv.RejectedParts) != 1 || rv.RejectedParts[0].Path != "b.txt" {
		t.Fatalf("review = %+v", rv)
	}
	runDir, _ := g.rn.Records().RunDir(g.runID)
	accepted, err := os.ReadFile(filepath.Join(runDir, bundle.AcceptedFile))
	if err != nil || !strings.Contains(string(accepted), "+three") || strings.Contains(string(accepted), "b.txt") {
		t.Fatalf("accepted.patch: %v\n%s", err, accepted)
	}
	mbox, err := g.rn.Records().Mbox(context.Background(), g.runID)
	if err != nil || !strings.Contains(string(mbox), "+three") || strings.Contains(string(mbox), "not wanted") {
		t.Fatalf("mbox: %v\n%s", err, mbox)
	}
	checkout := filepath.Join(t.TempDir(), "checkout")
	g.git("", "clone", "-q", g.base+"/public.git", checkout)
	// b.txt is not part of the offered change, so a local b.txt is no conflict.
	os.WriteFile(filepath.Join(checkout, "b.txt"), []byte("mine\n"), 0o644)
	if r := invoke(t, g.env, "apply", "--to", checkout, g.runID); r.code != ExitOK || !strings.Contains(r.stdout, "applied to "+checkout+": a.txt\n") {
		t.Fatalf("apply --to: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(checkout, "a.txt")); string(got) != "three\n" {
		t.Fatalf("after apply --to: a.txt %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(checkout, "b.txt")); string(got) != "mine\n" {
		t.Fatalf("after apply --to: b.txt %q", got)
	}
}

// gitRun is a finished run on the test git server's public repository.
type gitRun struct {
	t     *testing.T
	env   map[string]string
	base  string // the git server's URL
	runID string
	rn    *run.Runner
}

// newGitRun runs the model script on a clone of public.git.
func newGitRun(t *testing.T, script string) *gitRun {
	t.Helper()
	base, caEnv, _ := testutil.GitServer(t)
	k, v, _ := strings.Cut(caEnv[0], "=")
	t.Setenv(k, v)
	data, dir := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": script})
	env := map[string]string{"PROCTOR_DATA": data}
	r := invoke(t, env, "run", "--task", "Make a.txt say three", "--script", filepath.Join(dir, "model.yaml"), "--repo", base+"/public.git")
	if r.code != ExitOK {
		t.Fatalf("run: %+v", r)
	}
	rn, err := newRunner(Env{Getenv: func(k string) string { return env[k] }}, "")
	if err != nil {
		t.Fatal(err)
	}
	return &gitRun{t: t, env: env, base: base, runID: regexp.MustCompile(`runs/(\S+)`).FindStringSubmatch(r.stdout)[1], rn: rn}
}

// review decides on the run through the gate with verdict v.
func (g *gitRun) review(v gate.Verdict) *bundle.Review {
	g.t.Helper()
	rv, _, err := reviewRun(context.Background(), g.rn, g.runID, gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return v, nil
	}), false)
	if err != nil {
		g.t.Fatalf("review run %s: %v", g.runID, err)
	}
	return rv
}

// git runs git in dir.
func (g *gitRun) git(dir string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
