package push

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/flock"
)

// pushedSessions is where the sessions pushed to this host are kept: the
// newest copy of each, in <data>/sessions/pushed/<id>.json.
func (r *Receiver) pushedSessions() string {
	return filepath.Join(r.DataDir, "sessions", bundle.PushedSessions)
}

// keepSessions keeps the session files a pack carries, each read as
// hostile input (bundle.ReadPackSessions) and written anew from what was
// read, so no byte a pusher chose beyond a session's fields reaches the
// file. A session pushed again (from a later push of the same data
// folder) replaces the copy kept when it is newer: a later updated_at, or
// the same with more runs. It returns the sessions kept or already kept,
// and the session files refused, with why.
func (r *Receiver) keepSessions(ctx context.Context, pack string) (n int, probs bundle.Problems, err error) {
	found, err := bundle.ReadPackSessions(pack, bundle.DefaultLimits())
	if err != nil || len(found) == 0 {
		return 0, nil, err
	}
	dir := r.pushedSessions()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, nil, fmt.Errorf("keep pushed sessions: %w", err)
	}
	// One push at a time decides which copy is the newest.
	l, err := flock.Wait(ctx, filepath.Join(dir, ".lock"), true)
	if err != nil {
		return 0, nil, fmt.Errorf("keep pushed sessions: %w", err)
	}
	defer l.Unlock()
	for _, ps := range found {
		if ps.Err != nil {
			probs = append(probs, bundle.ProblemsOf(ps.Err, ps.Ref)...)
			continue
		}
		n++
		s := ps.Session
		old, err := bundle.ReadSession(filepath.Join(dir, s.SessionID+".json"), bundle.DefaultLimits())
		if err == nil && !newer(s, old) {
			continue
		}
		if err := bundle.WriteSession(dir, s); err != nil {
			return n, probs, fmt.Errorf("keep pushed session %s: %w", s.SessionID, err)
		}
	}
	return n, probs, nil
}

// newer reports whether session s is a later copy than old.
func newer(s, old *bundle.Session) bool {
	if !s.UpdatedAt.Equal(old.UpdatedAt) {
		return s.UpdatedAt.After(old.UpdatedAt)
	}
	return len(s.Runs) > len(old.Runs)
}
