package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/gitcmd"
)

// GitDir is the folder of proctor's own repository for the workspace in
// dir: beside it, never inside, so that nothing a run starts (which may
// write only inside the workspace) can change proctor's base commit,
// index, config or hooks. The workspace's own .git is the agent's, and
// proctor never reads it.
func GitDir(dir string) string { return filepath.Clean(dir) + ".git" }

// repo is a git repository proctor runs git in: its git folder and, for a
// repository with files, its work tree.
type repo struct {
	gitDir   string   // "" finds the repository of workTree itself, or none (never one above it)
	workTree string   // "" for a bare repository
	env      []string // more of git's environment, after proctor's (another author)
}

// settings are the only configuration proctor's git runs with, besides
// the repository's own config, which only proctor writes. They fix the
// diff format and turn off everything that would run a program or read a
// file named by the work tree: the fsmonitor, hooks, filters, textconv,
// external diff, attributes and ignore files outside the repository.
var settings = []string{
	"core.fsmonitor=false", "core.hooksPath=/dev/null", "core.attributesFile=/dev/null", "core.excludesFile=/dev/null",
	"core.autocrlf=false", "core.safecrlf=false", "core.fileMode=true", "core.symlinks=true", "core.ignoreCase=false",
	"core.precomposeUnicode=false", "core.untrackedCache=false", "core.splitIndex=false", "core.sparseCheckout=false",
	"core.quotePath=true", "core.bigFileThreshold=512m", "core.pager=cat", "core.askPass=", "core.sshCommand=false",
	"diff.noprefix=false", "diff.mnemonicPrefix=false", "diff.relative=false", "diff.renames=false", "diff.context=3",
	"diff.interHunkContext=0", "diff.algorithm=myers", "diff.indentHeuristic=true", "diff.suppressBlankEmpty=false",
	"diff.ignoreSubmodules=none", "diff.submodule=short", "diff.orderFile=/dev/null", "color.ui=false",
	"commit.gpgSign=false", "tag.gpgSign=false", "gc.auto=0", "maintenance.auto=false", "feature.manyFiles=false",
	"safe.directory=*", "protocol.allow=never", "protocol.file.allow=always", "submodule.recurse=false",
	"user.name=" + gitName, "user.email=" + gitEmail, "init.defaultBranch=main", "advice.detachedHead=false",
}

// neutralAttributes is written to proctor's repository's info/attributes,
// which git ranks above every .gitattributes in the work tree: whatever
// the agent writes there, no path is converted, filtered, textconv'd or
// left out of an archive.
const neutralAttributes = "* !text !eol !crlf !filter !diff !merge !ident !working-tree-encoding !export-subst !export-ignore !whitespace\n"

// diffFormat are the flags of every diff proctor records: one format,
// whatever any config says.
var diffFormat = []string{"--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/",
	"--no-relative", "--binary", "--full-index", "--unified=3", "--inter-hunk-context=0", "--diff-algorithm=myers", "--ignore-submodules=none"}

// run runs git in the repository with proctor's settings only: no system
// or global config, nothing from git's variables in proctor's environment,
// a fixed identity and date.
func (r repo) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd, stdout, stderr := r.command(ctx, stdin, args...)
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("workspace needs git, which is not installed: %w", err)
		}
		if _, serr := os.Stat(r.gitDir); r.gitDir != "" && serr != nil && args[0] != "init" {
			return "", fmt.Errorf("git %s: proctor's repository %s of workspace %s is missing (a workspace made by an earlier proctor keeps it inside, where the agent could change it, and is not trusted): %w", args[0], r.gitDir, r.workTree, serr)
		}
		where := r.workTree
		if where == "" {
			where = r.gitDir
		}
		return "", fmt.Errorf("git %s in %s: %v: %s", args[0], where, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// command is git with args in the repository, set up as run runs it.
func (r repo) command(ctx context.Context, stdin io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	full := make([]string, 0, 2*len(settings)+len(args))
	for _, s := range settings {
		full = append(full, "-c", s)
	}
	full = append(full, args...)
	dir := filepath.Dir(r.gitDir)
	if r.workTree != "" {
		dir = r.workTree
	}
	cmd := gitcmd.Command(ctx, dir, gitEnv(r), full...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// Merge3 merges the change from base to theirs into ours, line by line,
// as git merge-file does (run with proctor's settings only, on copies in a
// temporary folder): the merged text, and how many regions conflict —
// marked in the text between "<<<<<<< source" and ">>>>>>> run".
func Merge3(ctx context.Context, ours, base, theirs []byte) ([]byte, int, error) {
	dir, err := os.MkdirTemp("", "proctor-merge-*")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	for name, data := range map[string][]byte{"ours": ours, "base": base, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, 0, err
		}
	}
	cmd, stdout, stderr := repo{workTree: dir}.command(ctx, nil, "merge-file", "-p", "-L", "source", "-L", "base", "-L", "run", "ours", "base", "theirs")
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), 0, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return stdout.Bytes(), exit.ExitCode(), nil
	}
	return nil, 0, fmt.Errorf("git merge-file: %v: %s", err, strings.TrimSpace(stderr.String()))
}

// gitEnv is what git is given in the repository, over gitcmd.Env (no
// GIT_* of proctor's environment, no config): the repository, and a fixed
// identity.
func gitEnv(r repo) []string {
	var env []string
	if r.gitDir != "" {
		env = append(env, "GIT_DIR="+r.gitDir)
	} else {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(r.workTree))
	}
	env = append(env, "GIT_NO_REPLACE_OBJECTS=1", "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0",
		"GIT_AUTHOR_DATE="+gitDate, "GIT_COMMITTER_DATE="+gitDate,
		"GIT_AUTHOR_NAME="+gitName, "GIT_AUTHOR_EMAIL="+gitEmail, "GIT_COMMITTER_NAME="+gitName, "GIT_COMMITTER_EMAIL="+gitEmail)
	if r.workTree != "" {
		env = append(env, "GIT_WORK_TREE="+r.workTree)
	}
	return append(env, r.env...)
}

// init makes an empty repository at r.gitDir; proctor's own (neutral)
// gets attributes that no .gitattributes in the work tree can override.
func (r repo) init(ctx context.Context, neutral bool) error {
	args := []string{"init", "-q", "-b", "main"}
	if r.workTree == "" {
		args = append(args, "--bare")
	}
	if _, err := r.run(ctx, nil, args...); err != nil {
		return err
	}
	if !neutral {
		return nil
	}
	info := filepath.Join(r.gitDir, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return fmt.Errorf("init %s: %w", r.gitDir, err)
	}
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte(neutralAttributes), 0o644); err != nil {
		return fmt.Errorf("init %s: %w", r.gitDir, err)
	}
	return nil
}
