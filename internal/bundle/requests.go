package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/osfile"
)

// A model request repeats the whole conversation, so a run that recorded
// each request whole would keep a bundle that grows with the square of its
// length. A request is recorded instead as pieces: the bytes of each
// element of its top-level arrays (a message, a tool) and of each large
// top-level value are a segment, written once to segments.bin however
// many requests hold it; the bytes between them (keys, brackets, commas,
// small values) are glue, kept in the line. A request's line names the
// request it goes on from (Base: the previous one of its API and call)
// and how many of that one's pieces it starts with (Keep); its own pieces
// follow (Pieces). Every request rebuilds byte for byte, as the agent sent
// it (redacted), and the bundle grows with the conversation. An agent that
// rewrites its history (compaction, a moved cache marker) costs the new
// segments, never a wrong record. Older bundles hold each request whole
// (Exchange.Request), and still read.

// SegmentsFile holds the segments of a run's requests, each once.
const SegmentsFile = "segments.bin"

// minSegment is the size from which a top-level value that is not in an
// array is a segment of its own (a system prompt, say).
const minSegment = 256

// maxSegment bounds one segment a reader loads.
const maxSegment = 64 << 20

// Piece is a part of a recorded request: glue given in the line (Text),
// or a segment of segments.bin (Off, Len). In JSON, a string or [off, len].
type Piece struct {
	Text string
	Off  int64
	Len  int64
	Seg  bool
}

func (p Piece) MarshalJSON() ([]byte, error) {
	if p.Seg {
		return json.Marshal([2]int64{p.Off, p.Len})
	}
	return json.Marshal(p.Text)
}

func (p *Piece) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		*p = Piece{}
		return json.Unmarshal(data, &p.Text)
	}
	var ref [2]int64
	if err := json.Unmarshal(data, &ref); err != nil {
		return errors.New("a piece is a string or [offset, length]")
	}
	if ref[0] < 0 || ref[1] <= 0 || ref[1] > maxSegment {
		return fmt.Errorf("segment [%d, %d] is out of bounds", ref[0], ref[1])
	}
	*p = Piece{Off: ref[0], Len: ref[1], Seg: true}
	return nil
}

// span is a part of a request's bytes: raw[start:end], a segment or glue.
type span struct {
	start, end int
	seg        bool
}

// splitRequest cuts raw into spans at its top-level structure. A request
// that is not a JSON object or array, or that does not parse, is one
// segment.
func splitRequest(raw []byte) []span {
	whole := []span{{0, len(raw), true}}
	i := skipSpace(raw, 0)
	if i >= len(raw) || (raw[i] != '{' && raw[i] != '[') {
		return whole
	}
	var segs []span
	var err error
	if raw[i] == '[' {
		segs, _, err = splitArray(raw, i)
	} else {
		segs, err = splitObject(raw, i)
	}
	if err != nil {
		return whole
	}
	// the glue between the segments
	var out []span
	at := 0
	for _, s := range segs {
		if s.start > at {
			out = append(out, span{at, s.start, false})
		}
		out = append(out, s)
		at = s.end
	}
	if at < len(raw) {
		out = append(out, span{at, len(raw), false})
	}
	return out
}

// splitObject finds the segments of the object at raw[i]: its arrays'
// elements and its large values.
func splitObject(raw []byte, i int) ([]span, error) {
	var segs []span
	i = skipSpace(raw, i+1)
	for first := true; ; first = false {
		if i < len(raw) && raw[i] == '}' {
			return segs, nil
		}
		if !first {
			if i >= len(raw) || raw[i] != ',' {
				return nil, errors.New("want , or }")
			}
			i = skipSpace(raw, i+1)
		}
		end, err := scanValue(raw, i) // the key
		if err != nil || raw[i] != '"' {
			return nil, errors.New("want a key")
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errors.New("want :")
		}
		i = skipSpace(raw, i+1)
		if i < len(raw) && raw[i] == '[' {
			elems, end, err := splitArray(raw, i)
			if err != nil {
				return nil, err
			}
			segs, i = append(segs, elems...), skipSpace(raw, end)
			continue
		}
		end, err = scanValue(raw, i)
		if err != nil {
			return nil, err
		}
		if end-i >= minSegment {
			segs = append(segs, span{i, end, true})
		}
		i = skipSpace(raw, end)
	}
}

// splitArray makes each element of the array at raw[i] a segment, and
// says where the array ends.
func splitArray(raw []byte, i int) ([]span, int, error) {
	var segs []span
	i = skipSpace(raw, i+1)
	for first := true; ; first = false {
		if i < len(raw) && raw[i] == ']' {
			return segs, i + 1, nil
		}
		if !first {
			if i >= len(raw) || raw[i] != ',' {
				return nil, 0, errors.New("want , or ]")
			}
			i = skipSpace(raw, i+1)
		}
		end, err := scanValue(raw, i)
		if err != nil {
			return nil, 0, err
		}
		segs = append(segs, span{i, end, true})
		i = skipSpace(raw, end)
	}
}

// scanValue says where the JSON value at raw[i] ends, checking only its
// brackets and strings (the value was sent as JSON; json.Valid judges it
// elsewhere).
func scanValue(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, io.ErrUnexpectedEOF
	}
	switch raw[i] {
	case '"':
		for j := i + 1; j < len(raw); j++ {
			switch raw[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, io.ErrUnexpectedEOF
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end, err := scanValue(raw, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, io.ErrUnexpectedEOF
	}
	j := i
	for j < len(raw) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(raw[j])) {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("no value at %d", i)
	}
	return j, nil
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// RequestWriter writes a run's requests in pieces: each segment once to
// segments.bin, each request as what follows the pieces it shares with
// the previous request of its API and call.
type RequestWriter struct {
	f     *os.File
	size  int64
	known map[[sha256.Size]byte]Piece
	prev  map[string]*sent
}

// sent is the last request of an API and call: its bytes as sent, its
// spans and its pieces as recorded.
type sent struct {
	seq    int64
	raw    []byte
	spans  []span
	pieces []Piece
}

// NewRequestWriter opens the bundle in dir's segments.bin to append to.
func NewRequestWriter(dir string) (*RequestWriter, error) {
	f, err := osfile.Open(filepath.Join(dir, SegmentsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", SegmentsFile, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", SegmentsFile, err)
	}
	return &RequestWriter{f: f, size: info.Size(), known: map[[sha256.Size]byte]Piece{}, prev: map[string]*sent{}}, nil
}

// Record writes the request raw, the seq-th exchange of kind (its API and
// call), with clean applied to each piece it writes (redaction), and says
// the line's Base, Keep and Pieces. clean should turn JSON into JSON; a
// segment it does not is kept as a JSON string of what it made.
func (w *RequestWriter) Record(seq int64, kind string, raw []byte, clean func([]byte) []byte) (base int64, keep int, pieces []Piece, err error) {
	if len(raw) == 0 {
		return 0, 0, nil, nil
	}
	spans := splitRequest(raw)
	p := w.prev[kind]
	if p != nil {
		// The spans that end inside the bytes both requests start with are
		// the same spans (the split reads left to right); the last one
		// stays out, as a value there may go on in this request.
		common := commonPrefix(p.raw, raw)
		for keep < len(p.spans) && keep < len(spans) && spans[keep] == p.spans[keep] && spans[keep].end < common {
			keep++
		}
		base = p.seq
		if keep == 0 {
			base = 0
		}
	}
	if keep > 0 {
		pieces = append(pieces, p.pieces[:keep]...)
	}
	var fresh []byte // the new segments, written at once
	for _, s := range spans[keep:] {
		pieces = append(pieces, w.piece(raw[s.start:s.end], s.seg, clean, &fresh))
	}
	if n, err := w.f.Write(fresh); err != nil {
		// What was not written is forgotten, so that no later request
		// names it; the file's end is where the writes stopped.
		w.known, w.prev, w.size = map[[sha256.Size]byte]Piece{}, map[string]*sent{}, w.size+int64(n)
		return 0, 0, nil, fmt.Errorf("write %s: %w", SegmentsFile, err)
	}
	w.size += int64(len(fresh))
	w.prev[kind] = &sent{seq: seq, raw: raw, spans: spans, pieces: pieces}
	return base, keep, pieces[keep:], nil
}

// piece is the piece of data: glue, a segment already written, or a new
// segment, appended to fresh (to go at the end of segments.bin).
func (w *RequestWriter) piece(data []byte, seg bool, clean func([]byte) []byte, fresh *[]byte) Piece {
	out := clean(data)
	// A segment is a whole JSON value, kept one when redaction broke it;
	// glue is never JSON on its own.
	if seg && !bytes.Equal(out, data) && !json.Valid(out) {
		out, _ = json.Marshal(string(out))
	}
	if !seg && utf8.Valid(out) || len(out) == 0 {
		return Piece{Text: string(out)}
	}
	sum := sha256.Sum256(out)
	if p, ok := w.known[sum]; ok {
		return p
	}
	p := Piece{Off: w.size + int64(len(*fresh)), Len: int64(len(out)), Seg: true}
	*fresh = append(*fresh, out...)
	w.known[sum] = p
	return p
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && bytes.Equal(a[i:i+4096], b[i:i+4096]) {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Close closes segments.bin.
func (w *RequestWriter) Close() error { return w.f.Close() }

// ExchangeLog is a run's exchanges.jsonl as read, whose requests are
// rebuilt one at a time from segments.bin (Request, Gist).
type ExchangeLog struct {
	Exchanges []Exchange
	dir       string
	at        map[int64]int // seq → index in Exchanges
	count     []int         // how many pieces each request has, put together
	// memo holds the pieces of the few requests put together last, so that
	// reading the requests in order puts each together from the one it
	// goes on from.
	memo map[int][]Piece
}

// maxPieces bounds the pieces of one request a reader puts together.
const maxPieces = 1 << 22

// pieces are the whole list of pieces of the i-th exchange's request.
func (l *ExchangeLog) pieces(i int) []Piece {
	if whole, ok := l.memo[i]; ok {
		return whole
	}
	x := l.Exchanges[i]
	var whole []Piece
	if base, ok := l.memo[l.at[x.Base]]; x.Base != 0 && ok {
		whole = append(base[:x.Keep:x.Keep], x.Pieces...)
	} else {
		whole = l.take(i, l.count[i])
	}
	if l.memo == nil || len(l.memo) >= 4 {
		l.memo = map[int][]Piece{}
	}
	l.memo[i] = whole
	return whole
}

// take is the first n pieces of the i-th exchange's request, gathered in
// one walk back along the requests it goes on from: each gives the part of
// its own pieces that the ones after it do not cover. ReadExchanges made
// sure that each base is earlier and has the pieces kept of it.
func (l *ExchangeLog) take(i, n int) []Piece {
	out := make([]Piece, n)
	for j := i; n > 0; j = l.at[l.Exchanges[j].Base] {
		x := l.Exchanges[j]
		if n > x.Keep {
			copy(out[x.Keep:n], x.Pieces[:n-x.Keep])
			n = x.Keep
		}
	}
	return out
}

// Request is the i-th exchange's request, byte for byte as recorded.
func (l *ExchangeLog) Request(i int) ([]byte, error) { return l.rebuild(i, false) }

// Gist is the i-th exchange's request with each top-level array cut to
// its last element: its model, and its last message, whatever the
// conversation before it (a request recorded whole is given whole).
func (l *ExchangeLog) Gist(i int) ([]byte, error) { return l.rebuild(i, true) }

func (l *ExchangeLog) rebuild(i int, gist bool) ([]byte, error) {
	x := l.Exchanges[i]
	if x.Request != nil {
		return x.Request, nil
	}
	pieces := l.pieces(i)
	if !gist {
		return l.join(x.Seq, pieces)
	}
	var kept []Piece
	for k := 0; k < len(pieces); k++ {
		// an element followed by a comma and another element: left out
		if k+2 < len(pieces) && pieces[k].Seg && !pieces[k+1].Seg && pieces[k+2].Seg && strings.TrimSpace(pieces[k+1].Text) == "," {
			k++
			continue
		}
		kept = append(kept, pieces[k])
	}
	return l.join(x.Seq, kept)
}

// Size is the length of the i-th exchange's request, and how many
// segments it holds (about how many messages and tools).
func (l *ExchangeLog) Size(i int) (n int64, segments int) {
	x := l.Exchanges[i]
	if x.Request != nil {
		return int64(len(x.Request)), 0
	}
	for _, p := range l.pieces(i) {
		if p.Seg {
			n += p.Len
			segments++
		} else {
			n += int64(len(p.Text))
		}
	}
	return n, segments
}

// join reads the pieces of exchange seq's request from segments.bin.
func (l *ExchangeLog) join(seq int64, pieces []Piece) ([]byte, error) {
	f, err := Open(l.dir, SegmentsFile)
	if err != nil {
		return nil, fmt.Errorf("exchange %d: %w", seq, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("exchange %d: %w", seq, err)
	}
	size := 0
	for _, p := range pieces {
		if p.Seg && p.Off+p.Len > info.Size() {
			return nil, fmt.Errorf("exchange %d: segment [%d, %d] is past the end of %s (%d bytes)", seq, p.Off, p.Len, SegmentsFile, info.Size())
		}
		size += len(p.Text) + int(p.Len)
	}
	out := make([]byte, 0, size)
	for _, p := range pieces {
		if !p.Seg {
			out = append(out, p.Text...)
			continue
		}
		at := len(out)
		out = out[:at+int(p.Len)]
		if _, err := f.ReadAt(out[at:], p.Off); err != nil {
			return nil, fmt.Errorf("exchange %d: read %s: %w", seq, SegmentsFile, err)
		}
	}
	return out, nil
}
