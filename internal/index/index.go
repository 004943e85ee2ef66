package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// OrphanReason is what an orphaned run's run.interrupted event says when
// the indexer marks it.
const OrphanReason = "the process running it stopped before it finished (no process holds its events log)"

// Indexer indexes run bundles into a store.
type Indexer struct {
	store     *store.Store
	limits    bundle.Limits
	batchSize int
	workers   int
}

// New returns an indexer writing to st with the default read limits.
func New(st *store.Store) *Indexer {
	return &Indexer{store: st, limits: bundle.DefaultLimits(), batchSize: 256, workers: 2}
}

// Report says what one Index call did.
type Report struct {
	Indexed   int // bundles read and written (new or changed)
	Unchanged int // bundles skipped because their fingerprint had not changed
	Removed   int // bundles forgotten because they are gone from disk
	Broken    int // bundles with at least one problem
	// Interrupted counts runs that said they were working but that no
	// process holds: they were marked interrupted before being indexed.
	Interrupted int
	// Repaired are the packs a killed writer left torn, cut back to their
	// whole runs before they were read.
	Repaired []string
	Problems []PathProblem // every problem found in this pass
}

// PathProblem is a problem with the bundle it was found in.
type PathProblem struct {
	Bundle string
	bundle.Problem
}

type candidate struct {
	path string
	kind store.BundleKind
	pack bool // a pack file of run bundles (kind run)
}

// Index indexes every run bundle and session file found under each root.
// Bundles indexed earlier under a root that are gone from it are forgotten.
// A bundle that cannot be read is recorded as a problem and the rest go on;
// only a failure of the store itself stops the pass. Bundles from all roots
// are written in shared batches, so indexing many single bundles at once
// (a suite's runs) costs a few transactions, not one each.
func (ix *Indexer) Index(ctx context.Context, roots ...string) (Report, error) {
	p := &pass{fingerprints: map[string]string{}}
	seenRoot := map[string]bool{}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return p.rep, fmt.Errorf("index %s: %w", root, err)
		}
		if seenRoot[abs] {
			continue
		}
		seenRoot[abs] = true
		if err := ix.scan(ctx, abs, p); err != nil {
			return p.rep, err
		}
	}
	err := ix.write(ctx, p)
	return p.rep, err
}

// pass is what one Index call has found so far.
type pass struct {
	rep          Report
	packs        []candidate         // packs that changed, to read run by run
	packKnown    map[string][]string // their runs as indexed before (PACK#ID): gone unless read again
	todo         []candidate         // bundle folders and session files to read
	removed      []string            // indexed paths that are gone
	fingerprints map[string]string   // path → fingerprint, of every bundle seen
}

// scan walks one root: it compares each bundle's fingerprint with the
// index's, marks orphaned runs interrupted, reads changed packs, and notes
// what is new, changed or gone.
func (ix *Indexer) scan(ctx context.Context, abs string, p *pass) error {
	cands, walkProblems, err := walk(ctx, abs)
	if err != nil {
		return fmt.Errorf("index %s: %w", abs, err)
	}
	for _, wp := range walkProblems {
		p.rep.Problems = append(p.rep.Problems, PathProblem{Bundle: abs, Problem: wp})
	}
	known, err := ix.store.Fingerprints(ctx, abs)
	if err != nil {
		return err
	}
	live, err := ix.store.LiveRunPaths(ctx, abs)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(cands))
	packs := map[string]string{} // pack path → fingerprint, for packs that have not changed
	changed := map[string]bool{} // packs to read again
	for _, c := range cands {
		seen[c.path] = true
		if _, dup := p.fingerprints[c.path]; dup {
			continue // under two roots
		}
		fp := ix.fingerprint(c, known[c.path], live[c.path], &p.rep)
		p.fingerprints[c.path] = fp
		switch {
		case c.pack && ix.packUnchanged(c.path, fp, known):
			packs[c.path] = fp
		case c.pack:
			p.packs = append(p.packs, c)
			changed[c.path] = true
		case known[c.path] == fp:
			p.rep.Unchanged++
		default:
			p.todo = append(p.todo, c)
		}
	}
	for path := range known {
		if pack, _, ok := bundle.SplitPackRef(path); ok && packs[pack] != "" {
			seen[path] = true
			p.rep.Unchanged++
		}
	}
	for path := range known {
		pack, _, ok := bundle.SplitPackRef(path)
		switch {
		case seen[path]:
		case ok && changed[pack]: // gone unless the pack still holds it
			if p.packKnown == nil {
				p.packKnown = map[string][]string{}
			}
			p.packKnown[pack] = append(p.packKnown[pack], path)
		default:
			p.removed = append(p.removed, path)
		}
	}
	return nil
}

// fingerprint is a candidate's fingerprint. A run folder that changed (or
// is indexed as working) and that says it works with no process holding it
// is marked interrupted first, so the index reads what it says now.
func (ix *Indexer) fingerprint(c candidate, known string, live bool, rep *Report) string {
	fp, err := fingerprint(c)
	if c.pack && fp != known {
		// A pack its writer left torn (killed while it added a run) is cut
		// back to its whole runs first, so that it is a tar file again;
		// one whose size and time are as indexed is not read again for it.
		if repaired, rerr := bundle.RepairPack(c.path); rerr != nil {
			rep.Problems = append(rep.Problems, PathProblem{Bundle: c.path, Problem: bundle.Problem{File: c.path, Message: rerr.Error()}})
		} else if repaired {
			rep.Repaired = append(rep.Repaired, c.path)
			fp, err = fingerprint(c)
		}
	}
	if err != nil {
		fp = "unreadable"
	}
	if c.pack || c.kind != store.BundleRun || (known == fp && !live) || !bundle.Orphaned(c.path) {
		return fp
	}
	if err := bundle.MarkInterrupted(c.path, OrphanReason, time.Now()); err != nil {
		rep.Problems = append(rep.Problems, PathProblem{Bundle: c.path, Problem: bundle.Problem{File: bundle.ReceiptFile, Message: "marking the orphaned run interrupted failed: " + err.Error()}})
		return fp
	}
	rep.Interrupted++
	if fp, err = fingerprint(c); err != nil {
		fp = "unreadable"
	}
	return fp
}

// write reads what the pass found and writes it to the store a batch at a
// time: the runs of the packs that changed first, read run by run (a pack
// is never whole in memory), then the folders and session files; the
// removed paths go with the first batch, and a pack's runs that it no
// longer holds with the batch after it is read.
func (ix *Indexer) write(ctx context.Context, p *pass) error {
	w := &writer{ix: ix, p: p, removed: p.removed, removedSet: map[string]bool{}, owners: map[string]string{}}
	sort.Strings(w.removed)
	p.rep.Removed += len(w.removed)
	for _, path := range w.removed {
		w.removedSet[path] = true
	}
	for _, pack := range p.packs {
		if err := ix.streamPack(ctx, pack.path, p.fingerprints[pack.path], p.packKnown[pack.path], w); err != nil {
			return err
		}
	}
	bs := ix.batchSize
	for from := 0; from < len(p.todo); from += bs {
		if err := ctx.Err(); err != nil {
			return err
		}
		w.batch = append(w.batch, ix.readAll(ctx, p.todo[from:min(from+bs, len(p.todo))], p.fingerprints)...)
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	return w.flush(ctx)
}

// writer writes a pass's updates a batch at a time.
type writer struct {
	ix         *Indexer
	p          *pass
	batch      []store.BundleUpdate
	removed    []string          // to forget with the next batch
	removedSet map[string]bool   // every path forgotten in this pass
	owners     map[string]string // run or session id → bundle path, within this pass
}

// flush writes the batch and the removals waiting (if either has any).
func (w *writer) flush(ctx context.Context) error {
	if len(w.batch) == 0 && len(w.removed) == 0 {
		return nil
	}
	err := w.ix.apply(ctx, w.batch, w.removed, w.owners, w.removedSet, &w.p.rep)
	w.batch, w.removed = w.batch[:0], nil
	return err
}

// apply writes one batch: every update claims its run or session id, is
// tallied in rep, and is written with the removals in one transaction.
// owners holds the ids claimed so far in this pass.
func (ix *Indexer) apply(ctx context.Context, updates []store.BundleUpdate, removed []string, owners map[string]string, removedSet map[string]bool, rep *Report) error {
	for i := range updates {
		gone, err := ix.claimID(ctx, &updates[i], owners, removedSet)
		if err != nil {
			return err
		}
		if gone != "" {
			removed = append(removed, gone)
			rep.Removed++
		}
		ix.tally(&updates[i], rep)
	}
	return ix.store.ApplyBundles(ctx, updates, removed)
}

func (ix *Indexer) tally(u *store.BundleUpdate, rep *Report) {
	if u.Run != nil || u.Session != nil {
		rep.Indexed++
	}
	if len(u.Problems) > 0 {
		rep.Broken++
		for _, p := range u.Problems {
			rep.Problems = append(rep.Problems, PathProblem{Bundle: u.Path, Problem: p})
		}
		// A bundle with problems is read again on every pass, so that its
		// problems are reported each time and cleared once it is fixed.
		u.Fingerprint = "problem:" + u.Fingerprint
	}
}

// claimID makes sure one run id (or session id) is indexed from one bundle:
// a second copy found at another path that still exists becomes a problem.
// When the earlier copy is gone from disk, its path is returned to be
// forgotten, and this copy takes its place.
func (ix *Indexer) claimID(ctx context.Context, u *store.BundleUpdate, owners map[string]string, removed map[string]bool) (string, error) {
	var id, other, what string
	var err error
	switch {
	case u.Run != nil:
		id, what = "run:"+u.Run.Receipt.RunID, "run_id"
		other, err = ix.store.RunBundlePath(ctx, u.Run.Receipt.RunID)
	case u.Session != nil:
		id, what = "session:"+u.Session.SessionID, "session_id"
		other, err = ix.store.SessionBundlePath(ctx, u.Session.SessionID)
	default:
		return "", nil
	}
	if err != nil {
		return "", err
	}
	gone := ""
	switch p, ok := owners[id]; {
	case ok && p != u.Path:
		other = p
	case other == u.Path || (other != "" && removed[other]):
		other = ""
	case other != "" && !exists(other):
		gone, other = other, "" // the earlier copy moved here
	}
	if other == "" {
		owners[id] = u.Path
		return gone, nil
	}
	file := filepath.Join(u.Path, bundle.ReceiptFile)
	if u.Kind == store.BundleSession {
		file = u.Path
	}
	u.Problems = append(bundle.Problems{{File: file, Field: what,
		Message: fmt.Sprintf("%q is already indexed from %s; keep one copy", strings.SplitN(id, ":", 2)[1], other)}}, u.Problems...)
	u.Run, u.Session = nil, nil
	return "", nil
}

func exists(path string) bool {
	if pack, id, ok := bundle.SplitPackRef(path); ok {
		return bundle.PackHolds(pack, id)
	}
	_, err := os.Lstat(path)
	return err == nil
}

// packUnchanged reports whether every run indexed from the pack was indexed
// from the pack as it is now (its fingerprint), so it need not be read.
func (ix *Indexer) packUnchanged(pack, fp string, known map[string]string) bool {
	n := 0
	for p, old := range known {
		if p == pack {
			return false // the pack itself had problems: read it again
		}
		if pk, _, ok := bundle.SplitPackRef(p); ok && pk == pack {
			if old != fp {
				return false
			}
			n++
		}
	}
	return n > 0
}

// streamPack reads every run in a pack as an update of its own (path
// PACK#RUN_ID) and writes them a batch at a time; problems of the pack
// itself (a cut-short tail) are an update for the pack's path, so they are
// reported and the pack read again until they are gone. The runs indexed
// from it before (known) that it no longer holds are forgotten.
func (ix *Indexer) streamPack(ctx context.Context, pack, fp string, known []string, w *writer) error {
	read := map[string]bool{}
	var failed error
	probs, err := bundle.ReadPack(pack, ix.limits, func(p *bundle.PackedRun) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		u := store.BundleUpdate{Path: p.Ref(), Kind: store.BundleRun, Fingerprint: fp}
		run, err := readPacked(p, ix.limits)
		if err != nil {
			u.Problems = bundle.ProblemsOf(err, p.Ref()+"/"+bundle.ReceiptFile)
		} else {
			u.Run, u.Problems = run, run.Problems
		}
		read[u.Path] = true
		w.batch = append(w.batch, u)
		if len(w.batch) >= ix.batchSize {
			if failed = w.flush(ctx); failed != nil {
				return failed
			}
		}
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case failed != nil:
		return failed
	case err != nil:
		probs = append(probs, bundle.Problem{File: pack, Message: describe(err)})
	}
	if len(probs) > 0 {
		w.batch = append(w.batch, store.BundleUpdate{Path: pack, Kind: store.BundleRun, Fingerprint: fp, Problems: probs})
	}
	for _, path := range known {
		if !read[path] {
			w.removed = append(w.removed, path)
			w.removedSet[path] = true
			w.p.rep.Removed++
		}
	}
	return nil
}

// readPacked reads a packed run: from its decision folder once it has
// been reviewed there (the record of the decision; bundle.DecisionsOf),
// else from the pack.
func readPacked(p *bundle.PackedRun, lim bundle.Limits) (*bundle.Run, error) {
	if dir, ok := bundle.DecisionDir(p.Pack, p.ID); ok {
		if _, err := os.Stat(filepath.Join(dir, bundle.ReceiptFile)); err == nil {
			run, err := bundle.ReadRun(dir, lim)
			if err == nil {
				run.Dir = p.Ref() // indexed where it is recorded: the pack
			}
			return run, err
		}
	}
	return p.Read(lim)
}

// readAll reads a chunk of bundles with a few workers, keeping their order.
func (ix *Indexer) readAll(ctx context.Context, chunk []candidate, fps map[string]string) []store.BundleUpdate {
	out := make([]store.BundleUpdate, len(chunk))
	var wg sync.WaitGroup
	next := make(chan int)
	for range ix.workers {
		wg.Go(func() {
			for i := range next {
				out[i] = ix.read(chunk[i], fps[chunk[i].path])
			}
		})
	}
	for i := range chunk {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func (ix *Indexer) read(c candidate, fp string) store.BundleUpdate {
	u := store.BundleUpdate{Path: c.path, Kind: c.kind, Fingerprint: fp}
	switch c.kind {
	case store.BundleRun:
		run, err := bundle.ReadRun(c.path, ix.limits)
		if err != nil {
			u.Problems = bundle.ProblemsOf(err, filepath.Join(c.path, bundle.ReceiptFile))
			return u
		}
		u.Run, u.Problems = run, run.Problems
		// The events are read only for their problems: a bundle whose
		// log is readable only in part is listed as such. (exchanges.jsonl,
		// which holds every request whole, is checked when it is read.)
		_, probs, err := bundle.ReadEvents(c.path, ix.limits)
		if err != nil {
			probs = append(probs, bundle.Problem{File: filepath.Join(c.path, bundle.EventsFile), Message: err.Error()})
		}
		u.Problems = append(u.Problems, probs...)
	case store.BundleSession:
		s, err := bundle.ReadSession(c.path, ix.limits)
		if err != nil {
			u.Problems = bundle.ProblemsOf(err, c.path)
			return u
		}
		u.Session = s
	}
	return u
}

// walk finds run bundles (folders holding run.json, or any folder directly
// inside a folder named "runs"), packs of them (*.tar files directly inside
// a folder named "runs", or root itself) and session files (*.json directly
// inside a folder named "sessions") under root. It does not follow symlinked folders
// and does not descend into a bundle.
func walk(ctx context.Context, root string) ([]candidate, bundle.Problems, error) {
	var out []candidate
	var probs bundle.Problems
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !info.IsDir() {
		if isSessionFile(root) {
			return []candidate{{path: root, kind: store.BundleSession}}, nil, nil
		}
		if strings.HasSuffix(root, bundle.PackSuffix) {
			return []candidate{{path: root, kind: store.BundleRun, pack: true}}, nil, nil
		}
		if filepath.Base(root) == bundle.ReceiptFile {
			return []candidate{{path: filepath.Dir(root), kind: store.BundleRun}}, nil, nil
		}
		return nil, nil, fmt.Errorf("%s is neither a folder, a run.json nor a session file", root)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			probs = append(probs, bundle.Problem{File: path, Message: "cannot be read: " + describe(err)})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return fs.SkipDir
			}
			parent := filepath.Base(filepath.Dir(path))
			if _, err := os.Lstat(filepath.Join(path, bundle.ReceiptFile)); err == nil || (parent == "runs" && path != root) {
				out = append(out, candidate{path: path, kind: store.BundleRun})
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(name, ".") && isSessionFile(path) {
			out = append(out, candidate{path: path, kind: store.BundleSession})
		}
		if strings.HasSuffix(name, bundle.PackSuffix) && !strings.HasPrefix(name, ".") && d.Type().IsRegular() && filepath.Base(filepath.Dir(path)) == "runs" {
			out = append(out, candidate{path: path, kind: store.BundleRun, pack: true})
		}
		return nil
	})
	return out, probs, err
}

// isSessionFile reports whether path names a session file: a data
// folder's sessions/<id>.json, or sessions/pushed/<id>.json for one pushed
// from elsewhere.
func isSessionFile(path string) bool {
	return strings.HasSuffix(path, ".json") && (filepath.Base(filepath.Dir(path)) == "sessions" || bundle.PushedSession(path))
}

func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fingerprint summarises the names, sizes and modification times of a
// bundle's files: any write to a bundle changes it, and computing it costs one
// directory read.
func fingerprint(c candidate) (string, error) {
	h := sha256.New()
	add := func(name string, info fs.FileInfo) {
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(info.Size(), 10)))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(info.ModTime().UnixNano(), 10)))
		h.Write([]byte{0})
		h.Write([]byte(info.Mode().String()))
		h.Write([]byte{'\n'})
	}
	if c.kind == store.BundleSession || c.pack {
		info, err := os.Lstat(c.path)
		if err != nil {
			return "", err
		}
		add(filepath.Base(c.path), info)
		// A pack's runs reviewed in their decision folders: a decision
		// changes what the index says of the pack's runs.
		if dir, ok := bundle.DecisionsOf(c.path); c.pack && ok {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				if info, err := os.Lstat(filepath.Join(dir, e.Name(), bundle.ReceiptFile)); err == nil {
					add(e.Name(), info)
				}
			}
		}
	} else {
		entries, err := os.ReadDir(c.path)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // locks, live markers and temp files are not the record
			}
			info, err := e.Info()
			if err != nil {
				return "", err
			}
			add(e.Name(), info)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// Into returns a function that indexes the given paths into st, in the
// shape run.Runner.Index wants.
func Into(st *store.Store) func(ctx context.Context, paths ...string) error {
	return func(ctx context.Context, paths ...string) error {
		_, err := New(st).Index(ctx, paths...)
		return err
	}
}
