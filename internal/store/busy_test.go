package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// A batch that finds the database locked past the busy timeout (as many
// indexers on a busy machine can) is written once the lock is free, not
// lost with an error.
func TestABatchFoundLockedIsWrittenOnceTheLockIsFree(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "proctor.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.db.SetMaxOpenConns(1) // one connection, whose busy timeout is short
	if _, err := st.db.ExecContext(ctx, "PRAGMA busy_timeout = 50"); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil) // immediate: it holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- st.ApplyBundles(ctx, []BundleUpdate{{Path: "/data/runs/run-1", Kind: BundleRun, Fingerprint: "f"}}, nil)
	}()
	select {
	case err := <-done:
		t.Fatalf("the batch ended while another connection held the lock: %v", err)
	case <-time.After(500 * time.Millisecond): // ten busy timeouts
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the batch: %v", err)
	}
	fps, err := st.Fingerprints(ctx, "/data/runs")
	if err != nil || fps["/data/runs/run-1"] != "f" {
		t.Fatalf("the batch was not written: %v %v", fps, err)
	}
}
