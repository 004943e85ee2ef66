// Package storetest opens index databases for tests: real SQLite files in
// the test's temp folder, never a mock of the store.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/proctor-dev/proctor/internal/store"
)

// New opens a new index database in a temp folder of tb, closed when the
// test ends.
func New(tb testing.TB) *store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "proctor.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
