package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// proctor rule add makes a rule that the next proctor run applies before
// anyone is asked (the transcript names it); revoked, the call is denied
// again; every change is audited.
func TestRuleAddListRevokeAndARunUsesIt(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "a\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"ls -la\"}}]}\n  - reply: {content: listed}\n"})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	transcript := func() string {
		t.Helper()
		r := invoke(t, env, "run", "--dir", src, "--task", "list", "--script", filepath.Join(dir, "model.yaml"), "--approve", "policy", "--sandbox", "off")
		if r.code != ExitOK {
			t.Fatalf("run: %+v", r)
		}
		i := strings.Index(r.stdout, "bundle: ")
		path := strings.TrimSpace(strings.SplitN(r.stdout[i+len("bundle: "):], "\n", 2)[0])
		b, _ := os.ReadFile(filepath.Join(path, "transcript.md"))
		return string(b)
	}
	for _, bad := range [][]string{
		{"rule", "add", "--command", "ls; rm -rf /", "--target", src},
		{"rule", "add", "--command", "ls"},
		{"rule", "add", "--command", "ls", "--scope", "team", "--target", src},
		{"rule", "revoke", "x"},
		{"rule", "frob"},
	} {
		if r := invoke(t, env, bad...); r.code != ExitUsage {
			t.Errorf("%v: %+v, want usage error", bad, r)
		}
	}
	if r := invoke(t, env, "rule", "add", "--command", "ls", "--target", src); r.code != ExitOK || !strings.Contains(r.stdout, "added rule #1: run_command `ls …` in "+src) {
		t.Fatalf("rule add: %+v", r)
	}
	if r := invoke(t, env, "rule", "list"); r.code != ExitOK || !strings.Contains(r.stdout, "active") || !strings.Contains(r.stdout, "`ls …`") {
		t.Fatalf("rule list: %+v", r)
	}
	if got := transcript(); !strings.Contains(got, "approved by rule #1: allowed by rule #1") {
		t.Fatalf("the rule did not decide:\n%s", got)
	}
	if r := invoke(t, env, "rule", "revoke", "1"); r.code != ExitOK || !strings.Contains(r.stdout, "revoked rule #1") {
		t.Fatalf("rule revoke: %+v", r)
	}
	if got := transcript(); !strings.Contains(got, "denied by policy") {
		t.Fatalf("a revoked rule still decided:\n%s", got)
	}
	if r := invoke(t, env, "rule", "list"); !strings.Contains(r.stdout, "no rules in force") {
		t.Fatalf("rule list after revoke: %+v", r)
	}
	if r := invoke(t, env, "rule", "list", "--all"); !strings.Contains(r.stdout, "revoked") {
		t.Fatalf("rule list --all: %+v", r)
	}
	st, err := openData(t.Context(), Env{Getenv: func(k string) string { return env[k] }}, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, _, _ := st.ListAudit(t.Context(), 0, 10)
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, ","); got != "rule-revoke,rule-add" {
		t.Fatalf("audit: %s", got)
	}
	// A rule made for the folder through a link to it applies to runs on
	// the folder: both name it by its real path.
	link := filepath.Join(t.TempDir(), "src-link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	if r := invoke(t, env, "rule", "add", "--command", "ls", "--target", link); r.code != ExitOK || !strings.Contains(r.stdout, "in "+src) {
		t.Fatalf("rule add through a link: %+v", r)
	}
	if got := transcript(); !strings.Contains(got, "approved by rule #2") {
		t.Fatalf("a rule made through a link to the folder did not decide:\n%s", got)
	}
}
