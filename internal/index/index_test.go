package index_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

func openStore(t *testing.T) *store.Store { return storetest.New(t) }

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
	if err := osfile.WriteFile(runA, 0o644, true, osfile.Bytes(data)); err != nil {
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

func TestMalformedBundlesNeverStopTheOthers(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	bad := map[string]string{
		"20261202-000001-json":   `{"schema": "proctor.receipt.v1",`,
		"20261202-000002-schema": `{"schema": "proctor.receipt.v2", "run_id": "20261202-000002-schema"}`,
		"20261202-000003-field":  `{"schema": "proctor.receipt.v1", "run_id": "20261202-000003-field", "kind": "task", "status": "passed", "stage": "completed", "source": {"kind": "local"}, "started_at": "2026-12-01T10:00:00Z"}`,
		"unsafe id":              `{"schema": "proctor.receipt.v1", "run_id": "unsafe id"}`,
	}
	for name, content := range bad {
		dir := filepath.Join(root, "runs", name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "run.json"), []byte(content), 0o644)
	}
	// A bundle folder without run.json, and a session file that is not JSON.
	os.MkdirAll(filepath.Join(root, "runs", "20261202-000004-empty"), 0o755)
	os.WriteFile(filepath.Join(root, "sessions", "broken.json"), []byte("nope"), 0o644)
	// A transcript that escapes its bundle through a symlink: the run is
	// indexed without it.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	tr := filepath.Join(root, "runs", "20261201-152233-q9w8er", "transcript.md")
	os.Remove(tr)
	os.Symlink(secret, tr)
	// A garbage line in an events log: the run is indexed, read only in
	// part, and listed with the line.
	events := filepath.Join(root, "runs", "20261201-093012-k3f9qa", "events.jsonl")
	f, _ := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0o644)
	f.WriteString("this is not JSON\n")
	f.Close()

	rep, err := index.New(st).Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 7 || rep.Broken != 8 {
		t.Fatalf("report = %+v, want the 7 good bundles indexed and 8 with problems", rep)
	}
	text := ""
	for _, p := range rep.Problems {
		text += p.Problem.String() + "\n"
	}
	for _, want := range []string{
		"20261202-000001-json/run.json: invalid JSON",
		`20261202-000002-schema/run.json: schema: unknown schema version "proctor.receipt.v2"`,
		"20261202-000003-field/run.json: model.name: missing",
		`unsafe id/run.json: run_id: "unsafe id" is not a safe folder name`,
		"20261202-000004-empty/run.json: missing",
		"sessions/broken.json: invalid JSON at line 1, column 2",
		"transcript.md: is a symlink to " + secret + ", outside the bundle folder",
		"20261201-093012-k3f9qa/events.jsonl: line 38: invalid JSON",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems do not mention %q:\n%s", want, text)
		}
	}
	page, _ := st.ListRuns(ctx, store.RunFilter{Query: "secret"})
	if len(page.Runs) != 0 {
		t.Fatal("text from outside the bundle was indexed")
	}
	probs, _ := st.ListProblems(ctx)
	if len(probs) != len(rep.Problems) {
		t.Fatalf("stored %d problems, reported %d", len(probs), len(rep.Problems))
	}

	// Fixing a bundle clears its problem on the next pass.
	fixed := filepath.Join(root, "runs", "20261202-000001-json")
	os.RemoveAll(fixed)
	rep, err = index.New(st).Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.Broken != 7 {
		t.Fatalf("after the fix: %+v", rep)
	}
}

func TestDuplicateRunIDsAcrossFolders(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	a := copySamples(t)
	b := copySamples(t)
	ix := index.New(st)
	if _, err := ix.Index(ctx, a); err != nil {
		t.Fatal(err)
	}
	rep, err := ix.Index(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 0 || rep.Broken != 7 {
		t.Fatalf("report = %+v", rep)
	}
	if !strings.Contains(rep.Problems[0].Message, "is already indexed from "+a) {
		t.Fatalf("problem = %v", rep.Problems[0])
	}
	// Once the first copy is gone, the second takes over.
	os.RemoveAll(a)
	if _, err := ix.Index(ctx, a+"-does-not-exist"); err == nil {
		t.Fatal("indexing a missing folder succeeded")
	}
	rep, err = ix.Index(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 7 || rep.Broken != 0 {
		t.Fatalf("after removing the first copy: %+v", rep)
	}
	got, err := st.RunBundlePath(ctx, "20261201-093012-k3f9qa")
	if err != nil || !strings.HasPrefix(got, b) {
		t.Fatalf("run path = %s, %v", got, err)
	}
}

func TestIndexSingleBundleAndSessionFile(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	rep, err := index.New(st).Index(ctx,
		filepath.Join(root, "runs", "20261201-093012-k3f9qa"),
		filepath.Join(root, "sessions", "sess-20261201-140200-h7.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 2 {
		t.Fatalf("report = %+v", rep)
	}
}

// Ten concurrent `proctor index` runs over the same bundles once failed
// with "UNIQUE constraint failed: runs.bundle_path": each decided outside
// its write transaction that a bundle was new. Any number of concurrent
// indexers (each its own connection pool, as separate processes are) all
// succeed, and the index ends equal to a rebuild.
func TestConcurrentIndexersAgreeWithARebuild(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeSyntheticBundles(t, root, 1500)
	db := filepath.Join(t.TempDir(), "proctor.db")
	first, err := store.Open(ctx, db) // migrated once, as by a running serve
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	const n = 8
	stores := make([]*store.Store, n)
	for i := range stores {
		if stores[i], err = store.Open(ctx, db); err != nil {
			t.Fatal(err)
		}
		defer stores[i].Close()
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	for _, st := range stores {
		go func() {
			<-start
			_, err := index.New(st).Index(ctx, root)
			errs <- err
		}()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent indexer failed: %v", err)
		}
	}
	live, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	rebuilt := openStore(t)
	if _, err := index.New(rebuilt).Index(ctx, root); err != nil {
		t.Fatal(err)
	}
	a, _ := live.Snapshot(ctx)
	b, _ := rebuilt.Snapshot(ctx)
	for table := range mergeKeys(a, b) {
		if !reflect.DeepEqual(a[table], b[table]) {
			t.Errorf("table %s differs from a rebuild (%d rows, rebuild %d)", table, len(a[table]), len(b[table]))
		}
	}
}
