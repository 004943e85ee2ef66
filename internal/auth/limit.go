package auth

import (
	"sync"
	"time"
)

// Limiter limits failed sign-ins per key (a user name, an address) in a
// sliding window. Only failures count, and each key is limited apart, so a
// flood of wrong passwords from one address locks out that address and the
// names it tried, but never a correct sign-in to another name from another
// address.
type Limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	fails  map[string][]time.Time
}

// NewLimiter allows max failures per key within window. now is the clock; nil
// is time.Now.
func NewLimiter(max int, window time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{max: max, window: window, now: now, fails: map[string][]time.Time{}}
}

// Try checks and counts an attempt in one step, so that concurrent attempts cannot
// all pass the check before any is counted: when no key of block has
// reached its limit, the attempt is counted against every key of count at
// once, as if it failed. A caller whose attempt then succeeds calls Forgive
// with the same count keys.
func (l *Limiter) Try(block, count []string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range block {
		f := l.prune(k, now)
		if len(f) >= l.max {
			wait = max(wait, f[0].Add(l.window).Sub(now))
		}
	}
	if wait > 0 {
		return false, wait
	}
	for _, k := range count {
		l.fails[k] = append(l.prune(k, now), now)
	}
	if len(l.fails) > 100_000 { // a spray of names: forget the quiet ones
		for k := range l.fails {
			l.prune(k, now)
		}
	}
	return true, 0
}

// Forgive takes back the newest attempt Try counted against each key.
func (l *Limiter) Forgive(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if f := l.fails[k]; len(f) > 0 {
			l.fails[k] = f[:len(f)-1]
			if len(f) == 1 {
				delete(l.fails, k)
			}
		}
	}
}

// Succeed forgets the failures of the keys after a correct sign-in.
func (l *Limiter) Succeed(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.fails, k)
	}
}

func (l *Limiter) prune(k string, now time.Time) []time.Time {
	f := l.fails[k]
	i := 0
	for i < len(f) && now.Sub(f[i]) >= l.window {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(l.fails, k)
		return nil
	}
	l.fails[k] = f
	return f
}

// Failures is how many failures key has within the window.
func (l *Limiter) Failures(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.prune(key, l.now()))
}
