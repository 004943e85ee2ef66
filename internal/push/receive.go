// Package push moves run bundles from where they ran to a team's host:
// the host's side receives a pushed pack of runs — resumably, by its
// content's digest, as hostile input — stores it under the data folder and
// indexes it; the pusher's side sends packs, run folders and data folders,
// each once, gzipped, resuming after a dropped connection.
package push

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/store"
)

// Status is what the host has of a pushed pack.
type Status struct {
	Digest string `json:"digest"`
	Have   int64  `json:"have"`   // bytes received so far
	Stored bool   `json:"stored"` // received whole, checked, stored and indexed
	// Runs and Problems say what the index made of a stored pack: its
	// whole runs, and every run or entry it refused, with the reason.
	Runs     int              `json:"runs,omitempty"`
	Problems []bundle.Problem `json:"problems,omitempty"`
	// Sessions counts the session files the pack carries that the host
	// took (it keeps the newest copy of each in <data>/sessions/pushed/).
	Sessions int `json:"sessions,omitempty"`
	// Now: this Receive stored the pack (not an earlier push).
	Now bool `json:"-"`
}

// Receiver is the host's side of a push.
type Receiver struct {
	DataDir string
	Store   *store.Store
	// MaxBytes bounds one pushed pack (its uncompressed tar); 0 is
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxIncoming bounds the bytes of all unfinished pushes together (in
	// <data>/incoming); 0 is DefaultMaxIncoming.
	MaxIncoming int64
	// Abandon is how long an unfinished push may go without a byte before
	// it is removed; 0 is DefaultAbandon.
	Abandon time.Duration
	Now     func() time.Time // nil: the wall clock
}

// The bounds of a push unless the host says otherwise (serve
// --max-push-bytes, --max-push-incoming).
const (
	DefaultMaxBytes    = 2 << 30
	DefaultMaxIncoming = 4 << 30
	DefaultAbandon     = time.Hour
)

// Errors a push is answered with.
var (
	ErrDigest   = errors.New("a pack is named by the SHA-256 of its bytes: 64 lowercase hex digits")
	ErrSize     = errors.New("size: want the pack's size in bytes, from 1")
	ErrTooLarge = errors.New("the pack is larger than this host takes")
	ErrBusy     = errors.New("another push of this pack is under way; try again shortly")
	ErrMismatch = errors.New("the bytes received do not have the digest they were sent as; the upload was discarded, push it again")
	ErrNotAPack = errors.New("not a pack of runs")
)

// OffsetError is a chunk that does not start where the received bytes
// end: the pusher asks for the Status and goes on from Have.
type OffsetError struct{ Have, Sent int64 }

func (e *OffsetError) Error() string {
	return fmt.Sprintf("the chunk starts at byte %d, and the host has %d bytes of this pack: go on from %d", e.Sent, e.Have, e.Have)
}

var digestPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (r *Receiver) incoming() string { return filepath.Join(r.DataDir, "incoming") }

// storedPath is where a pack pushed with digest is kept: named by its
// content, so that a pack pushed twice is stored once and no push can
// replace what another stored; beside the data folder's other packs, where
// every index of the data folder (serve's at start) finds it.
func (r *Receiver) storedPath(digest string) string {
	return filepath.Join(r.DataDir, "runs", StoredPrefix+digest+bundle.PackSuffix)
}

// StoredPrefix begins the name of a pushed pack in a data folder's runs/
// (bundle.Pushed knows such a pack by it).
const StoredPrefix = bundle.PushedPrefix

// Status is what the host has of the pack with digest.
func (r *Receiver) Status(ctx context.Context, digest string) (Status, error) {
	if !digestPattern.MatchString(digest) {
		return Status{}, ErrDigest
	}
	st := Status{Digest: digest}
	if info, err := os.Stat(r.storedPath(digest)); err == nil {
		st.Have, st.Stored = info.Size(), true
		return r.outcome(ctx, st)
	}
	if info, err := os.Stat(filepath.Join(r.incoming(), digest+".part")); err == nil {
		st.Have = info.Size()
	}
	return st, nil
}

// Receive appends body, the bytes of the pack with digest from offset on,
// to what the host has of it. Once it has size bytes it checks them — the
// digest, then the pack as `proctor index` reads any bundle: names, sizes,
// links, schemas — stores the pack and indexes it. The Status says what it
// has then. A pack over MaxBytes, or one that would take the unfinished
// pushes over MaxIncoming, is refused (ErrTooLarge) before a byte is kept;
// unfinished pushes left alone for Abandon are removed first.
func (r *Receiver) Receive(ctx context.Context, digest string, size, offset int64, body io.Reader) (Status, error) {
	if !digestPattern.MatchString(digest) {
		return Status{}, ErrDigest
	}
	max := r.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	switch {
	case size < 1:
		return Status{}, ErrSize
	case size > max:
		return Status{}, fmt.Errorf("%w: the pack is %d bytes, over this host's bound of %d (serve --max-push-bytes); push smaller packs (a shard of the suite)", ErrTooLarge, size, max)
	}
	if err := os.MkdirAll(r.incoming(), 0o755); err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	r.Sweep()
	if st, err := r.Status(ctx, digest); err != nil || st.Stored {
		return st, err // pushed whole before: nothing to do
	}
	// The upload is locked by its own file: no lock file is left behind.
	part := filepath.Join(r.incoming(), digest+".part")
	f, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	defer f.Close()
	if err := flock.TryFile(f); err != nil {
		return Status{}, ErrBusy
	}
	info, err := f.Stat()
	if err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	have := info.Size()
	forget := func() {
		if have == 0 {
			os.Remove(part) // made for this request alone
		}
	}
	if st, err := r.Status(ctx, digest); err != nil || st.Stored {
		forget()
		return st, err // stored by a push that held the lock just before
	}
	if offset != have {
		forget()
		return Status{Digest: digest, Have: have}, &OffsetError{Have: have, Sent: offset}
	}
	if waiting, limit := r.waiting(part), r.maxIncoming(); waiting+size-have > limit {
		forget()
		return Status{Digest: digest, Have: have}, fmt.Errorf("%w: unfinished pushes hold %d bytes here, and this one needs %d more, over this host's bound of %d (serve --max-push-incoming); try again when they are done",
			ErrTooLarge, waiting, size-have, limit)
	}
	// What arrives is kept as it comes, up to the size: a dropped
	// connection keeps what was written, and the push goes on from there.
	n, copyErr := io.Copy(f, io.LimitReader(body, size-have+1))
	have += n
	if err := f.Sync(); err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	switch {
	case have > size:
		os.Remove(part)
		return Status{Digest: digest}, fmt.Errorf("%w: more than the %d bytes it was sent as", ErrMismatch, size)
	case copyErr != nil:
		forget()
		return Status{Digest: digest, Have: have}, fmt.Errorf("receive %s: %w", digest, copyErr)
	case have < size:
		forget()
		return Status{Digest: digest, Have: have}, nil
	}
	return r.store(ctx, digest, part)
}

func (r *Receiver) maxIncoming() int64 {
	if r.MaxIncoming > 0 {
		return r.MaxIncoming
	}
	return DefaultMaxIncoming
}

// waiting is the bytes the unfinished pushes other than part hold.
func (r *Receiver) waiting(part string) int64 {
	entries, _ := os.ReadDir(r.incoming())
	var total int64
	for _, e := range entries {
		if p := filepath.Join(r.incoming(), e.Name()); p != part && strings.HasSuffix(e.Name(), ".part") {
			if info, err := e.Info(); err == nil {
				total += info.Size()
			}
		}
	}
	return total
}

// Sweep removes the unfinished pushes that no push holds and that have had
// no byte for Abandon, and anything else in incoming/ that is not an
// unfinished push (the lock files older hosts left, one a digest). serve
// sweeps when it starts, and each push sweeps before it begins.
func (r *Receiver) Sweep() (removed int) {
	abandon := r.Abandon
	if abandon <= 0 {
		abandon = DefaultAbandon
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	entries, _ := os.ReadDir(r.incoming())
	for _, e := range entries {
		p := filepath.Join(r.incoming(), e.Name())
		info, err := e.Info()
		if err != nil {
			continue
		}
		if !strings.HasSuffix(e.Name(), ".part") || !e.Type().IsRegular() {
			if os.RemoveAll(p) == nil {
				removed++
			}
			continue
		}
		if now().Sub(info.ModTime()) < abandon {
			continue
		}
		l, err := flock.TryLock(p, false)
		if err != nil {
			continue // a push holds it: it is alive
		}
		if os.Remove(p) == nil {
			removed++
		}
		l.Unlock()
	}
	return removed
}

// store checks a whole upload and, when it is a pack, stores and indexes
// it.
func (r *Receiver) store(ctx context.Context, digest, part string) (Status, error) {
	sum, err := fileDigest(part)
	if err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	if sum != digest {
		os.Remove(part)
		return Status{Digest: digest}, ErrMismatch
	}
	runs := 0
	probs, err := bundle.ReadPack(part, bundle.DefaultLimits(), func(*bundle.PackedRun) error { runs++; return nil })
	sessions, sessionProbs := 0, bundle.Problems(nil)
	if err == nil {
		// Kept before the pack is stored: a push killed in between is
		// sent again, and keeping a session twice keeps one copy.
		sessions, sessionProbs, err = r.keepSessions(ctx, part)
	}
	if err == nil && runs == 0 && sessions == 0 {
		err = fmt.Errorf("%w: it holds no whole run or session%s", ErrNotAPack, problemsNote(append(probs, sessionProbs...)))
	}
	if err != nil {
		os.Remove(part)
		return Status{Digest: digest}, err
	}
	dest := r.storedPath(digest)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	if err := os.Rename(part, dest); err != nil { // whole or not at all
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	if err := osfile.SyncDir(filepath.Dir(dest)); err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	info, err := os.Stat(dest)
	if err != nil {
		return Status{}, fmt.Errorf("receive %s: %w", digest, err)
	}
	st := Status{Digest: digest, Have: info.Size(), Stored: true, Now: true}
	paths := []string{dest}
	if sessions > 0 {
		paths = append(paths, r.pushedSessions())
	}
	if _, err := index.New(r.Store).Index(ctx, paths...); err != nil {
		// Stored: the next index of the data folder (serve does one at
		// start) takes it.
		return st, fmt.Errorf("receive %s: stored, not indexed yet: %w", digest, err)
	}
	st, err = r.outcome(ctx, st)
	st.Problems = append(st.Problems, sessionProbs...)
	return st, err
}

// outcome adds what the index made of a stored pack.
func (r *Receiver) outcome(ctx context.Context, st Status) (Status, error) {
	dest := r.storedPath(st.Digest)
	runs, probs, err := r.Store.BundleOutcome(ctx, dest)
	if err != nil {
		return st, fmt.Errorf("status of %s: %w", st.Digest, err)
	}
	st.Runs, st.Problems = runs, probs
	sessions, err := bundle.ReadPackSessions(dest, bundle.DefaultLimits())
	if err != nil {
		return st, fmt.Errorf("status of %s: %w", st.Digest, err)
	}
	st.Sessions = 0
	for _, s := range sessions {
		if s.Err == nil {
			st.Sessions++
		}
	}
	return st, nil
}

func problemsNote(probs bundle.Problems) string {
	if len(probs) == 0 {
		return ""
	}
	return " (" + probs[0].String() + ")"
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
