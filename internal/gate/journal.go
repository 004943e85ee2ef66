package gate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
)

// The review journal of a run is the folder <run>/.review, which appears
// whole (written as .review.tmp-<op>, then renamed) and holds:
//
//	journal.json   the decision, who made it, and for each file it writes
//	               the git blob before (base) and after (new)
//	new/<path>     the file as the approved diff makes it
//	base/<path>    the file as it was in the source (to roll back)
//
// Its state is "applying" until the receipt holds the decision, then
// "recorded" until the caller's Record has run; then the folder is removed.
const (
	journalDir    = ".review"
	journalName   = "journal.json"
	journalSchema = "proctor.review-journal.v1"
	stateApplying = "applying"
	stateRecorded = "recorded"
)

// journalFile is a file a review writes. Its states (base, new) are git
// blob ids of regular files, linkState and the blob of a link's target for
// links, or "" for no file.
type journalFile struct {
	Path      string `json:"path"`                 // slash-separated, relative to the source
	PathBytes []byte `json:"path_bytes,omitempty"` // Path, when it is not UTF-8 (JSON text would lose its bytes)
	Base      string `json:"base,omitempty"`       // state before; "" when the file did not exist
	New       string `json:"new,omitempty"`        // state after; "" when the diff deletes it
	Mode      uint32 `json:"mode,omitempty"`
	Target    string `json:"target,omitempty"` // a link's target, after
}

type journal struct {
	Schema     string        `json:"schema"`
	Op         string        `json:"op"`
	RunID      string        `json:"run_id"`
	State      string        `json:"state"`
	Review     bundle.Review `json:"review"`
	Forced     bool          `json:"forced,omitempty"`
	RolledBack bool          `json:"rolled_back,omitempty"`
	Detail     string        `json:"detail,omitempty"`
	Actor      string        `json:"actor,omitempty"`
	Address    string        `json:"address,omitempty"`
	Source     string        `json:"source,omitempty"` // the tree it writes; checked against the receipt
	Files      []journalFile `json:"files,omitempty"`
}

func (j *journal) decided() Decided {
	return Decided{Op: j.Op, RunID: j.RunID, Review: j.Review, Forced: j.Forced, RolledBack: j.RolledBack, Detail: j.Detail, Actor: j.Actor, Address: j.Address}
}

func newOp() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lock takes the run's review lock: an exclusive flock on the bundle folder
// itself, waiting up to wait (and while ctx lasts) for another review to
// end, so the second of two reviews at once sees the first's decision. The
// kernel drops it when the process dies, however it dies: there is no lock
// file to go stale.
func lock(ctx context.Context, runDir string, wait time.Duration) (func(), error) {
	ctx, cancel := context.WithTimeoutCause(ctx, wait, ErrBusy)
	defer cancel()
	l, err := flock.Wait(ctx, runDir, false)
	switch {
	case errors.Is(err, ErrBusy):
		return nil, ErrBusy
	case err != nil:
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// writeJournal makes the journal entry durable, with the files it will
// write and the source's current copies of them, before anything in the
// source is touched.
func writeJournal(runDir string, j *journal, contents map[string][]byte) error {
	if err := clearStaging(runDir); err != nil {
		return err
	}
	tmp := filepath.Join(runDir, journalDir+".tmp-"+j.Op)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("write review journal of %s: %w", j.RunID, err)
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	var src *os.Root
	if len(j.Files) > 0 {
		if src, err = os.OpenRoot(j.Source); err != nil {
			return fmt.Errorf("open source %s: %w", j.Source, err)
		}
		defer src.Close()
	}
	for i, f := range j.Files {
		if !utf8.ValidString(f.Path) {
			j.Files[i].PathBytes = []byte(f.Path)
		}
		if f.New != "" {
			if err := writeSynced(root, path.Join("new", f.Path), contents[f.Path], 0o600); err != nil {
				return err
			}
		}
		if f.Base != "" {
			data, state, err := readState(src, f.Path)
			if err != nil {
				return fmt.Errorf("keep %s to roll back: %w", bundle.PathName(f.Path), err)
			}
			if state != f.Base {
				return &ConflictError{Files: []string{bundle.PathName(f.Path)}}
			}
			if err := writeSynced(root, path.Join("base", f.Path), data, 0o600); err != nil {
				return err
			}
		}
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := writeSynced(root, journalName, data, 0o600); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(runDir, journalDir)); err != nil {
		return fmt.Errorf("commit review journal of %s: %w", j.RunID, err)
	}
	return syncDir(runDir)
}

// saveJournal rewrites journal.json of the committed journal.
func saveJournal(runDir string, j *journal) error {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return osfile.WriteFile(filepath.Join(runDir, journalDir, journalName), 0o600, true, osfile.Bytes(data))
}

func readJournal(runDir string) (*journal, error) {
	data, err := os.ReadFile(filepath.Join(runDir, journalDir, journalName))
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("review journal of %s: %w", runDir, err)
	}
	if j.Schema != journalSchema || (j.State != stateApplying && j.State != stateRecorded) {
		return nil, fmt.Errorf("review journal of %s: schema %q, state %q: not one this proctor reads", runDir, j.Schema, j.State)
	}
	for i, f := range j.Files {
		if f.PathBytes != nil {
			f.Path = string(f.PathBytes)
			j.Files[i].Path = f.Path
		}
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || strings.Contains(f.Path, `\`) {
			return nil, fmt.Errorf("review journal of %s: file %q is not a path inside the source", runDir, f.Path)
		}
	}
	return &j, nil
}

// removeJournal deletes the finished journal entry.
func removeJournal(runDir string) error {
	if err := os.RemoveAll(filepath.Join(runDir, journalDir)); err != nil {
		return fmt.Errorf("remove the review journal of %s: %w", runDir, err)
	}
	return nil
}

// clearStaging removes journal folders that were never committed (a crash
// while one was written): nothing in the source was touched for them.
func clearStaging(runDir string) error {
	matches, _ := filepath.Glob(filepath.Join(runDir, journalDir+".tmp-*"))
	for _, m := range matches {
		if err := os.RemoveAll(m); err != nil {
			return fmt.Errorf("remove unfinished review journal %s: %w", m, err)
		}
	}
	return nil
}

// settleSource brings the source to the journal's "after" state: a file
// already as the diff makes it is left, a file still at its base is written.
// A file that is neither was changed by someone else since: then every file
// this review wrote is put back as it was, and the journal is marked rolled
// back.
func settleSource(runDir string, j *journal) error {
	if len(j.Files) == 0 || j.RolledBack {
		return nil
	}
	src, err := os.OpenRoot(j.Source)
	if err != nil {
		return fmt.Errorf("open source %s: %w", j.Source, err)
	}
	defer src.Close()
	staged, err := os.OpenRoot(filepath.Join(runDir, journalDir))
	if err != nil {
		return err
	}
	defer staged.Close()
	var conflicts, written []string
	var todo []journalFile
	for _, f := range j.Files {
		_, cur, err := readState(src, f.Path)
		if err != nil {
			return fmt.Errorf("read %s: %w", bundle.PathName(f.Path), err)
		}
		switch cur {
		case f.New:
			written = append(written, f.Path)
		case f.Base:
			todo = append(todo, f)
		default:
			conflicts = append(conflicts, f.Path)
		}
	}
	if len(conflicts) > 0 {
		for _, f := range j.Files {
			if slices.Contains(written, f.Path) && f.New != f.Base {
				if err := put(src, staged, f.Path, "base", f.Base, f.Mode); err != nil {
					return fmt.Errorf("roll back %s: %w", f.Path, err)
				}
			}
		}
		j.RolledBack, j.Review.Applied, j.Review.Changed = true, false, nil
		var names []string
		for _, c := range conflicts {
			names = append(names, bundle.PathName(c))
		}
		j.Detail = "the source changed while the approved diff was being applied (" + strings.Join(names, ", ") + "), so what was written is undone and nothing is applied"
		return nil
	}
	for _, f := range todo {
		if err := put(src, staged, f.Path, "new", f.New, f.Mode); err != nil {
			return fmt.Errorf("apply %s: %w", f.Path, err)
		}
	}
	// Applied only when the source now holds every file as the diff makes
	// it: a file that could not be written is never reported as applied.
	j.Review.Changed = nil
	for _, f := range j.Files {
		if _, cur, err := readState(src, f.Path); err != nil || cur != f.New {
			return fmt.Errorf("apply %s: the source does not hold it as the diff makes it after it was written", bundle.PathName(f.Path))
		}
		j.Review.Changed = append(j.Review.Changed, bundle.PathName(f.Path))
	}
	j.Review.Applied = true
	return nil
}

// put makes the source file p what side ("new" or "base") of the journal
// says: its staged copy (a link's target, for a link, made as a link), or
// no file when state is "".
func put(src, staged *os.Root, p, side, state string, mode uint32) error {
	name := filepath.FromSlash(p)
	if state == "" {
		if err := src.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := staged.ReadFile(path.Join(side, p))
	if err != nil {
		return err
	}
	if isLink(state) {
		if linkState+blobOfData(data) != state {
			return fmt.Errorf("the journal's copy of %s is damaged", bundle.PathName(p))
		}
		return linkSynced(src, name, string(data))
	}
	if blobOfData(data) != state {
		return fmt.Errorf("the journal's copy of %s is damaged", bundle.PathName(p))
	}
	if mode == 0 {
		mode = 0o644
	}
	return writeSynced(src, name, data, fs.FileMode(mode))
}

// linkSynced makes name inside root a link to target, atomically: a link
// beside it, renamed over it (over the file or link there, never through
// it), and the folder synced.
func linkSynced(root *os.Root, name, target string) error {
	dir := filepath.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".proctor-"+newOp()+".tmp")
	if err := root.Symlink(target, tmp); err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeSynced writes name inside root atomically and durably
// (osfile.WriteAtomic), making its folder first.
func writeSynced(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return osfile.WriteAtomic(root, name, mode, true, osfile.Bytes(data))
}

func syncDir(dir string) error { return osfile.SyncDir(dir) }

// Recover finishes or rolls back the review journaled in runDir by a
// process that stopped before it was done, and reports what it settled
// (nil when there was nothing).
func Recover(ctx context.Context, runDir string, record func(context.Context, Decided) error) (*Decided, error) {
	unlock, err := lock(ctx, runDir, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return recoverLocked(ctx, runDir, record, time.Now)
}

func recoverLocked(ctx context.Context, runDir string, record func(context.Context, Decided) error, now func() time.Time) (*Decided, error) {
	if err := clearStaging(runDir); err != nil {
		return nil, err
	}
	j, err := readJournal(runDir)
	if errors.Is(err, fs.ErrNotExist) {
		// A folder without journal.json was being removed: it is done.
		return nil, removeJournal(runDir)
	}
	if err != nil {
		return nil, err
	}
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("recover review of %s: %w", runDir, err)
	}
	// The journal names the tree it writes (the host chose it, not the
	// receipt); it must be this run's.
	if b.Receipt.RunID != j.RunID {
		return nil, fmt.Errorf("recover review of %s: the journal is for run %s on %s, not this run; remove %s by hand after checking the source",
			runDir, j.RunID, j.Source, filepath.Join(runDir, journalDir))
	}
	if _, err := finish(ctx, runDir, j, record, now); err != nil && !j.RolledBack {
		return nil, err
	}
	d := j.decided()
	return &d, nil
}

// RecoverAll recovers every run folder under runsDir that holds a review
// journal, and reports what it settled; a run it cannot settle is an error
// in the list, and the others go on.
func RecoverAll(ctx context.Context, runsDir string, record func(context.Context, Decided) error) ([]Decided, []error) {
	entries, err := os.ReadDir(runsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("recover reviews under %s: %w", runsDir, err)}
	}
	var done []Decided
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !bundle.ValidID(e.Name()) {
			continue
		}
		dir := filepath.Join(runsDir, e.Name())
		staged, _ := filepath.Glob(filepath.Join(dir, journalDir+"*"))
		if len(staged) == 0 {
			continue
		}
		d, err := Recover(ctx, dir, record)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d != nil {
			done = append(done, *d)
		}
	}
	return done, errs
}
