package testutil

import (
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitToken is the token GitServer's private repository needs.
const GitToken = "ptk-test-secret-token-4f9a1c"

// GitServer serves two bare repositories, public.git and private.git, over
// smart HTTP (git http-backend behind net/http/cgi, with TLS); private.git
// needs GitToken in an Authorization header. Each has two commits on main
// (and a branch release); commits maps "public", "private" to the tips and
// "public-first", "private-first" to the first commits. It returns the base
// URL and the environment in which git trusts the server's certificate.
func GitServer(t testing.TB) (string, []string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	commits := map[string]string{}
	for _, repo := range []string{"public", "private"} {
		work := filepath.Join(t.TempDir(), repo)
		run(t, "", "init", "-q", "-b", "main", work)
		os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\n"), 0o644)
		run(t, work, "add", "-A")
		run(t, work, "commit", "-q", "-m", "one")
		commits[repo+"-first"] = strings.TrimSpace(run(t, work, "rev-parse", "HEAD"))
		os.WriteFile(filepath.Join(work, "a.txt"), []byte("two\n"), 0o644)
		run(t, work, "commit", "-q", "-am", "two")
		commits[repo] = strings.TrimSpace(run(t, work, "rev-parse", "HEAD"))
		run(t, work, "branch", "release")
		run(t, "", "clone", "-q", "--bare", work, filepath.Join(root, repo+".git"))
	}
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/private.git") && r.Header.Get("Authorization") != "Bearer "+GitToken {
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	return srv.URL, []string{"GIT_SSL_CAINFO=" + ca}, commits
}

func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// RecordedDiff is the diff a run records, from the files of base to those
// of after (a file of base missing from after is removed), made by git as
// proctor makes it: whole index lines, binary patches. A file whose text
// is "-> TARGET" is a link to TARGET.
func RecordedDiff(t testing.TB, base, after map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(files map[string]string) {
		for p, text := range files {
			full := filepath.Join(dir, p)
			os.Remove(full)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if target, ok := strings.CutPrefix(text, "-> "); ok {
				os.Symlink(target, full)
			} else {
				os.WriteFile(full, []byte(text), 0o644)
			}
		}
	}
	run(t, dir, "init", "-q")
	write(base)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-q", "-m", "base", "--allow-empty")
	for p := range base {
		if _, ok := after[p]; !ok {
			os.Remove(filepath.Join(dir, p))
		}
	}
	write(after)
	run(t, dir, "add", "-A")
	return run(t, dir, "-c", "core.autocrlf=false", "diff", "--cached", "--full-index", "--binary", "HEAD")
}
