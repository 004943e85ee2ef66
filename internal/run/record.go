package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
)

// recorder writes a run's bundle as the run goes. Every text it writes
// passes through the redactor first.
//
// A scratch recorder records a run that works in a scratch folder and is
// packed when it ends (Runner.Scratch): the folder is not the record and
// nobody reads it while the run works, so the bundle's files are kept in
// memory, for the packer, rather than written to it; it takes no live
// lock.
type recorder struct {
	dir     string
	redact  *redact.Redactor
	now     func() time.Time
	onEvent func(bundle.Event)
	scratch bool
	logs    *LogBuffers   // events, exchanges of a scratch recorder
	mem     []bundle.File // the other files of a scratch recorder

	mu        sync.Mutex
	events    *os.File
	seq       int64
	exchanges *os.File
	xseq      int64
	err       error // the first write error; the run reports it at the end
}

// LogBuffers hold a scratch run's events and exchanges. A suite worker
// hands the same pair to each of its runs in turn (Runner.Logs): the logs
// are packed before the worker's next run starts, so they can be reused.
type LogBuffers [2]bytes.Buffer

func newRecorder(dir string, r *redact.Redactor, now func() time.Time, onEvent func(bundle.Event), scratch bool, logs *LogBuffers) (*recorder, error) {
	rec := &recorder{dir: dir, redact: r, now: now, onEvent: onEvent, scratch: scratch}
	if scratch {
		if logs == nil {
			logs = new(LogBuffers)
		}
		rec.logs = logs
		for i := range rec.logs {
			rec.logs[i].Reset()
		}
		return rec, nil
	}
	var err error
	if rec.events, err = os.OpenFile(filepath.Join(dir, bundle.EventsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("open events: %w", err)
	}
	if err := bundle.LockLive(rec.events); err != nil {
		rec.events.Close()
		return nil, err
	}
	if rec.exchanges, err = os.OpenFile(filepath.Join(dir, bundle.ExchangesFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		rec.events.Close()
		return nil, fmt.Errorf("open exchanges: %w", err)
	}
	return rec, nil
}

// event appends one event. Each event is written as it happens (no fsync
// until the end), so that anyone tailing events.jsonl sees the run live.
func (rec *recorder) event(typ string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"unencodable": err.Error()})
	}
	raw = rec.redact.Bytes(raw)
	rec.mu.Lock()
	rec.seq++
	ev := bundle.Event{Seq: rec.seq, Time: rec.now().UTC(), Type: typ, Data: raw}
	if rec.scratch {
		rec.logs[0].Grow(len(raw) + 96)
		rec.logs[0].Write(appendEvent(rec.logs[0].AvailableBuffer(), ev))
	} else if _, err := rec.events.Write(appendEvent(make([]byte, 0, len(raw)+96), ev)); err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write events: %w", err)
	}
	rec.mu.Unlock()
	if rec.onEvent != nil {
		rec.onEvent(ev)
	}
}

// appendEvent appends ev as one line of events.jsonl: the bytes
// json.Marshal gives, without encoding Data (already JSON) a second time.
func appendEvent(b []byte, ev bundle.Event) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, ev.Seq, 10)
	b = append(b, `,"time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","type":`...)
	typ, _ := json.Marshal(ev.Type)
	b = append(b, typ...)
	if len(ev.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, ev.Data...)
	}
	return append(b, "}\n"...)
}

// exchange appends one model exchange. The request and response are
// already JSON; they are written as they are (after redaction) rather than
// re-encoded, because a request holds the whole conversation and grows with
// every turn.
func (rec *recorder) exchange(x model.Exchange) {
	req := rec.rawJSON(x.Request)
	resp := rec.rawJSON(x.Response)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.xseq++
	var line bytes.Buffer
	b := &line
	if rec.scratch {
		b = &rec.logs[1] // the line goes straight into the log held in memory
	}
	b.Grow(len(req) + len(resp) + 256)
	fmt.Fprintf(b, `{"seq":%d,"time":%q,"duration_ms":%d,"attempt":%d,"request":`, rec.xseq, x.Time.UTC().Format(time.RFC3339Nano), x.Duration.Milliseconds(), max(x.Attempt, 1))
	b.Write(req)
	if len(resp) > 0 {
		b.WriteString(`,"response":`)
		b.Write(resp)
	}
	if x.Error != "" {
		msg, _ := json.Marshal(rec.redact.String(x.Error))
		b.WriteString(`,"error":`)
		b.Write(msg)
	}
	b.WriteString("}\n")
	if rec.scratch {
		return
	}
	if _, err := rec.exchanges.Write(b.Bytes()); err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write exchanges: %w", err)
	}
}

// rawJSON redacts a JSON document; when redaction touched it, it checks
// that it is still JSON, and falls back to recording it as a string.
func (rec *recorder) rawJSON(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	out := rec.redact.Bytes(raw)
	if !bytes.Equal(out, raw) && !json.Valid(out) {
		out, _ = json.Marshal(string(out))
	}
	return out
}

// receipt writes run.json atomically; durable is for the final receipt,
// written after everything else has been synced.
func (rec *recorder) receipt(r *bundle.Receipt, durable bool) error {
	clean := *r
	clean.Task = rec.redact.String(r.Task)
	if r.Failure != nil {
		f := *r.Failure
		f.Message = rec.redact.String(f.Message)
		clean.Failure = &f
	}
	path := filepath.Join(rec.dir, bundle.ReceiptFile)
	if err := clean.Validate(path, filepath.Base(rec.dir)); err != nil {
		return fmt.Errorf("write receipt: %w", err)
	}
	data, err := json.MarshalIndent(&clean, "", "  ")
	if err != nil {
		return fmt.Errorf("encode receipt: %w", err)
	}
	return rec.write(path, append(data, '\n'), durable)
}

// write writes a file of the bundle: atomically, durably when asked, or in
// place in a scratch folder.
func (rec *recorder) write(path string, data []byte, durable bool) error {
	switch {
	case rec.scratch:
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.keep(filepath.Base(path), data)
		return nil
	case durable:
		return bundle.WriteFileAtomic(path, data, 0o644)
	}
	return bundle.WriteFileAtomicLater(path, data, 0o644)
}

// jsonFile writes a JSON file of the bundle atomically; it becomes durable
// with the run's final sync.
func (rec *recorder) jsonFile(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return rec.write(filepath.Join(rec.dir, name), append(data, '\n'), false)
}

// text writes a text file of the bundle atomically, redacted; it becomes
// durable with the run's final sync.
func (rec *recorder) text(name, content string) error {
	return rec.write(filepath.Join(rec.dir, name), []byte(rec.redact.String(content)), false)
}

// close ends the logs and makes everything written so far durable with
// one sync of the run folder's file system. The events log stays open, and
// locked, until release: the run is working until its final receipt.
func (rec *recorder) close() error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.scratch {
		rec.keep(bundle.EventsFile, rec.logs[0].Bytes())
		rec.keep(bundle.ExchangesFile, rec.logs[1].Bytes())
		return rec.err
	}
	if err := rec.exchanges.Close(); err != nil && rec.err == nil {
		rec.err = err
	}
	if err := bundle.Sync(rec.dir); err != nil && rec.err == nil {
		rec.err = err
	}
	return rec.err
}

// keep holds a file of a scratch recorder's bundle, replacing one of the
// same name. The caller holds rec.mu.
func (rec *recorder) keep(name string, data []byte) {
	for i := range rec.mem {
		if rec.mem[i].Name == name {
			rec.mem[i].Data = data
			return
		}
	}
	rec.mem = append(rec.mem, bundle.File{Name: name, Data: data})
}

// files returns the bundle files a scratch recorder holds.
func (rec *recorder) files() []bundle.File {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.mem
}

// release closes the events log, which drops the run's live lock.
func (rec *recorder) release() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.events != nil {
		rec.events.Close()
	}
}
