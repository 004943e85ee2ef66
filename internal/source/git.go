// Package source acquires a run's source from a git repository pinned to a
// commit: it checks the repository, ref and commit a person gave, resolves
// the ref to its exact commit, and clones that commit shallowly into the
// workspace. A token reaches git only through its environment
// (GIT_CONFIG_COUNT: http.extraHeader), never its argv, and never appears
// in an error.
package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/clip"
	"github.com/proctor-dev/proctor/internal/gitcmd"
)

// Failure codes, in the source domain, stage acquiring_source.
const (
	CodeRepositoryInvalid = "repository_invalid"
	CodeRefInvalid        = "ref_invalid"
	CodeCommitInvalid     = "commit_invalid"
	CodeCloneFailed       = "clone_failed"
	CodeCloneUnavailable  = "clone_unavailable"
	CodeCommitMismatch    = "commit_mismatch"
	CodeCommitResolution  = "commit_resolution_failed"
)

// Error is why a source could not be acquired.
type Error struct {
	Code      string
	Message   string
	Retryable bool
}

func (e *Error) Error() string { return e.Message }

// Git is a repository source as a person gives it.
type Git struct {
	Repo   string // an https URL, owner/name on the shorthand host, a local path, or a file:// URL
	Ref    string // a branch or tag; "" is the repository's default branch (HEAD)
	Commit string // 40 hex characters; "" takes the ref's commit
}

// Pinned is a source acquired: the URL (without credentials), the ref and
// the exact commit, and the commit's tree (the content digest).
type Pinned struct {
	URL, Ref, Commit, Tree string
}

var (
	shorthand = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	refChars  = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)
	hex40     = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// URL checks the repository, ref and commit and returns the URL git is to
// fetch. host is the https host owner/name stands for ("" refuses the
// shorthand).
func (g Git) URL(host string) (string, *Error) {
	bad := func(code, format string, args ...any) (string, *Error) {
		return "", &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	}
	if g.Ref != "" && (!refChars.MatchString(g.Ref) || strings.Contains(g.Ref, "..") || strings.HasPrefix(g.Ref, "-") || strings.HasPrefix(g.Ref, "/") || strings.HasSuffix(g.Ref, "/")) {
		return bad(CodeRefInvalid, "ref %q: a branch or tag name is letters, digits and . _ / - (no .., not starting with - or /)", g.Ref)
	}
	if g.Commit != "" && !hex40.MatchString(g.Commit) {
		return bad(CodeCommitInvalid, "commit %q: want the full 40-character hex SHA (lower case)", g.Commit)
	}
	repo := strings.TrimSpace(g.Repo)
	switch {
	case repo == "":
		return bad(CodeRepositoryInvalid, "repository: missing; give an https URL, owner/name, or a local path")
	case strings.HasPrefix(repo, "-"):
		return bad(CodeRepositoryInvalid, "repository %q: must not start with -", repo)
	case strings.HasPrefix(repo, "https://"):
		u, err := url.Parse(repo)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return bad(CodeRepositoryInvalid, "repository %q: want https://host/owner/name, without credentials, query or fragment (a token goes in --token-env)", redactURL(repo))
		}
		return repo, nil
	case strings.HasPrefix(repo, "file://"):
		u, err := url.Parse(repo)
		if err != nil || u.Host != "" || !filepath.IsAbs(u.Path) {
			return bad(CodeRepositoryInvalid, "repository %q: want file:///absolute/path", repo)
		}
		return repo, nil
	case strings.Contains(repo, "://") || strings.Contains(repo, "@") || strings.HasPrefix(repo, "ext::"):
		return bad(CodeRepositoryInvalid, "repository %q: only https URLs, owner/name, local paths and file:// are accepted", redactURL(repo))
	case filepath.IsAbs(repo) || strings.HasPrefix(repo, "./") || strings.HasPrefix(repo, "../"):
		abs, err := filepath.Abs(repo)
		if err != nil {
			return bad(CodeRepositoryInvalid, "repository %q: %v", repo, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return bad(CodeRepositoryInvalid, "repository %q: no such folder", repo)
		}
		return "file://" + abs, nil
	case strings.Count(repo, "/") == 1:
		if !shorthand.MatchString(repo) || strings.Contains(repo, "..") {
			return bad(CodeRepositoryInvalid, "repository %q: owner/name is letters, digits and . _ - on each side of one /", repo)
		}
		if host == "" {
			return bad(CodeRepositoryInvalid, "repository %q: owner/name needs a host to stand for (sources: host in the config); give the https URL", repo)
		}
		return "https://" + host + "/" + repo + ".git", nil
	}
	return bad(CodeRepositoryInvalid, "repository %q: give an https URL, owner/name, a local path (./repo, /abs/repo) or file:///abs/repo", repo)
}

// Fetcher runs git for a source.
type Fetcher struct {
	Token   string        // sent as an Authorization: Bearer header; "" for a public repository
	Timeout time.Duration // each git command; 0 is 10 minutes
	Env     []string      // more of git's environment (e.g. GIT_SSL_CAINFO)
	// Cache is the folder of bare mirrors (Cache.Dir): a commit is fetched
	// into the repository's mirror once, and workspaces are filled from
	// there. "" fetches straight into the workspace.
	Cache *Cache
}

// MaxMessage is how much of git's error text an error keeps.
const MaxMessage = 1000

// Fetch resolves g's ref to its commit, then fetches that commit alone
// (depth 1) into the repository at gitDir (a workspace's, which checks it
// out). A given commit must be what is fetched.
func (f Fetcher) Fetch(ctx context.Context, g Git, gitURL, gitDir string) (Pinned, *Error) {
	p := Pinned{URL: gitURL, Ref: g.Ref}
	ref := g.Ref
	if ref == "" {
		ref = "HEAD"
	}
	out, err := f.git(ctx, "", "ls-remote", "--", gitURL, ref, "refs/heads/"+ref, "refs/tags/"+ref)
	if err != nil {
		return p, err
	}
	tip := firstSHA(out)
	if tip == "" {
		return p, &Error{Code: CodeCommitResolution, Message: fmt.Sprintf("%s has no branch or tag %q", gitURL, ref)}
	}
	want := tip
	if g.Commit != "" {
		want = g.Commit
	}
	from := gitURL
	if f.Cache != nil {
		mirror, unlock, err := f.Cache.lock(gitURL)
		if err != nil {
			return p, &Error{Code: CodeCloneUnavailable, Message: err.Error(), Retryable: true}
		}
		defer unlock()
		if _, gerr := f.git(ctx, mirror, "cat-file", "-e", want+"^{commit}"); gerr != nil {
			// Kept under a ref of its own, so that git's gc keeps it.
			if gerr := f.fetch(ctx, mirror, gitURL, want+":refs/proctor/"+want, g, ref, tip); gerr != nil {
				return p, gerr
			}
		}
		from = "file://" + mirror
	}
	if err := f.fetch(ctx, gitDir, from, want, g, ref, tip); err != nil {
		return p, err
	}
	head, err := f.git(ctx, gitDir, "rev-parse", "FETCH_HEAD", "FETCH_HEAD^{tree}")
	if err != nil {
		return p, err
	}
	fields := strings.Fields(head)
	if len(fields) != 2 || fields[0] != want {
		return p, &Error{Code: CodeCommitMismatch, Message: fmt.Sprintf("fetched %s, not %s", strings.Join(fields, " "), want)}
	}
	p.Commit, p.Tree = fields[0], fields[1]
	return p, nil
}

// fetch fetches the commit want alone (depth 1) from url into the
// repository at dir; a given commit that is not there is a mismatch.
func (f Fetcher) fetch(ctx context.Context, dir, url, want string, g Git, ref, tip string) *Error {
	_, err := f.git(ctx, dir, "fetch", "-q", "--depth", "1", "--no-tags", "--", url, want)
	if err != nil && g.Commit != "" {
		err.Code, err.Retryable = CodeCommitMismatch, false
		err.Message = fmt.Sprintf("commit %s is not on %s of %s (its tip is %s): %s", g.Commit, ref, g.Repo, tip, err.Message)
	}
	return err
}

func firstSHA(lsRemote string) string {
	for _, line := range strings.Split(lsRemote, "\n") {
		if sha, _, ok := strings.Cut(line, "\t"); ok && hex40.MatchString(sha) {
			return sha
		}
	}
	return ""
}

// trustVars are the git variables of proctor's environment a fetch keeps:
// which certificates to trust (a host's own certificate authority). Every
// other GIT_* variable around proctor is dropped (gitcmd).
var trustVars = []string{"GIT_SSL_CAINFO", "GIT_SSL_CAPATH"}

// trusted is trustVars as proctor's environment sets them.
func trusted() []string {
	var env []string
	for _, name := range trustVars {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// git runs a git command with the token in its environment only, no
// prompt, no system or user config, and returns its output or an error
// whose text is git's, redacted and cut.
func (f Fetcher) git(ctx context.Context, dir string, args ...string) (string, *Error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env := trusted()
	env = append(env, f.Env...)
	if f.Token != "" {
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Bearer "+f.Token)
	}
	cmd := gitcmd.Command(ctx, dir, env, append([]string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never",
		"-c", "protocol.https.allow=always", "-c", "protocol.file.allow=always"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	msg := f.clean(strings.TrimSpace(stderr.String()))
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "", &Error{Code: CodeCloneUnavailable, Message: "git is not installed: install it (apt-get install git)", Retryable: false}
	case ctx.Err() != nil:
		return "", &Error{Code: CodeCloneUnavailable, Message: fmt.Sprintf("git %s did not finish within %s", args[0], timeout), Retryable: true}
	}
	if strings.Contains(msg, "could not read Username") || strings.Contains(msg, "Authentication failed") || strings.Contains(msg, "403") {
		hint := "give a token that can read it: --token-env NAME, the variable that holds it"
		if f.Token != "" {
			hint = "the token was refused: check that it can read this repository"
		}
		msg = fmt.Sprintf("the repository needs credentials; %s (git: %s)", hint, msg)
	}
	return "", &Error{Code: CodeCloneFailed, Message: fmt.Sprintf("git %s: %s", args[0], msg)}
}

// clean is git's error text without the token, cut to MaxMessage bytes.
func (f Fetcher) clean(s string) string {
	if f.Token != "" {
		s = strings.ReplaceAll(s, f.Token, "[redacted]")
	}
	s = redactURL(s)
	return clip.Bytes(s, MaxMessage)
}

var userinfo = regexp.MustCompile(`(https?://)[^/@\s]+@`)

// redactURL drops credentials written into a URL.
func redactURL(s string) string { return userinfo.ReplaceAllString(s, "${1}[redacted]@") }
