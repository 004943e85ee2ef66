// Package live wakes the pages that show a run as it happens when the run
// has news: the runner recorded an event, or an approval request was
// posted. The news itself is read from the run's bundle — the files are
// the record — so a reader that was not awake misses nothing; the broker
// only tells it when to look, and nothing polls.
package live

import "sync"

// Broker tells a run's subscribers that it has news. Its zero value is not
// usable; a nil *Broker publishes nothing and wakes nobody.
type Broker struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]bool // by run id
}

// New returns a broker with no subscribers.
func New() *Broker { return &Broker{subs: map[string]map[chan struct{}]bool{}} }

// Publish wakes every subscriber of the run. It never blocks: a
// subscriber that has not yet looked is woken once for all the news since.
func (b *Broker) Publish(runID string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[runID] {
		select {
		case ch <- struct{}{}:
		default: // already woken
		}
	}
}

// Subscribe returns a channel that receives when the run has news, and the
// function that ends the subscription.
func (b *Broker) Subscribe(runID string) (wake <-chan struct{}, cancel func()) {
	if b == nil {
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan struct{}]bool{}
	}
	b.subs[runID][ch] = true
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs[runID], ch)
		if len(b.subs[runID]) == 0 {
			delete(b.subs, runID)
		}
	}
}
