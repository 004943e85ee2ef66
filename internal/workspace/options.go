package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Options shape a new workspace.
type Options struct {
	Message string // the base commit's message
	Origin  string // when set, a bare repository created here, added as origin and pushed to
	NoGit   bool   // no repository at all: changes are found by comparing file hashes
}

// CreateWith copies src into dir like Create, with options.
func CreateWith(ctx context.Context, src, dir string, lim Limits, opt Options) (*Workspace, error) {
	if !opt.NoGit {
		msg := opt.Message
		if msg == "" {
			msg = "proctor: base"
		}
		if err := copyInto(src, dir, lim, nil); err != nil {
			return nil, err
		}
		w := &Workspace{Dir: dir}
		if err := w.initRepo(ctx, msg); err != nil {
			return nil, err
		}
		if opt.Origin != "" {
			origin := repo{gitDir: opt.Origin}
			if err := origin.init(ctx, false); err != nil {
				return nil, err
			}
			if _, err := w.git(ctx, "push", "-q", opt.Origin, "main"); err != nil {
				return nil, err
			}
		}
		return w, w.giveAgentRepo(ctx, opt.Origin)
	}
	// The manifest is made as the files are copied (no second walk).
	w := &Workspace{Dir: dir, manifest: map[string]string{}}
	if err := copyInto(src, dir, lim, w.manifest); err != nil {
		return nil, err
	}
	return w, nil
}

// hashTree maps every regular file under dir (leaving out .git) to its
// content hash.
func hashTree(dir string) (map[string]string, error) {
	out := map[string]string{}
	var buf []byte // for large files, one buffer for the walk
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && path != dir {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		h := sha256.New()
		if err := hashFile(h, path, &buf); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash workspace %s: %w", dir, err)
	}
	return out, nil
}

// changedByHash lists the paths whose content differs from the manifest.
func (w *Workspace) changedByHash() ([]string, error) {
	now, err := hashTree(w.Dir)
	if err != nil {
		return nil, err
	}
	var changed []string
	for p, h := range now {
		if w.manifest[p] != h {
			changed = append(changed, p)
		}
	}
	for p := range w.manifest {
		if _, ok := now[p]; !ok {
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// hashFile writes the file's content to h: a small file read whole (most
// of a source tree), the rest of a large one through *buf.
func hashFile(h io.Writer, path string, buf *[]byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head, more, err := readHead(f)
	if err != nil {
		return err
	}
	h.Write(head)
	if !more {
		return nil
	}
	if *buf == nil {
		*buf = make([]byte, 32<<10)
	}
	_, err = io.CopyBuffer(h, onlyReader{f}, *buf)
	return err
}

// readHead reads f from where it is, whole when it is small (most of a
// source tree): it returns up to smallFile+1 bytes and whether there is
// more to read after them.
func readHead(f *os.File) (head []byte, more bool, err error) {
	head, err = io.ReadAll(io.LimitReader(f, smallFile+1))
	return head, int64(len(head)) > smallFile, err
}

// smallFile is the size up to which a file is read whole.
const smallFile = 64 << 10

// onlyReader hides a file's WriteTo, so that io.CopyBuffer uses the
// buffer it is given instead of allocating one per file.
type onlyReader struct{ io.Reader }
