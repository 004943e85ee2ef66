package index_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// copySamples copies the sample bundles into a temp folder the test may change.
func copySamples(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS("../../testdata/bundles")); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestIndexSamples(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	rep, err := index.New(st).Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 7 || rep.Unchanged != 0 || rep.Broken != 0 {
		t.Fatalf("report = %+v, want 7 indexed (6 runs, 1 session), no problems", rep)
	}
	page, err := st.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 6 {
		t.Fatalf("got %d runs, want 6", len(page.Runs))
	}
	failed, err := st.GetRun(ctx, "20261201-101544-m2x7pb")
	if err != nil {
		t.Fatal(err)
	}
	if failed.Verdict == nil || failed.Verdict.ChecksBroken != 1 || failed.Verdict.ChecksFailed != 1 || len(failed.Checks) != 4 {
		t.Fatalf("verdict = %+v, checks = %d", failed.Verdict, len(failed.Checks))
	}
	sess, err := st.GetSession(ctx, "sess-20261201-140200-h7")
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.Runs) != 2 || sess.Runs[0].Run == nil || sess.Runs[1].Run == nil {
		t.Fatalf("session runs = %+v", sess.Runs)
	}
}

func TestIndexTwiceChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	ix := index.New(st)
	if _, err := ix.Index(ctx, root); err != nil {
		t.Fatal(err)
	}
	before, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ix.Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 0 || rep.Unchanged != 7 {
		t.Fatalf("second pass report = %+v, want all 7 unchanged", rep)
	}
	after, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatal("indexing the same bundles twice changed the rows")
	}
}

func TestRebuildMatchesLiveIndex(t *testing.T) {
	ctx := context.Background()
	root := copySamples(t)
	live := openStore(t)
	ix := index.New(live)
	if _, err := ix.Index(ctx, root); err != nil {
		t.Fatal(err)
	}
	// Life goes on: a run gets reviewed, a run is deleted, a new broken
	// bundle appears, a session is edited. Each change is indexed as it
	// happens.
	runA := filepath.Join(root, "runs", "20261201-141005-s4d5tb", "run.json")
	data, _ := os.ReadFile(runA)
	data = []byte(strings.Replace(string(data), `"status": "awaiting_review"`, `"status": "passed"`, 1))
	data = []byte(strings.Replace(string(data), `"stage": "awaiting_review"`, `"stage": "completed"`, 1))
	if err := bundle.WriteFileAtomic(runA, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Index(ctx, root); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "runs", "20261201-113020-z8c1rd")); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(root, "runs", "20261202-000000-broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "run.json"), []byte(`{"schema": "proctor.receipt.v1", "run_id": `), 0o644)
	rep, err := ix.Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.Broken != 1 {
		t.Fatalf("report = %+v, want 1 removed and 1 broken", rep)
	}

	rebuilt := openStore(t)
	if _, err := index.New(rebuilt).Index(ctx, root); err != nil {
		t.Fatal(err)
	}
	a, err := live.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rebuilt.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for table := range mergeKeys(a, b) {
		if !reflect.DeepEqual(a[table], b[table]) {
			t.Errorf("table %s differs:\nlive:    %q\nrebuilt: %q", table, a[table], b[table])
		}
	}
}

func mergeKeys(a, b map[string][]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
