package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

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
