package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// fromDiff is prepare for a run made elsewhere, whose repository this
// host never opens: what each file was before the run is what the
// recorded diff's index lines say (proctor records them whole), and a file
// of the tree that is not that is a conflict. The files the accepted diff
// makes are built from the tree's own copies, patched beside it by
// proctor's git apply.
func (c change) fromDiff(ctx context.Context) ([]journalFile, map[string][]byte, error) {
	files, err := patch.Parse(c.original)
	if err != nil {
		return nil, nil, fmt.Errorf("read the recorded diff: %w", err)
	}
	before := map[string]string{} // path → its state before the run ("" no file)
	var unknown []string
	for _, f := range files {
		if f.OldPath != "" {
			if f.OldBlob == "" {
				unknown = append(unknown, bundle.PathName(f.OldPath))
				continue
			}
			before[f.OldPath] = f.OldBlob
			if f.OldLink {
				before[f.OldPath] = linkState + f.OldBlob
			}
		}
		if f.NewPath != "" && f.NewPath != f.OldPath {
			before[f.NewPath] = ""
		}
	}
	if len(unknown) > 0 {
		return nil, nil, fmt.Errorf("nothing was applied: the recorded diff does not say what %v were before the run (no whole index line), so a change to them cannot be checked", unknown)
	}
	src, err := os.OpenRoot(c.tree)
	if err != nil {
		return nil, nil, fmt.Errorf("open source %s: %w", c.tree, err)
	}
	defer src.Close()
	scratch, err := os.MkdirTemp("", "proctor-apply-*")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(scratch)
	made, err := os.OpenRoot(scratch)
	if err != nil {
		return nil, nil, err
	}
	defer made.Close()
	var conflicts []string
	for _, p := range c.changed {
		want, ok := before[p]
		if !ok {
			return nil, nil, fmt.Errorf("nothing was applied: the accepted change touches %s, which the recorded diff does not", bundle.PathName(p))
		}
		data, got, err := readState(src, p)
		if err != nil {
			return nil, nil, fmt.Errorf("check %s: %w", bundle.PathName(p), err)
		}
		if got != want {
			conflicts = append(conflicts, bundle.PathName(p))
			continue
		}
		if got == "" {
			continue
		}
		name := filepath.FromSlash(p)
		if err := made.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return nil, nil, err
		}
		if isLink(got) {
			err = made.Symlink(string(data), name)
		} else {
			mode := os.FileMode(0o644)
			if info, lerr := src.Lstat(name); lerr == nil {
				mode = info.Mode().Perm()
			}
			err = made.WriteFile(name, data, mode)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if len(conflicts) > 0 {
		return nil, nil, &ConflictError{Files: conflicts}
	}
	if err := workspace.ApplyPatch(ctx, scratch, c.diff); err != nil {
		return nil, nil, fmt.Errorf("nothing was applied: %w", err)
	}
	var out []journalFile
	contents := map[string][]byte{}
	for _, p := range c.changed {
		f := journalFile{Path: p, Base: before[p]}
		data, state, err := readState(made, p)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s as the diff makes it: %w", bundle.PathName(p), err)
		}
		f.madeAs(made, state, data, contents)
		out = append(out, f)
	}
	return out, contents, nil
}

// ApplyRecorded applies accepted, a change a reviewer accepted (the whole
// recorded diff, or its accepted parts with their edits), to the folder
// tree, judged from the recorded diff (original) alone, as a run made
// elsewhere is on its host, by the rules of a review here: every file it
// touches must be one the recorded diff names and what the run started
// from (else a *ConflictError), and a link it makes that points out of
// the tree must be among partsAccepted, the files the reviewer accepted
// part by part (else a *LinkError); otherwise nothing is applied. It
// writes through a journal as a review does, so a file it cannot finish
// is rolled back, and returns the paths it wrote.
func ApplyRecorded(ctx context.Context, tree, original, accepted string, partsAccepted []string) ([]string, error) {
	changed, err := diffPaths(accepted)
	if err != nil {
		return nil, err
	}
	if len(changed) == 0 {
		return nil, errors.New("the accepted change touches no file")
	}
	files, contents, err := change{tree: tree, original: original, diff: accepted, changed: changed, parts: partsAccepted}.prepare(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "proctor-apply-journal-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	j := &journal{Schema: journalSchema, Op: newOp(), RunID: "apply", State: stateApplying, Source: tree, Files: files}
	if err := writeJournal(dir, j, contents); err != nil {
		return nil, err
	}
	if err := settleSource(dir, j); err != nil {
		return nil, err
	}
	if j.RolledBack {
		return nil, errors.New(j.Detail)
	}
	return j.Review.Changed, nil
}
