package cli

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
)

// TestSecretsAppearNowhere plants secrets in the environment, a source file
// (tool output), the model's replies and the error that ends the run, then
// asserts that none of them is in any file of the data folder, the database
// or any page that shows the run.
func TestSecretsAppearNowhere(t *testing.T) {
	const envSecret = "s3cr3t-env-value-9f8e7d6c"
	t.Setenv("LEAKTEST_API_KEY", envSecret)
	secrets := []string{
		envSecret,
		"sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
		"abcdefghijklmnopqrstuvwxyz0123",           // a bearer token
		"ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", // in a command
		"ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210", // in the error
		"glpat-aaaaBBBBccccDDDDeeee1234",           // in a file
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "secrets.txt"), []byte("deploy token: glpat-aaaaBBBBccccDDDDeeee1234\nenv: "+envSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	r := invoke(t, env, "run", "--dir", src, "--task", "Use the key "+envSecret+" to deploy.", "--script", "testdata/leak/model.yaml", "--allow", "cat", "--session", "new")
	if r.code == ExitOK || !strings.Contains(r.stdout+r.stderr, "scenario") {
		t.Fatalf("the leaky run should fail on its script: %+v", r)
	}
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("terminal output holds %q:\n%s\n%s", s, r.stdout, r.stderr)
		}
	}
	// Nothing on disk: bundles, sessions, the database and its WAL.
	found := 0
	err := filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "workspace" || path == filepath.Join(data, "workspaces")) {
			return filepath.SkipDir // the agent's copy of the source (a session's too): it holds what the source holds
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 5 {
		t.Fatalf("only %d files in the data folder: the run wrote no bundle?", found)
	}
	// Nothing on a page: the list, the run, its files, the API, a search.
	st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const local = "plk_leak-test-local-secret-0123456789abcdefghij"
	srv := server.New(st, server.Config{DataDir: data, LocalSecret: local})
	id := regexp.MustCompile(`run (\d{8}-\d{6}-[a-z0-9]{6})`).FindStringSubmatch(r.stdout)
	if id == nil {
		t.Fatalf("no run id in %q", r.stdout)
	}
	pages := []string{"/runs", "/runs?q=deploy", "/runs/" + id[1], "/api/v1/runs/" + id[1], "/api/v1/runs?q=key"}
	for _, f := range []string{"run.json", "events.jsonl", "exchanges.jsonl", "transcript.md", "diff.patch"} {
		pages = append(pages, "/runs/"+id[1]+"/files/"+f)
	}
	for _, p := range pages {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+p, nil)
		req.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: local})
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code == http.StatusUnauthorized || rec.Code >= 500 { // a file the run has none of is a 404
			t.Errorf("%s: %d", p, rec.Code)
		}
		for _, s := range secrets {
			if strings.Contains(rec.Body.String(), s) {
				t.Errorf("page %s holds %q", p, s)
			}
		}
	}
	// And the redaction is visible where the secrets were.
	tr, err := os.ReadFile(filepath.Join(data, "runs", id[1], "transcript.md"))
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(string(tr), "[REDACTED]"); c < 6 {
		t.Errorf("transcript has %d [REDACTED] marks, want at least 6:\n%s", c, tr)
	}
}

// A scenario whose check prints a secret passed to it by name: the secret
// is in no verdict, no terminal line (scenario run, packed or not, and
// check), no file of the data folder outside the agent's workspace, and no
// byte of the pack.
func TestCheckOutputSecretsAreRedacted(t *testing.T) {
	const secret = "s3cr3t-check-value-1a2b3c4d"
	t.Setenv("LEAKTEST_API_KEY", secret)
	dir := filepath.Join(t.TempDir(), "leaky-check")
	os.MkdirAll(filepath.Join(dir, "fixture"), 0o755)
	os.WriteFile(filepath.Join(dir, "fixture", "a.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(`id: leaky-check
task: Write new into a.txt.
git: false
pass_env: [LEAKTEST_API_KEY]
checks:
  - {kind: file_contains, path: a.txt, text: new}
  - {name: prints-key, kind: command, command: 'echo "the key is $LEAKTEST_API_KEY"; exit 1'}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "model.yaml"), []byte(`steps:
  - reply: {content: done, tool_calls: [{name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - reply: {content: done}
`), 0o644)
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	var out strings.Builder
	for _, args := range [][]string{{"scenario", "run", dir}, {"scenario", "run", "--pack", dir}} {
		r := invoke(t, env, args...)
		if r.code != ExitProblems || !strings.Contains(r.stdout, "FAIL post.prints-key") {
			t.Fatalf("%v: %+v", args, r)
		}
		if m := regexp.MustCompile(`(\S+/runs/[0-9a-z-]+)\n`).FindStringSubmatch(r.stdout); m != nil {
			if v, _ := os.ReadFile(filepath.Join(m[1], "verdict.json")); !strings.Contains(string(v), "the key is [REDACTED]") {
				t.Errorf("verdict.json does not show the redacted output:\n%s", v)
			}
		}
		out.WriteString(r.stdout + r.stderr)
		if m := regexp.MustCompile(`\.tar#(\S+)`).FindStringSubmatch(r.stdout); m != nil {
			c := invoke(t, env, "check", m[1])
			out.WriteString(c.stdout + c.stderr)
			if !strings.Contains(c.stdout, "FAIL post.prints-key") {
				t.Fatalf("check: %+v", c)
			}
		}
	}
	if strings.Contains(out.String(), secret) {
		t.Fatalf("terminal output holds the secret:\n%s", out.String())
	}
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "workspace" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret", path)
			}
		}
		return nil
	})
}
