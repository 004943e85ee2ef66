package bundle

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
)

// A pack holds many run bundles in one tar file, <run_id>/<file> per entry,
// each run's run.json last. Large suites record their runs in a pack
// (`proctor scenario run --pack`): creating a few files per run costs far
// more than the run itself on many file systems, and ten thousand folders
// help nobody. A pack is an ordinary tar file: `tar -xf` turns it back into
// run folders. Runs in a pack are read-only records.
//
// A packed run is named by a reference, PACK#RUN_ID, wherever a bundle
// folder would be (the index's bundle path, a suite's verdict lines).

// PackSuffix ends the name of a pack file.
const PackSuffix = ".tar"

// PushedPrefix begins the name of a pack pushed to this data folder from
// elsewhere (proctor push): its runs are data from outside. Their
// repositories (workspace/, workspace.git/) are never unpacked: nothing of
// this host opens them with git.
const PushedPrefix = "push-"

// Pushed reports whether the pack at path was pushed from elsewhere.
func Pushed(pack string) bool { return strings.HasPrefix(filepath.Base(pack), PushedPrefix) }

// repositories are the folders of a run that hold git repositories: a
// pushed run's are left in its pack.
var repositories = map[string]bool{"workspace": true, "workspace.git": true}

// PackRef names run id inside the pack file at pack.
func PackRef(pack, id string) string { return pack + "#" + id }

// SplitPackRef splits a reference made by PackRef. ok is false for a plain
// folder path.
func SplitPackRef(ref string) (pack, id string, ok bool) {
	i := strings.LastIndexByte(ref, '#')
	if i < 0 || !strings.HasSuffix(ref[:i], PackSuffix) || !ValidID(ref[i+1:]) {
		return "", "", false
	}
	return ref[:i], ref[i+1:], true
}

// A pack may also hold session files, each an entry
// .sessions/<session_id>.json (a name no run has), which proctor push adds
// for the sessions of a data folder it pushes.
const packSessions = ".sessions"

// PushedSessions is the folder of a data folder's sessions/ that holds the
// sessions pushed to it from elsewhere, each the newest copy pushed: their
// runs are records here, never continued.
const PushedSessions = "pushed"

// PushedSession reports whether the session file at path was pushed from
// elsewhere (it is in sessions/pushed/).
func PushedSession(path string) bool {
	dir := filepath.Dir(path)
	return filepath.Base(dir) == PushedSessions && filepath.Base(filepath.Dir(dir)) == "sessions"
}

// PackWriter appends whole run bundles to a pack. It is safe for
// concurrent use; each Add writes one run's entries together.
type PackWriter struct {
	path string
	mu   sync.Mutex
	f    *os.File
	buf  *bufio.Writer
	tw   *tar.Writer
	err  error
}

// CreatePack starts a new pack file at path; an existing file is an error.
func CreatePack(path string) (*PackWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, fmt.Errorf("create pack: %w", err)
	}
	// Held while it is written: RepairPack leaves a pack a writer holds
	// alone; the kernel drops the lock however the writer ends.
	if err := flock.TryFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("create pack: %w", err)
	}
	buf := bufio.NewWriterSize(f, 256<<10)
	return &PackWriter{path: path, f: f, buf: buf, tw: tar.NewWriter(buf)}, nil
}

// Path is the pack file's path.
func (w *PackWriter) Path() string { return w.path }

// Add appends the run bundle in dir, whose run id is id: every file and
// folder under it (the workspace too), then run.json. When it returns, the
// run is durable in the pack file (written and synced): a crash after it
// keeps the run.
func (w *PackWriter) Add(dir, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("pack %s: run id %q is not a safe name", w.path, id)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || rel == ReceiptFile || strings.HasPrefix(d.Name(), ".") && !d.IsDir() && filepath.Dir(rel) == "." {
			return nil // run.json goes last; temp files are not the record
		}
		return w.entry(p, id+"/"+filepath.ToSlash(rel), d)
	})
	if err == nil {
		var info fs.FileInfo
		if info, err = os.Lstat(filepath.Join(dir, ReceiptFile)); err == nil {
			err = w.entry(filepath.Join(dir, ReceiptFile), id+"/"+ReceiptFile, fs.FileInfoToDirEntry(info))
		}
	}
	if err == nil {
		err = w.buf.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		w.err = fmt.Errorf("pack %s: add run %s: %w", w.path, id, err)
		return w.err
	}
	return nil
}

// AddSession appends the session file at path (a data folder's
// sessions/<id>.json) as .sessions/<id>.json.
func (w *PackWriter) AddSession(path string) error {
	id := strings.TrimSuffix(filepath.Base(path), ".json")
	if !ValidID(id) || !strings.HasSuffix(path, ".json") {
		return fmt.Errorf("pack %s: %s is not a session file", w.path, path)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	info, err := os.Lstat(path)
	if err == nil {
		err = w.entry(path, packSessions+"/"+id+".json", fs.FileInfoToDirEntry(info))
	}
	if err == nil {
		err = w.buf.Flush()
	}
	if err != nil {
		w.err = fmt.Errorf("pack %s: add session %s: %w", w.path, id, err)
	}
	return w.err
}

// PackedSession is a session file read from a pack.
type PackedSession struct {
	Ref     string // names it in problems: PACK#.sessions/ID.json
	Session *Session
	Err     error // it is not a session file proctor reads
}

// ReadPackSessions reads the session files of the pack at path (read
// defensively, as ReadSession reads one).
func ReadPackSessions(path string, lim Limits) ([]PackedSession, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read pack %s: %w", path, err)
	}
	defer f.Close()
	var out []PackedSession
	seen := map[string]bool{}
	tr := tar.NewReader(f) // an *os.File: the reader seeks over the runs' contents
	for {
		hdr, err := tr.Next()
		if err != nil {
			return out, nil // the end, or a damaged tail ReadPack reports
		}
		rest, ok := strings.CutPrefix(hdr.Name, packSessions+"/")
		if !ok {
			continue
		}
		ref := path + "#" + hdr.Name
		id, isJSON := strings.CutSuffix(rest, ".json")
		switch {
		case !isJSON || !ValidID(id) || hdr.Typeflag != tar.TypeReg:
			out = append(out, PackedSession{Ref: ref, Err: Problems{{File: ref, Message: "not a session file: a pack holds sessions as files " + packSessions + "/<session_id>.json; skipped"}}})
			continue
		case seen[id]:
			out = append(out, PackedSession{Ref: ref, Err: Problems{{File: ref, Message: "appears twice in the pack; the first copy is read"}}})
			continue
		}
		seen[id] = true
		if hdr.Size > lim.MaxJSONBytes {
			out = append(out, PackedSession{Ref: ref, Err: Problems{{File: ref, Message: fmt.Sprintf("%s, over the %s limit", humanBytes(hdr.Size), humanBytes(lim.MaxJSONBytes))}}})
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return out, nil
		}
		s, err := parseSession(ref, data)
		out = append(out, PackedSession{Ref: ref, Session: s, Err: err})
	}
}

func (w *PackWriter) entry(p, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	link := ""
	if info.Mode()&fs.ModeSymlink != 0 {
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	} else if !info.Mode().IsRegular() && !info.IsDir() {
		return nil // sockets, devices and the like are not the record
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	hdr.Name = name
	if info.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname, hdr.Uid, hdr.Gid = "", "", 0, 0
	if err := w.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	f, err := osfile.Open(p, os.O_RDONLY|osfile.NoFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w.tw, io.LimitReader(f, info.Size()))
	return err
}

// Close ends the pack and makes it durable.
func (w *PackWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == nil {
		err = w.tw.Close()
	}
	if err == nil {
		err = w.buf.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(w.path))
	}
	if err != nil && w.err == nil {
		return fmt.Errorf("pack %s: %w", w.path, err)
	}
	return err
}

// PackedRun is one run read from a pack: its top-level files (run.json,
// verdict.json and transcript.md within the limits) and the size of every
// top-level file. The workspace is not loaded.
type PackedRun struct {
	Pack  string
	ID    string
	files map[string][]byte
	sizes map[string]int64
	big   map[string]bool // over the limit: not loaded
	skip  bool            // a second copy of a run already read
	names map[string]bool // the entries of the run read so far
	dup   bool            // a second copy follows the first: its entries are skipped
}

// Ref is the run's reference, PACK#ID.
func (p *PackedRun) Ref() string { return PackRef(p.Pack, p.ID) }

// Read reads the run the way ReadRun reads a folder.
func (p *PackedRun) Read(lim Limits) (*Run, error) {
	return readRun(p.Ref(), p.ID, packedFiles{p}, lim)
}

type packedFiles struct{ p *PackedRun }

func (s packedFiles) read(name string, max int64) ([]byte, error) {
	size, ok := s.p.sizes[name]
	switch {
	case !ok:
		return nil, fs.ErrNotExist
	case size > max || s.p.big[name]:
		return nil, fmt.Errorf("%w: %s, over the %s limit", ErrTooLarge, humanBytes(size), humanBytes(max))
	}
	return s.p.files[name], nil
}

func (s packedFiles) size(name string) (int64, error) {
	size, ok := s.p.sizes[name]
	if !ok {
		return 0, fs.ErrNotExist
	}
	return size, nil
}

// packLoaded are the files the index reads from a packed run.
var packLoaded = map[string]bool{ReceiptFile: true, VerdictFile: true, TranscriptFile: true}

// ReadPack calls each for every whole run in the pack at path, in order.
// Problems — a run without run.json (a pack cut short by a crash), an entry
// outside any run, a damaged tail — are returned after the runs that could
// be read; an error from each stops the read and is returned.
func ReadPack(path string, lim Limits, each func(*PackedRun) error) (Problems, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read pack %s: %w", path, err)
	}
	defer f.Close()
	var probs Problems
	var cur *PackedRun
	seen := map[string]bool{}
	flush := func() error {
		if cur == nil || cur.skip {
			cur = nil
			return nil
		}
		p := cur
		cur = nil
		if _, ok := p.sizes[ReceiptFile]; !ok {
			probs = append(probs, Problem{File: PackRef(path, p.ID) + "/" + ReceiptFile, Message: "missing: the pack was cut short while this run was added; its other files are kept in the pack"})
			return nil
		}
		return each(p)
	}
	tr := tar.NewReader(bufio.NewReaderSize(f, 256<<10))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			probs = append(probs, Problem{File: path, Message: "damaged after the last whole run (" + err.Error() + "); the runs before it are read"})
			cur = nil // a run cut in the middle is not whole
			break
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		id, rest, _ := strings.Cut(name, "/")
		if id == packSessions {
			continue // session files: ReadPackSessions
		}
		skip, ps := entryProblems(path, hdr, id, rest)
		if probs = append(probs, ps...); skip {
			continue
		}
		if cur == nil || cur.ID != id {
			if err := flush(); err != nil {
				return probs, err
			}
			cur = &PackedRun{Pack: path, ID: id, files: map[string][]byte{}, sizes: map[string]int64{}, big: map[string]bool{}, names: map[string]bool{}, skip: seen[id]}
			if cur.skip {
				probs = append(probs, Problem{File: path, Field: id, Message: "the run appears twice in the pack; the first copy is kept"})
			}
			seen[id] = true
		}
		// A second copy of a run right after the first has the first's
		// names again: it is not merged into it, and is named a problem.
		if !cur.skip && rest != "" && cur.names[rest] {
			probs = append(probs, Problem{File: path, Field: id, Message: fmt.Sprintf("the run appears twice in the pack (%s twice); the first copy is kept", rest)})
			cur.dup = true
		}
		if rest != "" {
			cur.names[rest] = true
		}
		if cur.dup {
			continue
		}
		if cur.skip || rest == "" || strings.Contains(rest, "/") || hdr.Typeflag != tar.TypeReg {
			continue // the workspace and folders are not needed to index
		}
		if err := cur.load(tr, hdr, rest, lim); err != nil {
			probs = append(probs, Problem{File: path, Message: "damaged after the last whole run (" + err.Error() + "); the runs before it are read"})
			cur = nil
			break
		}
	}
	if err := flush(); err != nil {
		return probs, err
	}
	return probs, nil
}

// entryProblems are what is wrong with a pack entry's header (run id, and
// the path rest inside the run's folder): a path outside a run's folder
// (skip it), or a symlink that leads out of it.
func entryProblems(path string, hdr *tar.Header, id, rest string) (skip bool, p Problems) {
	if !ValidID(id) || (rest != "" && !validRelPath(rest)) {
		return true, Problems{{File: path, Field: hdr.Name, Message: "not a path inside a run folder; skipped"}}
	}
	if hdr.Typeflag == tar.TypeSymlink && (filepath.IsAbs(hdr.Linkname) || !filepath.IsLocal(filepath.Join(filepath.Dir(filepath.FromSlash(rest)), hdr.Linkname))) {
		return false, Problems{{File: path, Field: hdr.Name, Message: fmt.Sprintf("a symlink to %q, outside the run folder: the run cannot be unpacked", hdr.Linkname)}}
	}
	return false, nil
}

// load notes the size of the run's top-level file rest and reads it when
// indexing needs it and it is within its bound; an error is the pack's.
func (r *PackedRun) load(tr *tar.Reader, hdr *tar.Header, rest string, lim Limits) error {
	r.sizes[rest] = hdr.Size
	if !packLoaded[rest] {
		return nil
	}
	max := lim.MaxJSONBytes
	if rest == TranscriptFile {
		max = lim.MaxTextBytes
	}
	if hdr.Size > max {
		r.big[rest] = true
		return nil
	}
	data, err := io.ReadAll(tr)
	if err != nil {
		return err
	}
	r.files[rest] = data
	return nil
}

// FindPacked looks for run id in the packs directly inside dir (a data
// folder's runs/) and returns its reference. It reads entry headers only.
func FindPacked(dir, id string) (string, bool) {
	if !ValidID(id) {
		return "", false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), PackSuffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		pack := filepath.Join(dir, e.Name())
		if PackHolds(pack, id) {
			return PackRef(pack, id), true
		}
	}
	return "", false
}

// PackHolds reports whether the pack file holds a whole run id (its
// receipt, the last entry of a run, whole), reading the pack's entry
// headers and that receipt.
func PackHolds(pack, id string) bool {
	f, err := os.Open(pack)
	if err != nil {
		return false
	}
	defer f.Close()
	tr := tar.NewReader(f) // an *os.File: the reader seeks over contents
	prefix := id + "/"
	for {
		hdr, err := tr.Next()
		if err != nil {
			return false
		}
		if hdr.Name == prefix+ReceiptFile { // the last entry of a run: whole when it is
			_, err := io.Copy(io.Discard, tr)
			return err == nil
		}
	}
}

// countingReader counts the bytes read through it: the offset in a pack.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// RepairPack makes a pack that a killed writer left torn a whole tar file
// again: it is cut after its last whole run (the end of that run's
// run.json entry) and ended as tar ends a file. A run cut in the middle
// was never a record (its run.json, written last, is not there). A pack
// that a writer still holds is left alone, and so is a whole one. It
// reports whether it cut the pack.
func RepairPack(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("repair pack %s: %w", path, err)
	}
	defer f.Close()
	if err := flock.TryFile(f); err != nil {
		return false, nil // a writer holds it: it is being written, not torn
	}
	info, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("repair pack %s: %w", path, err)
	}
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	var whole int64 // the end of the last whole run
	clean := false  // the archive ends as tar ends one
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			clean = true
			break
		}
		if err != nil {
			break
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			break
		}
		if _, rest, _ := strings.Cut(strings.TrimSuffix(hdr.Name, "/"), "/"); rest == ReceiptFile && hdr.Typeflag == tar.TypeReg {
			whole = (cr.n + 511) / 512 * 512
		}
	}
	if whole == 0 || clean && tailIsEnd(f, whole, info.Size()) {
		return false, nil // nothing whole to keep (not a pack, or an empty one), or nothing to repair
	}
	if err := f.Truncate(whole); err == nil {
		_, err = f.WriteAt(make([]byte, 1024), whole) // tar's end: two zero blocks
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			return false, fmt.Errorf("repair pack %s: %w", path, err)
		}
	} else {
		return false, fmt.Errorf("repair pack %s: %w", path, err)
	}
	return true, nil
}

// tailIsEnd reports whether the pack holds nothing after offset whole but
// tar's end (zero blocks, at least two).
func tailIsEnd(f *os.File, whole, size int64) bool {
	if size-whole < 1024 || size-whole > 1<<20 {
		return false
	}
	tail := make([]byte, size-whole)
	if _, err := f.ReadAt(tail, whole); err != nil {
		return false
	}
	for _, b := range tail {
		if b != 0 {
			return false
		}
	}
	return true
}
