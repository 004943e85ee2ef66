package flock_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/flock"
)

func TestALockIsHeldByOneAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	first, err := flock.TryLock(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !flock.Held(path) {
		t.Fatal("Held: false while it is held")
	}
	if _, err := flock.TryLock(path, true); !errors.Is(err, flock.ErrLocked) {
		t.Fatalf("a second TryLock: %v, want ErrLocked", err)
	}
	// A wait that ends with its context takes nothing, and lets go of
	// what it would have got.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := flock.Wait(ctx, path, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past its context: %v", err)
	}
	// A waiter gets the lock when its holder lets go.
	got := make(chan error, 1)
	go func() {
		l, err := flock.Wait(context.Background(), path, true)
		if err == nil {
			l.Unlock()
		}
		got <- err
	}()
	first.Unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// The abandoned wait let go too: the lock is free.
	l, err := flock.Wait(context.Background(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if flock.Held(path) {
		t.Fatal("Held: true after every holder let go")
	}
	if _, err := flock.TryLock(filepath.Join(t.TempDir(), "missing"), false); err == nil || errors.Is(err, flock.ErrLocked) {
		t.Fatalf("locking a missing file without create: %v", err)
	}
}

// Shared locks are held by many at once, and keep the exclusive one out
// until the last lets go.
func TestASharedLockIsHeldByMany(t *testing.T) {
	dir := t.TempDir()
	a, err := flock.TryShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := flock.TryShared(dir)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if _, err := flock.TryLock(dir, false); !errors.Is(err, flock.ErrLocked) {
		t.Fatalf("the exclusive lock while shared ones are held: %v", err)
	}
	a.Unlock()
	if _, err := flock.TryLock(dir, false); !errors.Is(err, flock.ErrLocked) {
		t.Fatalf("the exclusive lock while one shared is held: %v", err)
	}
	b.Unlock()
	x, err := flock.TryLock(dir, false)
	if err != nil {
		t.Fatalf("the exclusive lock once every shared one let go: %v", err)
	}
	if _, err := flock.TryShared(dir); !errors.Is(err, flock.ErrLocked) {
		t.Fatalf("a shared lock while the exclusive one is held: %v", err)
	}
	x.Unlock()
}
