package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Mbox is a run's change as one commit on top of base, in the mbox format
// `git am` reads: patch applied in a scratch repository that fetches base
// from repo (the run's workspace), committed by author with subject.
func Mbox(ctx context.Context, repo, base, patch, subject, author string, at time.Time) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "proctor-mbox-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	w := &Workspace{Dir: tmp}
	date := at.UTC().Format(time.RFC3339)
	steps := [][]string{
		{"init", "-q", "-b", "proctor"},
		{"fetch", "-q", "--depth", "1", "--no-tags", repo, base},
		{"checkout", "-q", "--detach", "FETCH_HEAD"},
	}
	for _, args := range steps {
		if _, err := w.git(ctx, args...); err != nil {
			return nil, fmt.Errorf("mbox: %w", err)
		}
	}
	if err := w.apply(ctx, patch); err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	name, email, _ := strings.Cut(author, " <")
	email = strings.TrimSuffix(email, ">")
	commit := exec.CommandContext(ctx, "git", "-c", "commit.gpgSign=false", "-c", "core.hooksPath=/dev/null", "commit", "-q", "--no-verify", "-m", subject)
	commit.Dir = tmp
	commit.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email,
		"GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if out, err := commit.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mbox: commit: %v: %s", err, bytes.TrimSpace(out))
	}
	out, err := w.git(ctx, "format-patch", "-1", "--stdout", "--no-signature", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	return []byte(out), nil
}

// apply applies patch to the working tree and stages it.
func (w *Workspace) apply(ctx context.Context, patch string) error {
	f := filepath.Join(w.Dir, ".git", "proctor.patch")
	if err := os.WriteFile(f, []byte(patch), 0o600); err != nil {
		return err
	}
	_, err := w.git(ctx, "apply", "--index", "--binary", f)
	return err
}

// ApplyTo applies a run's patch, made on top of base, to the checkout at
// dir: base must be in its history, and every file the patch touches must
// be as it is at base (committed or not), else nothing is applied and the
// files in the way are named.
func ApplyTo(ctx context.Context, dir, base, patch string, paths []string) error {
	if len(paths) == 0 {
		return errors.New("the patch touches no file")
	}
	w := &Workspace{Dir: dir}
	if _, err := w.git(ctx, "cat-file", "-e", base+"^{commit}"); err != nil {
		return fmt.Errorf("%s does not have the run's base commit %s: fetch it into that checkout first (git fetch origin %s)", dir, base, base)
	}
	out, err := w.git(ctx, append([]string{"diff", "--name-only", base, "--"}, paths...)...)
	if err != nil {
		return err
	}
	if changed := strings.Fields(out); len(changed) > 0 {
		return fmt.Errorf("not applied: %s changed in %s since the run's base commit %s", strings.Join(changed, ", "), dir, base[:12])
	}
	f, err := os.CreateTemp("", "proctor-*.patch")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(patch); err != nil {
		f.Close()
		return err
	}
	f.Close()
	// Every file the patch touches is as at base, so its positions hold
	// even for a hunk a reviewer edited down to no trailing context.
	_, err = w.git(ctx, "apply", "--binary", "--unidiff-zero", f.Name())
	return err
}
