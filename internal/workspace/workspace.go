// Package workspace owns a run's isolated working copy: copying the source
// into the run's folder (never touching the source), recording the base
// state as a git commit with a fixed identity and date (so the same tree
// always has the same base commit), and computing at the end the unified
// diff — new, deleted and binary files included, applicable with git apply —
// and the changed paths. It spawns a handful of git processes per run, never
// one per file.
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/proc"
)

// Limits bound the source that may be copied.
type Limits struct {
	MaxFiles int
	MaxBytes int64
}

// ErrTooBig is wrapped when the source is over a bound.
var ErrTooBig = errors.New("source is over the workspace bounds")

// Workspace is a working copy with a recorded base commit.
type Workspace struct {
	Dir  string
	Base string // the base commit; "" for a workspace without git

	manifest map[string]string // content hashes at the start, without git
}

// Fixed identity and date of base commits.
const (
	gitName  = "proctor"
	gitEmail = "proctor@localhost"
	gitDate  = "2000-01-01T00:00:00Z"
)

// Create copies src into dir (which must not exist), leaving out src's .git,
// and commits the copy as the base with message in proctor's repository
// (GitDir); the workspace gets a .git of its own for the agent.
func Create(ctx context.Context, src, dir, message string, lim Limits) (*Workspace, error) {
	return CreateWith(ctx, src, dir, lim, Options{Message: message})
}

// Init makes dir (which must not exist) an empty workspace with proctor's
// repository beside it, for a commit to be fetched into (GitDir) and
// checked out (CheckOut).
func Init(ctx context.Context, dir string) (*Workspace, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	w := &Workspace{Dir: dir}
	return w, w.repo().init(ctx, true)
}

// CheckOut writes the files of commit, which proctor's repository holds,
// into the workspace, makes it the base and gives the agent its .git.
func (w *Workspace) CheckOut(ctx context.Context, commit string) error {
	if _, err := w.git(ctx, "checkout", "-q", "--detach", commit); err != nil {
		return err
	}
	w.Base = commit
	return w.giveAgentRepo(ctx, "")
}

// Open returns the workspace in dir with its recorded base commit.
func Open(dir, base string) *Workspace { return &Workspace{Dir: dir, Base: base} }

func (w *Workspace) repo() repo { return repo{gitDir: GitDir(w.Dir), workTree: w.Dir} }

func (w *Workspace) initRepo(ctx context.Context, message string) error {
	if err := w.repo().init(ctx, true); err != nil {
		return err
	}
	if _, err := w.git(ctx, "add", "-A"); err != nil {
		return err
	}
	if _, err := w.git(ctx, "commit", "-q", "--allow-empty", "--no-verify", "-m", message); err != nil {
		return err
	}
	head, err := w.Head(ctx)
	w.Base = head
	return err
}

// giveAgentRepo makes the workspace's own .git, the agent's to use as it
// likes: its main branch is the base commit, its objects are read (never
// written) from proctor's repository through an alternate, and its index
// is a copy of proctor's, so git in the workspace sees a clean checkout of
// the base. origin, when set, is added as its remote.
func (w *Workspace) giveAgentRepo(ctx context.Context, origin string) error {
	a := repo{gitDir: filepath.Join(w.Dir, ".git"), workTree: w.Dir}
	if err := a.init(ctx, false); err != nil {
		return err
	}
	own := GitDir(w.Dir)
	if err := os.WriteFile(filepath.Join(a.gitDir, "objects", "info", "alternates"), []byte(filepath.Join(own, "objects")+"\n"), 0o644); err != nil {
		return fmt.Errorf("give the agent a repository: %w", err)
	}
	if _, err := a.run(ctx, nil, "update-ref", "refs/heads/main", w.Base); err != nil {
		return err
	}
	if origin != "" {
		if _, err := a.run(ctx, nil, "remote", "add", "origin", origin); err != nil {
			return err
		}
		if _, err := a.run(ctx, nil, "update-ref", "refs/remotes/origin/main", w.Base); err != nil {
			return err
		}
	}
	index, err := os.ReadFile(filepath.Join(own, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // an empty base
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(a.gitDir, "index"), index, 0o644)
	}
	if err != nil {
		return fmt.Errorf("give the agent a repository: %w", err)
	}
	return nil
}

// Head is the workspace's current commit in proctor's repository.
func (w *Workspace) Head(ctx context.Context) (string, error) {
	out, err := w.git(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// git runs git in proctor's repository of the workspace.
func (w *Workspace) git(ctx context.Context, args ...string) (string, error) {
	return w.repo().run(ctx, nil, args...)
}

// Diff returns the unified diff from the base commit to the working tree
// (binary, new and deleted files included; renames as delete and add) and
// the changed paths, sorted.
func (w *Workspace) Diff(ctx context.Context) (string, []string, error) {
	if w.manifest != nil {
		changed, err := w.changedByHash()
		return "", changed, err
	}
	if _, err := w.git(ctx, "add", "-A"); err != nil {
		return "", nil, err
	}
	patch, err := w.git(ctx, append(append([]string{"diff", "--cached"}, diffFormat...), w.Base)...)
	if err != nil {
		return "", nil, err
	}
	names, err := w.git(ctx, "diff", "--cached", "--name-only", "--no-renames", "-z", w.Base)
	if err != nil {
		return "", nil, err
	}
	var changed []string
	for _, n := range strings.Split(names, "\x00") {
		if n != "" {
			changed = append(changed, n)
		}
	}
	return patch, changed, nil
}

// TreeEntry is a path of a commit: its git mode (100644, 100755, 120000
// for a link, 160000 for a repository) and blob id.
type TreeEntry struct {
	Mode, Blob string
}

// BaseEntries returns the entries of paths in the base commit; a path the
// base does not have is left out.
func (w *Workspace) BaseEntries(ctx context.Context, paths []string) (map[string]TreeEntry, error) {
	out := map[string]TreeEntry{}
	if len(paths) == 0 {
		return out, nil
	}
	args := append([]string{"ls-tree", "-z", "--full-tree", w.Base, "--"}, paths...)
	list, err := w.git(ctx, args...)
	if err != nil {
		return nil, err
	}
	for _, entry := range strings.Split(list, "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok {
			continue
		}
		fields := strings.Fields(meta)
		if len(fields) == 3 {
			out[path] = TreeEntry{Mode: fields[0], Blob: fields[2]}
		}
	}
	return out, nil
}

// Tree lists every file of commit (links and submodules too), by slash
// path. Nothing of the tree's own (its .gitattributes) is obeyed: files are
// read with Show, blob by blob.
func (w *Workspace) Tree(ctx context.Context, commit string) (map[string]TreeEntry, error) {
	list, err := w.git(ctx, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	out := map[string]TreeEntry{}
	for _, entry := range strings.Split(list, "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok {
			continue
		}
		if fields := strings.Fields(meta); len(fields) == 3 {
			out[path] = TreeEntry{Mode: fields[0], Blob: fields[2]}
		}
	}
	return out, nil
}

// copyInto copies the folder src to dir, which must not exist yet. When
// manifest is not nil, it gets the content hash of every regular file
// copied, as hashTree(dir) would give it.
func copyInto(src, dir string, lim Limits, manifest map[string]string) error {
	info, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("source %s: %w", src, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("source %s is not a folder", src)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	return copyTree(src, dir, lim, manifest)
}

// copyTree copies regular files, folders and symlinks from src to dst,
// leaving out src/.git, within the limits, hashing the files into manifest
// when it is not nil.
func copyTree(src, dst string, lim Limits, manifest map[string]string) error {
	files := 0
	var total int64
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy source: %w", err)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		if d.Name() == ".git" { // a repository (or a link to one) is not part of the source
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("copy source: %w", err)
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("copy source: %w", err)
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			files++
			total += info.Size()
			if lim.MaxFiles > 0 && files > lim.MaxFiles {
				return fmt.Errorf("%w: %s holds more than max_files (%d) files", ErrTooBig, src, lim.MaxFiles)
			}
			if lim.MaxBytes > 0 && total > lim.MaxBytes {
				return fmt.Errorf("%w: %s holds more than max_workspace_bytes (%d bytes)", ErrTooBig, src, lim.MaxBytes)
			}
			if manifest == nil {
				return copyFile(path, target, info.Mode().Perm(), nil)
			}
			var sum [sha256.Size]byte
			if err := copyFile(path, target, info.Mode().Perm(), &sum); err != nil {
				return err
			}
			manifest[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
			return nil
		}
		return nil // sockets, devices and pipes are not copied
	})
}

// copyFile copies a regular file; when sum is not nil it gets the SHA-256
// of the content written.
func copyFile(src, dst string, perm fs.FileMode, sum *[sha256.Size]byte) error {
	in, err := osfile.Open(src, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO swapped in is not waited on
	if err != nil {
		return fmt.Errorf("copy source: %w", err)
	}
	defer in.Close()
	out, err := osfile.Open(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("copy source: %w", err)
	}
	// Small files (most of a source tree) are read whole; the rest of a
	// larger one is copied by the kernel (copy_file_range) or io.Copy.
	head, more, err := readHead(in)
	if err == nil {
		_, err = out.Write(head)
	}
	if err != nil {
		out.Close()
		return fmt.Errorf("copy source: %w", err)
	}
	if !more {
		if sum != nil {
			*sum = sha256.Sum256(head)
		}
		return out.Close()
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy source: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy source: %w", err)
	}
	if sum != nil {
		// The rest was copied by the kernel: hash what was written.
		h := sha256.New()
		var buf []byte
		if err := hashFile(h, dst, &buf); err != nil {
			return fmt.Errorf("hash copy: %w", err)
		}
		h.Sum(sum[:0])
	}
	return nil
}

// CopyOf makes dir a copy of the workspace at from — proctor's repository
// and the files as they are, the agent's .git among them — diffed against
// base, a commit of it: a run that resumes an interrupted one goes on from
// where that one stopped, and its diff holds both runs' changes.
func CopyOf(ctx context.Context, from, dir, base string) (*Workspace, error) {
	for _, c := range [][2]string{{GitDir(from), GitDir(dir)}, {from, dir}} {
		if err := os.MkdirAll(c[1], 0o755); err != nil {
			return nil, fmt.Errorf("copy workspace %s: %w", from, err)
		}
		// cp -a copies links as links and follows none of them.
		if out, err := proc.Command(ctx, "cp", "-a", "--", c[0]+"/.", c[1]).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copy workspace %s: %v: %s", from, err, strings.TrimSpace(string(out)))
		}
	}
	w := Open(dir, base)
	if !w.HasCommit(ctx, base) {
		return nil, fmt.Errorf("copy workspace %s: it does not hold the base commit %s", from, base)
	}
	return w, nil
}

// Checkpoint commits the working tree as it is and returns the commit, so
// that the next diff starts from here.
func (w *Workspace) Checkpoint(ctx context.Context, message string) (string, error) {
	if _, err := w.git(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := w.git(ctx, "commit", "-q", "--allow-empty", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	return w.Head(ctx)
}

// Extract writes the files of commit (only paths, when given) into dst.
func (w *Workspace) Extract(ctx context.Context, commit, dst string, paths ...string) error {
	args := []string{"archive", "--format=tar", commit}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	out, err := w.git(ctx, args...)
	if err != nil {
		return err
	}
	return untar(strings.NewReader(out), dst)
}

// Show is the content of the file path (slash-separated) at commit.
func (w *Workspace) Show(ctx context.Context, commit, path string) ([]byte, error) {
	out, err := w.git(ctx, "cat-file", "blob", commit+":"+path)
	return []byte(out), err
}

// HasCommit reports whether the workspace repository holds commit.
func (w *Workspace) HasCommit(ctx context.Context, commit string) bool {
	_, err := w.git(ctx, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// ApplyPatch applies a patch made by Diff to the files in dir with git
// apply, outside of any repository (dir's parents are never searched for
// one). dir holds exactly the files the patch was made against, so its
// hunks' positions are trusted (--unidiff-zero): a hunk a reviewer edited
// may have no trailing context and is still not taken for the file's end.
func ApplyPatch(ctx context.Context, dir, patch string) error {
	_, err := repo{workTree: dir}.run(ctx, strings.NewReader(patch), "apply", "--whitespace=nowarn", "--unidiff-zero", "-")
	return err
}
