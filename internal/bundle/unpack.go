package bundle

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/osfile"
)

// MaxUnpackBytes bounds what Unpack writes for one run: a pack from
// elsewhere may claim any size (a sparse entry needs no data to claim
// terabytes), and a run's workspace is bounded far below this.
const MaxUnpackBytes = 4 << 30

// Unpack extracts run id from the pack into a new folder dest, which must
// not exist yet; it appears whole or not at all. A run of a pushed pack
// (Pushed) is unpacked without its repositories. Every file operation goes
// through an os.Root on the new folder, so no entry is written outside it
// or through a symlink that leads out of it; symlinks are made last, and
// one that is absolute or resolves outside the folder (checked, again
// through the root, once all are made) fails the unpacking. At most
// MaxUnpackBytes are written.
func Unpack(pack, id, dest string) error {
	if !ValidID(id) {
		return fmt.Errorf("unpack: run id %q is not a safe name", id)
	}
	f, err := os.Open(pack)
	if err != nil {
		return fmt.Errorf("unpack %s: %w", PackRef(pack, id), err)
	}
	defer f.Close()
	err = osfile.Publish(dest, func(tmp string) error {
		root, err := os.OpenRoot(tmp)
		if err != nil {
			return err
		}
		defer root.Close()
		return unpackInto(root, f, pack, id)
	})
	if err != nil {
		return fmt.Errorf("unpack %s: %w", PackRef(pack, id), err)
	}
	return nil
}

// unpackInto writes run id of the pack (read from f) through root: every
// entry of the run, within MaxUnpackBytes, its links last.
func unpackInto(root *os.Root, f io.Reader, pack, id string) error {
	var links []packLink
	found, done := false, false
	budget := int64(MaxUnpackBytes)
	pushed, written := Pushed(pack), map[string]bool{}
	tr := tar.NewReader(bufio.NewReader(f))
	for !done {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if found {
				break // a damaged tail after the run
			}
			return err
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		rid, rest, _ := strings.Cut(name, "/")
		if rid != id {
			if found {
				done = true // a run's entries are together
			}
			continue
		}
		found = true
		if rest == "" {
			continue
		}
		if !validRelPath(rest) {
			return fmt.Errorf("entry %q is not a path inside the run folder", hdr.Name)
		}
		if first, _, _ := strings.Cut(rest, "/"); pushed && (repositories[first] || strings.HasPrefix(first, ".")) {
			continue // a pushed run's repository (or a journal, a lock) is data this host never opens
		}
		if written[rest] {
			continue // a second copy of the run, right after the first: the first is kept
		}
		written[rest] = true
		l, err := unpackEntry(root, tr, hdr, filepath.FromSlash(rest), &budget)
		if err != nil {
			return err
		}
		if l != nil {
			links = append(links, *l)
		}
	}
	if !found {
		return fmt.Errorf("no run %s in the pack", id)
	}
	if _, err := root.Lstat(ReceiptFile); err != nil {
		return errors.New("run.json: missing (the pack was cut short while this run was added)")
	}
	if err := makeLinks(root, links); err != nil {
		return err
	}
	return nil
}

// packLink is a symlink of an unpacked run, made once every file is there.
type packLink struct{ name, target string }

// unpackEntry writes one entry of a run through root (target is its path
// in the run folder), within budget bytes; a symlink is returned to be made
// last.
func unpackEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, target string, budget *int64) (*packLink, error) {
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(target, 0o755); err != nil {
			return nil, fmt.Errorf("entry %q: %w", hdr.Name, err)
		}
	case tar.TypeReg:
		if hdr.Size > *budget {
			return nil, fmt.Errorf("entry %q: the run would take more than %s unpacked", hdr.Name, humanBytes(MaxUnpackBytes))
		}
		*budget -= hdr.Size
		if err := root.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, fmt.Errorf("entry %q: %w", hdr.Name, err)
		}
		out, err := root.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fs.FileMode(hdr.Mode)&0o755|0o600)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", hdr.Name, err)
		}
		_, err = io.CopyN(out, tr, hdr.Size)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return nil, err
	case tar.TypeSymlink:
		if filepath.IsAbs(hdr.Linkname) || hdr.Linkname == "" {
			return nil, fmt.Errorf("entry %q: a symlink to %q, which is not a path inside the run folder", hdr.Name, hdr.Linkname)
		}
		return &packLink{target, hdr.Linkname}, nil
	}
	return nil, nil
}

// makeLinks makes an unpacked run's symlinks, then follows each through
// root: one that leads out of the folder (directly or through another link)
// is an error there; one that leads nowhere inside it is only dangling.
func makeLinks(root *os.Root, links []packLink) error {
	for _, l := range links {
		if err := root.MkdirAll(filepath.Dir(l.name), 0o755); err != nil {
			return fmt.Errorf("symlink %q: %w", filepath.ToSlash(l.name), err)
		}
		if err := root.Symlink(l.target, l.name); err != nil {
			return fmt.Errorf("symlink %q: %w", filepath.ToSlash(l.name), err)
		}
	}
	for _, l := range links {
		if _, err := root.Stat(l.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("symlink %q -> %q leads out of the run folder", filepath.ToSlash(l.name), l.target)
		}
	}
	return nil
}

// Unpacked returns the folder that holds the bundle at ref: ref itself
// when it is a folder, else the run extracted from its pack into cache
// (a data folder's runs/.unpacked, which the index never reads), made on
// first use. A pack's runs go in a folder named after the pack and a hash
// of its path, so packs of the same name elsewhere do not meet, and
// nothing is written beside a pack that is not the data folder's.
func Unpacked(ref, cache string) (string, error) {
	pack, id, ok := SplitPackRef(ref)
	if !ok {
		return ref, nil
	}
	abs, err := filepath.Abs(pack)
	if err != nil {
		return "", fmt.Errorf("unpack %s: %w", ref, err)
	}
	sum := sha256.Sum256([]byte(abs))
	dest := filepath.Join(cache, strings.TrimSuffix(filepath.Base(pack), PackSuffix)+"-"+hex.EncodeToString(sum[:4]), id)
	if _, err := os.Stat(filepath.Join(dest, ReceiptFile)); err == nil {
		return dest, nil
	}
	if err := Unpack(pack, id, dest); err != nil {
		if _, serr := os.Stat(filepath.Join(dest, ReceiptFile)); serr == nil {
			return dest, nil // another reader extracted it first
		}
		return "", err
	}
	return dest, nil
}

// UnpackCache is the folder of a data folder where packed runs are
// unpacked.
func UnpackCache(dataDir string) string { return filepath.Join(dataDir, "runs", ".unpacked") }

// DecisionsOf is the folder that keeps the decisions on the runs of the
// pack at pack — <data>/decisions/<pack's name> for a pack in a data
// folder's runs/ — and false for a pack elsewhere. A pack is never
// written again, so a review of one of its runs works in a folder of its
// own there (DecisionDir): a copy of the run's files (never its
// repositories) that holds the journal, the receipt with the decision and
// its event. It is the record, not a cache: the index reads a reviewed
// packed run from it, and no review of the run happens twice while it is
// there.
func DecisionsOf(pack string) (string, bool) {
	runs := filepath.Dir(pack)
	if filepath.Base(runs) != "runs" || !strings.HasSuffix(pack, PackSuffix) {
		return "", false
	}
	return filepath.Join(filepath.Dir(runs), "decisions", strings.TrimSuffix(filepath.Base(pack), PackSuffix)), true
}

// DecisionDir is the decision folder of run id of the pack (DecisionsOf),
// whether or not it has been made.
func DecisionDir(pack, id string) (string, bool) {
	dir, ok := DecisionsOf(pack)
	if !ok || !ValidID(id) {
		return "", false
	}
	return filepath.Join(dir, id), true
}

// Readable is the folder to read the bundle at ref (a folder, or a packed
// run's PACK#ID) from: a folder itself; a reviewed packed run's decision
// folder; else the run unpacked into cache.
func Readable(ref, cache string) (string, error) {
	pack, id, ok := SplitPackRef(ref)
	if !ok {
		return ref, nil
	}
	if dir, ok := DecisionDir(pack, id); ok {
		if _, err := os.Stat(filepath.Join(dir, ReceiptFile)); err == nil {
			return dir, nil
		}
	}
	return Unpacked(ref, cache)
}

// MakeDecisionDir makes the decision folder of the packed run at ref,
// when it is not there yet, from the run unpacked into cache: its
// top-level files (never its folders: a workspace, a repository, an
// agent's home; never a dot-file: a journal or a lock); it appears whole
// or not at all. It returns the folder.
func MakeDecisionDir(ref, cache string) (string, error) {
	pack, id, ok := SplitPackRef(ref)
	if !ok {
		return "", fmt.Errorf("%s is not a packed run", ref)
	}
	dir, ok := DecisionDir(pack, id)
	if !ok {
		return "", fmt.Errorf("run %s: its pack %s is not in a data folder's runs/, so a decision on it has nowhere to be kept", id, pack)
	}
	if _, err := os.Stat(filepath.Join(dir, ReceiptFile)); err == nil {
		return dir, nil
	}
	from, err := Unpacked(ref, cache)
	if err != nil {
		return "", err
	}
	err = osfile.Publish(dir, func(tmp string) error {
		entries, err := os.ReadDir(from)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				return err
			}
			if err := osfile.WriteFile(filepath.Join(tmp, e.Name()), 0o644, true, osfile.Bytes(data)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ReceiptFile)); serr == nil {
			return dir, nil // another review made it first
		}
		return "", fmt.Errorf("keep the decision on %s: %w", ref, err)
	}
	return dir, nil
}
