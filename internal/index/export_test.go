package index

import "github.com/proctor-dev/proctor/internal/store"

// NewWith is New with batches of n updates, for tests of batching.
func NewWith(st *store.Store, n int) *Indexer {
	ix := New(st)
	ix.batchSize = n
	return ix
}
