package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
)

func invokeIn(t *testing.T, data, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return map[string]string{"PROCTOR_DATA": data}[k] },
	})
	return result{code, out.String(), errb.String()}
}

func TestUserAndTokenCommands(t *testing.T) {
	data := t.TempDir()
	steps := []struct {
		stdin    string
		args     []string
		code     int
		contains string
	}{
		{"", []string{"user", "list"}, ExitOK, "no accounts"},
		{"short\n", []string{"user", "add", "ada", "--role", "admin"}, ExitUsage, "at least 10 characters"},
		{"pw-of-ada-123\n", []string{"user", "add", "ada", "--role", "root"}, ExitUsage, "viewer, reviewer, admin"},
		{"pw-of-ada-123\n", []string{"user", "add", "../ada", "--role", "admin"}, ExitUsage, "letters, digits"},
		{"pw-of-ada-123\n", []string{"user", "add", "ada", "--role", "admin"}, ExitOK, "added ada (admin)"},
		{"pw-of-ada-123\n", []string{"user", "add", "ada", "--role", "viewer"}, ExitUsage, "already exists"},
		{"pw-of-rev-123\n", []string{"user", "add", "rev", "--role", "reviewer"}, ExitOK, "added rev"},
		{"", []string{"user", "remove", "ada"}, ExitUsage, "last enabled admin"},
		{"", []string{"user", "disable", "ada"}, ExitUsage, "last enabled admin"},
		{"", []string{"user", "role", "ada", "--role", "viewer"}, ExitUsage, "last enabled admin"},
		{"", []string{"user", "disable", "ghost"}, ExitUsage, "no user ghost"},
		{"", []string{"user", "role", "rev", "--role", "viewer"}, ExitOK, "done"},
		{"", []string{"user", "list"}, ExitOK, "rev   viewer"},
		{"new-pass-for-rev\n", []string{"user", "passwd", "rev"}, ExitOK, "done"},
		{"", []string{"token", "create", "--user", "rev"}, ExitUsage, "needs --user NAME and --name LABEL"},
		{"", []string{"token", "create", "--user", "ghost", "--name", "ci"}, ExitUsage, "no user ghost"},
		{"", []string{"token", "create", "--user", "rev", "--name", "ci"}, ExitOK, "ptk_"},
		{"", []string{"token", "create", "--user", "rev", "--name", "ci"}, ExitUsage, "already has a token named ci"},
		{"", []string{"token", "list"}, ExitOK, "never"},
		{"", []string{"token", "revoke", "--user", "rev", "--name", "ci"}, ExitOK, "revoked"},
		{"", []string{"user", "remove", "rev"}, ExitOK, "removed rev"},
		{"", []string{"user", "frob"}, ExitUsage, "unknown verb"},
	}
	for _, s := range steps {
		r := invokeIn(t, data, s.stdin, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.contains) {
			t.Fatalf("proctor %s: exit %d, out %q, err %q; want exit %d and %q", strings.Join(s.args, " "), r.code, r.stdout, r.stderr, s.code, s.contains)
		}
	}

	// The password is stored hashed, never in clear, and works.
	raw, err := os.ReadFile(filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("pw-of-ada-123")) {
		t.Fatal("the password is in the database in clear")
	}
	st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.GetUser(context.Background(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := auth.VerifyPassword("pw-of-ada-123", u.PasswordHash); !ok || err != nil {
		t.Fatalf("stored hash does not verify: %v %v", ok, err)
	}
	entries, _, _ := st.ListAudit(context.Background(), 0, 100)
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	if got := strings.Join(actions, ","); !strings.Contains(got, "user-remove,token-revoke,token-create,user-passwd,user-role,user-add,user-add") {
		t.Errorf("audit actions = %s", got)
	}
}
