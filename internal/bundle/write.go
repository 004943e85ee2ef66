package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-dev/proctor/internal/osfile"
)

func syncDir(dir string) error { return osfile.SyncDir(dir) }

// PlainJSON is v as compact JSON with <, > and & as themselves (Go's
// encoder writes them \u003c, \u003e and \u0026, for HTML): the text of a
// tool call's arguments, as a model writes it and a person reads it.
func PlainJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// WriteJSON writes v as indented JSON to path atomically.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return osfile.WriteFile(path, 0o644, true, osfile.Bytes(append(data, '\n')))
}

// WriteReceipt validates r and writes it as run.json in dir.
func WriteReceipt(dir string, r *Receipt) error {
	path := filepath.Join(dir, ReceiptFile)
	if err := r.Validate(path, filepath.Base(dir)); err != nil {
		return fmt.Errorf("write receipt: %w", err)
	}
	return WriteJSON(path, r)
}

// WriteSession validates s and writes it as <sessions>/<session_id>.json.
func WriteSession(sessionsDir string, s *Session) error {
	path := filepath.Join(sessionsDir, s.SessionID+".json")
	if err := s.Validate(path, s.SessionID); err != nil {
		return fmt.Errorf("write session: %w", err)
	}
	return WriteJSON(path, s)
}

// AppendEvent appends an event of data, numbered seq, to the events.jsonl of
// the bundle in dir, and syncs the file.
func AppendEvent(dir string, seq int64, at time.Time, data EventData) error {
	ev := Event{Seq: seq, Time: at.UTC(), Type: data.EventType()}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.Type, err)
	}
	ev.Data = raw
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", ev.Type, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("append event: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("append event: %w", err)
	}
	return f.Close()
}
