package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/redact"
)

// recorder writes a run's bundle into its folder as the run goes. Every
// text it writes passes through the redactor first. When the folder is the
// record, the recorder makes it durable (one sync, then the final receipt
// durably); a folder that a pack takes when the run ends is made durable by
// the pack instead (noSync).
type recorder struct {
	dir     string
	noSync  bool
	redact  *redact.Redactor
	now     func() time.Time
	onEvent func(bundle.Event)

	mu        sync.Mutex
	events    *os.File
	seq       int64
	exchanges *os.File
	requests  *bundle.RequestWriter
	xseq      int64
	err       error // the first write error; the run reports it at the end
}

func newRecorder(dir string, noSync bool, r *redact.Redactor, now func() time.Time, onEvent func(bundle.Event)) (*recorder, error) {
	rec := &recorder{dir: dir, noSync: noSync, redact: r, now: now, onEvent: onEvent}
	var err error
	if rec.events, err = osfile.Open(filepath.Join(dir, bundle.EventsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("open events: %w", err)
	}
	if err := bundle.LockLive(rec.events); err != nil {
		rec.events.Close()
		return nil, err
	}
	if rec.exchanges, err = osfile.Open(filepath.Join(dir, bundle.ExchangesFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		rec.events.Close()
		return nil, fmt.Errorf("open exchanges: %w", err)
	}
	if rec.requests, err = bundle.NewRequestWriter(dir); err != nil {
		rec.events.Close()
		rec.exchanges.Close()
		return nil, err
	}
	return rec, nil
}

// event appends one event. Each event is written as it happens (no fsync
// until the end), so that anyone tailing events.jsonl sees the run live.
func (rec *recorder) event(data bundle.EventData) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"unencodable": err.Error()})
	}
	raw = rec.redact.Bytes(raw)
	rec.mu.Lock()
	rec.seq++
	ev := bundle.Event{Seq: rec.seq, Time: rec.now().UTC(), Type: data.EventType(), Data: raw}
	rec.line(rec.events, "events", ev)
	rec.mu.Unlock()
	if rec.onEvent != nil {
		rec.onEvent(ev)
	}
}

// exchange appends one model exchange, its response redacted and its
// request in pieces (bundle.RequestWriter), each piece written redacted.
func (rec *recorder) exchange(x model.Exchange) {
	resp := rec.rawJSON(x.Response)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.xseq++
	line := bundle.Exchange{Seq: rec.xseq, Time: x.Time.UTC(), DurationMS: x.Duration.Milliseconds(),
		Attempt: max(x.Attempt, 1), API: x.API, Call: x.Call, Response: resp, Error: rec.redact.String(x.Error)}
	var err error
	if line.Base, line.Keep, line.Pieces, err = rec.requests.Record(rec.xseq, x.API+" "+x.Call, x.Request, rec.redact.Bytes); err != nil && rec.err == nil {
		rec.err = err
	}
	rec.line(rec.exchanges, "exchanges", line)
}

// line appends v as one JSON line to a log. The caller holds rec.mu.
func (rec *recorder) line(f *os.File, log string, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		_, err = f.Write(append(data, '\n'))
	}
	if err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write %s: %w", log, err)
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

// write writes a file of the bundle atomically, durably when asked.
func (rec *recorder) write(path string, data []byte, durable bool) error {
	if durable && !rec.noSync {
		return osfile.WriteFile(path, 0o644, true, osfile.Bytes(data))
	}
	return osfile.WriteFile(path, 0o644, false, osfile.Bytes(data))
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
	if err := rec.exchanges.Close(); err != nil && rec.err == nil {
		rec.err = err
	}
	if err := rec.requests.Close(); err != nil && rec.err == nil {
		rec.err = err
	}
	if rec.noSync {
		return rec.err
	}
	if err := bundle.Sync(rec.dir); err != nil && rec.err == nil {
		rec.err = err
	}
	return rec.err
}

// release closes the events log, which drops the run's live lock.
func (rec *recorder) release() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.events.Close()
}
