package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Limits bounds how much of a bundle the reader loads into memory.
type Limits struct {
	MaxJSONBytes int64 // run.json, verdict.json, a session file
	MaxTextBytes int64 // transcript.md, diff.patch
	MaxLineBytes int   // one line of events.jsonl or exchanges.jsonl
}

// DefaultLimits are generous for real runs and keep a hostile bundle from
// exhausting memory.
func DefaultLimits() Limits {
	return Limits{MaxJSONBytes: 4 << 20, MaxTextBytes: 16 << 20, MaxLineBytes: 8 << 20}
}

// ErrTooLarge is wrapped by errors for files over a Limits bound.
var ErrTooLarge = errors.New("file too large")

// Run is a run bundle as read for indexing: the receipt, the verdict when
// there is one, the transcript text, and the problems that did not stop the
// run from being read.
type Run struct {
	Dir        string
	Receipt    Receipt
	Verdict    *Verdict
	Transcript string
	DiffBytes  int64
	Problems   Problems
}

// ReadRun reads the bundle in dir. A missing or invalid run.json is fatal and
// returned as Problems; a bad verdict.json, an oversized transcript and the
// like are recorded in Run.Problems and the rest is still returned.
func ReadRun(dir string, lim Limits) (*Run, error) {
	return readRun(dir, filepath.Base(dir), folderFiles(dir), lim)
}

// files is where a bundle's top-level files come from: a folder or a pack.
type files interface {
	read(name string, max int64) ([]byte, error)
	size(name string) (int64, error)
}

type folderFiles string

func (d folderFiles) read(name string, max int64) ([]byte, error) {
	return ReadFile(string(d), name, max)
}

func (d folderFiles) size(name string) (int64, error) {
	info, err := Stat(string(d), name)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// readRun reads a bundle named dir (a folder or a pack reference) whose run
// id must be id.
func readRun(dir, id string, src files, lim Limits) (*Run, error) {
	run := &Run{Dir: dir}
	receiptPath := filepath.Join(dir, ReceiptFile)
	data, err := src.read(ReceiptFile, lim.MaxJSONBytes)
	if err != nil {
		return nil, Problems{{File: receiptPath, Message: describeReadError(err)}}
	}
	if err := decodeJSON(receiptPath, data, &run.Receipt); err != nil {
		return nil, err
	}
	if err := run.Receipt.Validate(receiptPath, id); err != nil {
		return nil, err
	}

	verdictPath := filepath.Join(dir, VerdictFile)
	switch data, err := src.read(VerdictFile, lim.MaxJSONBytes); {
	case errors.Is(err, fs.ErrNotExist):
		if run.Receipt.Kind == KindScenario && isFinished(run.Receipt.Status) && run.Receipt.Status != StatusInterrupted {
			run.Problems = append(run.Problems, Problem{File: verdictPath, Message: "missing on a finished scenario run"})
		}
	case err != nil:
		run.Problems = append(run.Problems, Problem{File: verdictPath, Message: describeReadError(err)})
	default:
		var v Verdict
		err := decodeJSON(verdictPath, data, &v)
		if err == nil {
			err = v.Validate(verdictPath)
		}
		if err != nil {
			run.Problems = append(run.Problems, asProblems(err)...)
		} else {
			run.Verdict = &v
		}
	}

	switch data, err := src.read(TranscriptFile, lim.MaxTextBytes); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		run.Problems = append(run.Problems, Problem{File: filepath.Join(dir, TranscriptFile), Message: describeReadError(err) + "; the transcript is not searchable"})
	default:
		run.Transcript = string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
	}

	switch size, err := src.size(DiffFile); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		run.Problems = append(run.Problems, Problem{File: filepath.Join(dir, DiffFile), Message: describeReadError(err)})
	default:
		run.DiffBytes = size
	}
	return run, nil
}

func isFinished(s Status) bool {
	switch s {
	case StatusPassed, StatusFailed, StatusError, StatusInterrupted, StatusAwaitingReview, StatusAwaitingInput:
		return true
	}
	return false
}

// ReadSession reads and validates a session file.
func ReadSession(path string, lim Limits) (*Session, error) {
	data, err := ReadFile(filepath.Dir(path), filepath.Base(path), lim.MaxJSONBytes)
	if err != nil {
		return nil, Problems{{File: path, Message: describeReadError(err)}}
	}
	return parseSession(path, data)
}

// parseSession reads a session file's bytes (from path, which names it in
// problems and gives its id).
func parseSession(path string, data []byte) (*Session, error) {
	var s Session
	if err := decodeJSON(path, data, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(path, strings.TrimSuffix(filepath.Base(path), ".json")); err != nil {
		return nil, err
	}
	return &s, nil
}

// ReadEvents reads events.jsonl from the bundle in dir. Lines that are not
// valid events are skipped and reported; a missing file is no events.
func ReadEvents(dir string, lim Limits) ([]Event, Problems, error) {
	var events []Event
	var last int64
	probs, err := readLines(dir, EventsFile, lim, func(file string, n int, line []byte) *Problem {
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return &Problem{File: file, Field: fmt.Sprintf("line %d", n), Message: "invalid JSON: " + err.Error()}
		}
		switch {
		case ev.Type == "":
			return &Problem{File: file, Field: fmt.Sprintf("line %d", n), Message: "type: missing"}
		case ev.Seq <= last:
			return &Problem{File: file, Field: fmt.Sprintf("line %d", n), Message: fmt.Sprintf("seq %d does not follow seq %d", ev.Seq, last)}
		}
		last = ev.Seq
		events = append(events, ev)
		return nil
	})
	return events, probs, err
}

// ReadExchanges reads exchanges.jsonl from the bundle in dir, skipping and
// reporting lines that are not valid exchanges. Their requests are read
// one at a time (ExchangeLog.Request).
func ReadExchanges(dir string, lim Limits) (*ExchangeLog, Problems, error) {
	l := &ExchangeLog{dir: dir, at: map[int64]int{}}
	var last int64
	probs, err := readLines(dir, ExchangesFile, lim, func(file string, n int, line []byte) *Problem {
		var x Exchange
		field := fmt.Sprintf("line %d", n)
		if err := json.Unmarshal(line, &x); err != nil {
			return &Problem{File: file, Field: field, Message: "invalid JSON: " + err.Error()}
		}
		switch {
		case x.Seq <= last && len(x.Request) == 0:
			return &Problem{File: file, Field: field, Message: fmt.Sprintf("seq %d does not follow seq %d", x.Seq, last)}
		case len(x.Request) == 0 && len(x.Pieces) == 0 && x.Keep == 0:
			return &Problem{File: file, Field: field, Message: "request: missing"}
		case len(x.Request) > 0 && (x.Base != 0 || x.Keep != 0 || len(x.Pieces) > 0):
			return &Problem{File: file, Field: field, Message: "request: given whole and in pieces"}
		case x.Keep < 0 || (x.Keep > 0) != (x.Base != 0):
			return &Problem{File: file, Field: field, Message: fmt.Sprintf("keep %d of base %d: want both or neither", x.Keep, x.Base)}
		}
		base, ok := l.at[x.Base]
		switch {
		case x.Base != 0 && !ok:
			return &Problem{File: file, Field: field, Message: fmt.Sprintf("base %d: no exchange before it has that seq", x.Base)}
		case x.Base != 0 && x.Keep > l.count[base]:
			return &Problem{File: file, Field: field, Message: fmt.Sprintf("keep %d: exchange %d's request has %d pieces", x.Keep, x.Base, l.count[base])}
		case x.Keep+len(x.Pieces) > maxPieces:
			return &Problem{File: file, Field: field, Message: fmt.Sprintf("a request of %d pieces: more than %d", x.Keep+len(x.Pieces), maxPieces)}
		}
		last = max(last, x.Seq)
		l.at[x.Seq] = len(l.Exchanges)
		l.Exchanges = append(l.Exchanges, x)
		l.count = append(l.count, x.Keep+len(x.Pieces))
		return nil
	})
	return l, probs, err
}

func readLines(dir, name string, lim Limits, each func(file string, n int, line []byte) *Problem) (Problems, error) {
	file := filepath.Join(dir, name)
	f, err := Open(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	defer f.Close()
	var probs Problems
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, min(64<<10, lim.MaxLineBytes)), lim.MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if p := each(file, n, line); p != nil {
			probs = append(probs, *p)
		}
	}
	if err := sc.Err(); err != nil {
		msg := err.Error()
		if errors.Is(err, bufio.ErrTooLong) {
			msg = fmt.Sprintf("a line is longer than %d bytes; the rest of the file is not read", lim.MaxLineBytes)
		}
		probs = append(probs, Problem{File: file, Field: fmt.Sprintf("line %d", n+1), Message: msg})
	}
	return probs, nil
}

// ReadFile reads the file name inside dir, refusing a file that is not a
// OfferedFile is the file of an approved git run that holds the change it
// offers (the mbox, proctor apply --to): its diff, or when it was approved
// part by part, the accepted parts.
func OfferedFile(rc *Receipt) string {
	if rc.Review != nil && len(rc.Review.AppliedParts) > 0 {
		return AcceptedFile
	}
	return DiffFile
}

// regular file, a symlink that leads outside dir, or one larger than max.
func ReadFile(dir, name string, max int64) ([]byte, error) {
	f, err := Open(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > max {
		return nil, fmt.Errorf("%w: %s, over the %s limit", ErrTooLarge, humanBytes(info.Size()), humanBytes(max))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: over the %s limit", ErrTooLarge, humanBytes(max))
	}
	return data, nil
}

// ReadTail reads the file name inside the bundle folder dir (as Open
// does) whole when it holds at most max bytes, else its last max bytes:
// skipped is how many bytes came before them.
func ReadTail(dir, name string, max int64) (data []byte, skipped int64, err error) {
	f, err := Open(dir, name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if info.Size() > max {
		skipped = info.Size() - max
	}
	data = make([]byte, info.Size()-skipped)
	n, err := f.ReadAt(data, skipped)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return data[:n], skipped, nil
}

// Stat returns the file info of name inside dir under the same rules as Open.
func Stat(dir, name string) (fs.FileInfo, error) {
	f, err := Open(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Open opens the file name inside the bundle folder dir for reading. name must
// be a plain relative path; it is opened through an os.Root of dir, so a
// symlink is followed only when its target is inside dir too, and only
// regular files are opened (without waiting: a FIFO left there is refused,
// not waited on).
func Open(dir, name string) (*os.File, error) {
	if !validRelPath(filepath.ToSlash(name)) {
		return nil, fmt.Errorf("%q is not a path inside the bundle folder", name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if target, lerr := root.Readlink(name); lerr == nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("is a symlink to %s, outside the bundle folder", target)
		}
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("is not a regular file (%s)", info.Mode().Type())
	}
	return f, nil
}

func describeReadError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case errors.Is(err, fs.ErrPermission):
		return "cannot be read: permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// decodeJSON unmarshals data into v, turning decode errors into problems that
// name the line and column, or the field and the wrong type.
func decodeJSON(file string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, max(syn.Offset-1, 0))
		return Problems{{File: file, Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())}}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(top level)"
		}
		return Problems{{File: file, Field: field, Message: fmt.Sprintf("want %s, got JSON %s", typ.Type, typ.Value)}}
	default:
		msg := err.Error()
		if strings.HasPrefix(msg, "parsing time") {
			msg = "not an RFC 3339 time: " + msg
		}
		return Problems{{File: file, Message: msg}}
	}
}

func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func asProblems(err error) Problems { return ProblemsOf(err, "") }

// ProblemsOf is err as problems: the problems it holds, or one problem of
// file saying it.
func ProblemsOf(err error, file string) Problems {
	var ps Problems
	if errors.As(err, &ps) {
		return ps
	}
	return Problems{{File: file, Message: err.Error()}}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
