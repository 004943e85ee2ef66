package source_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/testutil"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// clone fetches g into a new workspace at dir and checks it out, as a run
// does.
func clone(t *testing.T, f source.Fetcher, g source.Git, url, dir string) (source.Pinned, *source.Error) {
	ctx := context.Background()
	ws, err := workspace.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	p, ferr := f.Fetch(ctx, g, url, workspace.GitDir(dir))
	if ferr != nil {
		return p, ferr
	}
	if err := ws.CheckOut(ctx, p.Commit); err != nil {
		t.Fatal(err)
	}
	return p, nil
}

const token = testutil.GitToken

func TestTheRepositoryRefAndCommitAreChecked(t *testing.T) {
	local := t.TempDir()
	for _, tc := range []struct {
		name string
		g    source.Git
		code string
	}{
		{"https", source.Git{Repo: "https://example.com/o/n.git"}, ""},
		{"shorthand", source.Git{Repo: "owner/name"}, ""},
		{"local path", source.Git{Repo: local}, ""},
		{"file url", source.Git{Repo: "file://" + local}, ""},
		{"empty", source.Git{}, source.CodeRepositoryInvalid},
		{"ssh", source.Git{Repo: "git@github.com:o/n.git"}, source.CodeRepositoryInvalid},
		{"plain http", source.Git{Repo: "http://example.com/o/n.git"}, source.CodeRepositoryInvalid},
		{"ext transport", source.Git{Repo: "ext::sh -c touch% /tmp/x"}, source.CodeRepositoryInvalid},
		{"credentials in the URL", source.Git{Repo: "https://user:pw@example.com/o/n.git"}, source.CodeRepositoryInvalid},
		{"an option", source.Git{Repo: "--upload-pack=touch /tmp/x"}, source.CodeRepositoryInvalid},
		{"shorthand with dots", source.Git{Repo: "../n"}, source.CodeRepositoryInvalid},
		{"shorthand bad chars", source.Git{Repo: "o w/n"}, source.CodeRepositoryInvalid},
		{"ref with ..", source.Git{Repo: "o/n", Ref: "main..evil"}, source.CodeRefInvalid},
		{"ref an option", source.Git{Repo: "o/n", Ref: "-x"}, source.CodeRefInvalid},
		{"ref with a space", source.Git{Repo: "o/n", Ref: "my branch"}, source.CodeRefInvalid},
		{"ref ok", source.Git{Repo: "o/n", Ref: "release/1.2"}, ""},
		{"short commit", source.Git{Repo: "o/n", Commit: "abc123"}, source.CodeCommitInvalid},
		{"upper-case commit", source.Git{Repo: "o/n", Commit: strings.Repeat("A", 40)}, source.CodeCommitInvalid},
		{"commit ok", source.Git{Repo: "o/n", Commit: strings.Repeat("a", 40)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, err := tc.g.URL("github.com")
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code != "" && (err == nil || err.Code != tc.code):
				t.Fatalf("URL %q err %+v, want code %s", url, err, tc.code)
			case err != nil && strings.Contains(err.Message, "pw@"):
				t.Fatalf("the error shows the credentials: %s", err.Message)
			}
		})
	}
	if url, _ := (source.Git{Repo: "owner/name"}).URL("github.com"); url != "https://github.com/owner/name.git" {
		t.Fatalf("shorthand: %s", url)
	}
}

// A private repository clones with the token and fails clearly without
// it; the token is in no git argv while the clones run, nor in an error.
func TestClonesPinnedToACommitWithTheTokenOutOfArgv(t *testing.T) {
	base, env, commits := testutil.GitServer(t)
	// git variables around proctor do not steer its git (gitcmd): a GIT_DIR
	// elsewhere would make every command fail.
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "not-a-repository"))
	var leaked atomic.Value
	var sawGit atomic.Bool // the poll did see git's children
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // every git child's argv, while the clones run
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range cmdlines {
				data, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				if strings.Contains(string(data), token) {
					leaked.Store(strings.ReplaceAll(string(data), "\x00", " "))
				}
				if strings.Contains(string(data), "private.git") {
					sawGit.Store(true)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	clone := func(f source.Fetcher, g source.Git) (source.Pinned, *source.Error, string) {
		url, err := g.URL("")
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "ws")
		p, cerr := clone(t, f, g, url, dir)
		return p, cerr, dir
	}
	withToken := source.Fetcher{Token: token, Env: env}

	p, err, dir := clone(withToken, source.Git{Repo: base + "/private.git"})
	if err != nil || p.Commit != commits["private"] || len(p.Tree) != 40 {
		t.Fatalf("private with the token: %+v %v", p, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "two\n" {
		t.Fatalf("checked out a.txt = %q", data)
	}
	if out, _ := exec.Command("git", "--git-dir", workspace.GitDir(dir), "config", "--list", "--show-origin").CombinedOutput(); strings.Contains(string(out), token) {
		t.Fatalf("the token was written into the clone's config:\n%s", out)
	}
	_, err, _ = clone(source.Fetcher{Env: env}, source.Git{Repo: base + "/private.git"})
	if err == nil || err.Code != source.CodeCloneFailed || !strings.Contains(err.Message, "needs credentials; give a token that can read it: --token-env NAME") {
		t.Fatalf("private without the token: %+v", err)
	}
	p, err, dir = clone(source.Fetcher{Env: env}, source.Git{Repo: base + "/public.git", Ref: "release", Commit: commits["public-first"]})
	if err != nil || p.Commit != commits["public-first"] {
		t.Fatalf("a pinned older commit: %+v %v", p, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "one\n" {
		t.Fatalf("the pinned commit's a.txt = %q", data)
	}
	_, err, _ = clone(source.Fetcher{Env: env}, source.Git{Repo: base + "/public.git", Commit: strings.Repeat("0", 40)})
	if err == nil || err.Code != source.CodeCommitMismatch || err.Retryable {
		t.Fatalf("a commit the repository does not have: %+v", err)
	}
	_, err, _ = clone(source.Fetcher{Env: env}, source.Git{Repo: base + "/public.git", Ref: "no-such-branch"})
	if err == nil || err.Code != source.CodeCommitResolution {
		t.Fatalf("a branch that is not there: %+v", err)
	}
	_, err, _ = clone(source.Fetcher{Token: token, Env: env}, source.Git{Repo: base + "/gone.git"})
	if err == nil || strings.Contains(err.Message, token) || len(err.Message) > source.MaxMessage+100 {
		t.Fatalf("an error with the token in play: %+v", err)
	}
	close(stop)
	wg.Wait()
	if v := leaked.Load(); v != nil {
		t.Fatalf("the token was in a process's argv: %s", v)
	}
	if !sawGit.Load() {
		t.Fatal("the poll saw no git process at work on the private repository, so it proves nothing")
	}
}

// Runs of one repository share its mirror: concurrent clones through the
// cache all succeed (the mirror is locked), the mirror keeps the commit
// under a ref of its own, and prune removes mirrors not used lately.
func TestTheMirrorCacheIsSharedAndPruned(t *testing.T) {
	base, env, commits := testutil.GitServer(t)
	cache := &source.Cache{Dir: filepath.Join(t.TempDir(), "git")}
	f := source.Fetcher{Token: token, Env: env, Cache: cache}
	g := source.Git{Repo: base + "/private.git"}
	url, _ := g.URL("")
	var wg sync.WaitGroup
	errs := make(chan *source.Error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := clone(t, f, g, url, filepath.Join(t.TempDir(), "ws"))
			if err == nil && p.Commit != commits["private"] {
				err = &source.Error{Message: "clone " + string(rune('0'+i)) + " got " + p.Commit}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent clone: %+v", err)
		}
	}
	ms, err := cache.List()
	if err != nil || len(ms) != 1 || ms[0].URL != url || ms[0].Bytes == 0 {
		t.Fatalf("mirrors %+v %v", ms, err)
	}
	if out, err := exec.Command("git", "-C", ms[0].Path, "rev-parse", "refs/proctor/"+commits["private"]).CombinedOutput(); err != nil {
		t.Fatalf("the mirror does not keep the commit under a ref: %v %s", err, out)
	}
	cfg, _ := os.ReadFile(filepath.Join(ms[0].Path, "config"))
	if strings.Contains(string(cfg), token) {
		t.Fatal("the token is in the mirror's config")
	}
	if gone, err := cache.Prune(time.Now().Add(-time.Hour)); err != nil || len(gone) != 0 {
		t.Fatalf("pruned a mirror used just now: %+v %v", gone, err)
	}
	if gone, err := cache.Prune(time.Now().Add(time.Hour)); err != nil || len(gone) != 1 {
		t.Fatalf("prune: %+v %v", gone, err)
	}
	if ms, _ := cache.List(); len(ms) != 0 {
		t.Fatalf("left after prune: %+v", ms)
	}
}
