package agent

import (
	"bytes"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// How a running command's output is streamed: at most one event every
// streamEvery, whole lines unless a line grows past streamLine, up to
// maxStreamed bytes a call (the call's result has all of it).
const (
	streamEvery = 300 * time.Millisecond
	streamLine  = 4 << 10
	maxStreamed = 64 << 10
)

// outputStream emits what a running command writes as tool.output events,
// so that a person watching the run sees it while it runs. It sends whole
// lines, so that the recorder's redaction sees each secret whole; a line
// without its end is sent when it grows past streamLine, or at Close.
type outputStream struct {
	id   string
	emit func(bundle.EventData)
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	buf  []byte
	sent int
}

func newOutputStream(id string, emit func(bundle.EventData)) *outputStream {
	o := &outputStream{id: id, emit: emit, stop: make(chan struct{}), done: make(chan struct{})}
	go o.tick()
	return o
}

func (o *outputStream) tick() {
	defer close(o.done)
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-t.C:
			o.flush(false)
		}
	}
}

// Write keeps p until the next tick; past maxStreamed it is dropped.
func (o *outputStream) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sent+len(o.buf) < maxStreamed {
		o.buf = append(o.buf, p[:min(len(p), maxStreamed-o.sent-len(o.buf))]...)
	}
	return len(p), nil
}

// Close sends what is left and stops the ticks.
func (o *outputStream) Close() {
	close(o.stop)
	<-o.done
	o.flush(true)
}

// flush emits the whole lines kept (all that is kept when all is set, or
// when a line has grown past streamLine), cut at a character's start.
func (o *outputStream) flush(all bool) {
	o.mu.Lock()
	n := len(o.buf)
	if end := bytes.LastIndexByte(o.buf, '\n'); !all && end >= 0 {
		n = end + 1
	} else if !all && n < streamLine {
		n = 0
	} else if !all { // a long line without its end: cut before a character it has not all of
		start := n - 1
		for start > 0 && !utf8.RuneStart(o.buf[start]) {
			start--
		}
		if start >= 0 && !utf8.FullRune(o.buf[start:n]) {
			n = start
		}
	}
	chunk := string(o.buf[:n])
	o.buf = o.buf[n:]
	o.sent += n
	o.mu.Unlock()
	if chunk != "" {
		o.emit(bundle.ToolOutputEvent{ID: o.id, Text: chunk})
	}
}
