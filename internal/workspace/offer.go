package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mbox is a run's change as one commit on top of base, in the mbox format
// `git am` reads: patch applied in a scratch repository that fetches base
// from the workspace at dir (proctor's repository of it), committed by
// author with subject.
func Mbox(ctx context.Context, dir, base, patch, subject, author string, at time.Time) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "proctor-mbox-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	w := &Workspace{Dir: filepath.Join(tmp, "work")}
	if err := os.Mkdir(w.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	if err := w.repo().init(ctx, true); err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	for _, args := range [][]string{
		{"fetch", "-q", "--depth", "1", "--no-tags", GitDir(dir), base},
		{"checkout", "-q", "--detach", "FETCH_HEAD"},
	} {
		if _, err := w.git(ctx, args...); err != nil {
			return nil, fmt.Errorf("mbox: %w", err)
		}
	}
	if _, err := w.repo().run(ctx, strings.NewReader(patch), "apply", "--index", "--binary", "-"); err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	name, email, _ := strings.Cut(author, " <")
	email = strings.TrimSuffix(email, ">")
	date := at.UTC().Format(time.RFC3339)
	by := w.repo()
	by.env = []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email,
		"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	if _, err := by.run(ctx, nil, "commit", "-q", "--no-verify", "-m", subject); err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	out, err := w.git(ctx, "format-patch", "-1", "--stdout", "--no-signature", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("mbox: %w", err)
	}
	return []byte(out), nil
}

// ApplyTo applies a run's patch, made on top of base, to the checkout at
// dir: base must be in its history, and every file the patch touches must
// be as it is at base (committed or not), else nothing is applied and the
// files in the way are named.
func ApplyTo(ctx context.Context, dir, base, patch string, paths []string) error {
	if len(paths) == 0 {
		return errors.New("the patch touches no file")
	}
	// The checkout is the person's own repository, found in dir itself.
	w := repo{workTree: dir}
	if _, err := w.run(ctx, nil, "cat-file", "-e", base+"^{commit}"); err != nil {
		return fmt.Errorf("%s does not have the run's base commit %s: fetch it into that checkout first (git fetch origin %s)", dir, base, base)
	}
	out, err := w.run(ctx, nil, append([]string{"diff", "--name-only", base, "--"}, paths...)...)
	if err != nil {
		return err
	}
	if changed := strings.Fields(out); len(changed) > 0 {
		return fmt.Errorf("not applied: %s changed in %s since the run's base commit %s", strings.Join(changed, ", "), dir, base[:12])
	}
	// Every file the patch touches is as at base, so its positions hold
	// even for a hunk a reviewer edited down to no trailing context.
	_, err = w.run(ctx, strings.NewReader(patch), "apply", "--binary", "--unidiff-zero", "-")
	return err
}
