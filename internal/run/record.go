package run

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
)

// recorder writes a run's bundle as the run goes. Every text it writes
// passes through the redactor first.
type recorder struct {
	dir     string
	redact  *redact.Redactor
	now     func() time.Time
	onEvent func(bundle.Event)

	mu        sync.Mutex
	events    *os.File
	eventsW   *bufio.Writer
	seq       int64
	exchanges *os.File
	xseq      int64
	err       error // the first write error; the run reports it at the end
}

func newRecorder(dir string, r *redact.Redactor, now func() time.Time, onEvent func(bundle.Event)) (*recorder, error) {
	rec := &recorder{dir: dir, redact: r, now: now, onEvent: onEvent}
	var err error
	if rec.events, err = os.OpenFile(filepath.Join(dir, bundle.EventsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		return nil, fmt.Errorf("open events: %w", err)
	}
	rec.eventsW = bufio.NewWriterSize(rec.events, 64<<10)
	if rec.exchanges, err = os.OpenFile(filepath.Join(dir, bundle.ExchangesFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
		rec.events.Close()
		return nil, fmt.Errorf("open exchanges: %w", err)
	}
	return rec, nil
}

// event appends one event. Events are buffered and flushed at each stage
// change and at the end, so that a turn costs no system call.
func (rec *recorder) event(typ string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw, _ = json.Marshal(map[string]string{"unencodable": err.Error()})
	}
	raw = rec.redact.Bytes(raw)
	rec.mu.Lock()
	rec.seq++
	ev := bundle.Event{Seq: rec.seq, Time: rec.now().UTC(), Type: typ, Data: raw}
	line, _ := json.Marshal(ev)
	if _, err := rec.eventsW.Write(append(line, '\n')); err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write events: %w", err)
	}
	rec.mu.Unlock()
	if rec.onEvent != nil {
		rec.onEvent(ev)
	}
}

// flush pushes buffered events to the file.
func (rec *recorder) flush() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if err := rec.eventsW.Flush(); err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write events: %w", err)
	}
}

// exchange appends one model exchange.
func (rec *recorder) exchange(x model.Exchange) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.xseq++
	line := bundle.Exchange{Seq: rec.xseq, Time: x.Time, DurationMS: x.Duration.Milliseconds(),
		Request: json.RawMessage(rec.redact.Bytes(x.Request)), Error: rec.redact.String(x.Error)}
	if len(x.Response) > 0 {
		line.Response = json.RawMessage(rec.redact.Bytes(x.Response))
	}
	data, err := json.Marshal(line)
	if err == nil {
		_, err = rec.exchanges.Write(append(data, '\n'))
	}
	if err != nil && rec.err == nil {
		rec.err = fmt.Errorf("write exchanges: %w", err)
	}
}

// receipt writes run.json atomically.
func (rec *recorder) receipt(r *bundle.Receipt) error {
	rec.flush()
	clean := *r
	clean.Task = rec.redact.String(r.Task)
	if r.Failure != nil {
		f := *r.Failure
		f.Message = rec.redact.String(f.Message)
		clean.Failure = &f
	}
	return bundle.WriteReceipt(rec.dir, &clean)
}

// text writes a text file of the bundle atomically, redacted.
func (rec *recorder) text(name, content string) error {
	return bundle.WriteFileAtomic(filepath.Join(rec.dir, name), []byte(rec.redact.String(content)), 0o644)
}

// close flushes and syncs the logs.
func (rec *recorder) close() error {
	rec.flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, f := range []*os.File{rec.events, rec.exchanges} {
		if err := f.Sync(); err != nil && rec.err == nil {
			rec.err = err
		}
		if err := f.Close(); err != nil && rec.err == nil {
			rec.err = err
		}
	}
	return rec.err
}
