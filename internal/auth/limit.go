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

// Blocked reports whether any of keys has reached its limit, and how long
// until the oldest failure leaves the window.
func (l *Limiter) Blocked(keys ...string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range keys {
		f := l.prune(k, now)
		if len(f) >= l.max {
			wait = max(wait, f[0].Add(l.window).Sub(now))
		}
	}
	return wait > 0, wait
}

// Fail records a failed sign-in against every key.
func (l *Limiter) Fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f := l.prune(k, now)
		if len(f) < l.max*2 { // enough to stay blocked; bounded memory per key
			f = append(f, now)
		}
		l.fails[k] = f
	}
	if len(l.fails) > 100_000 { // a spray of names: forget the quiet ones
		for k := range l.fails {
			if len(l.prune(k, now)) == 0 {
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
