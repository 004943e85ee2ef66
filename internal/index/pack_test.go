package index_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/store"
)

// packRuns moves the sample run folders under root/runs into one pack
// there, leaving no folders.
func packRuns(t *testing.T, root, name string) string {
	t.Helper()
	runs := filepath.Join(root, "runs")
	pack := filepath.Join(runs, name+bundle.PackSuffix)
	w, err := bundle.CreatePack(pack)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(runs)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if err := w.Add(filepath.Join(runs, e.Name()), e.Name()); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(runs, e.Name()))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pack
}

// Runs in a pack are indexed like folders, under PACK#RUN_ID; indexing
// again reads nothing; the index of a pack matches the index of the same
// runs as folders; a removed pack's runs are forgotten.
func TestIndexPack(t *testing.T) {
	ctx := context.Background()

	folders := openStore(t)
	if _, err := index.New(folders).Index(ctx, copySamples(t)); err != nil {
		t.Fatal(err)
	}

	st := openStore(t)
	root := copySamples(t)
	pack := packRuns(t, root, "suite-1")
	ix := index.New(st)
	rep, err := ix.Index(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Indexed != 7 || rep.Broken != 0 {
		t.Fatalf("report = %+v, want 7 indexed (6 packed runs, 1 session)", rep)
	}
	run, err := st.GetRun(ctx, "20261201-101544-m2x7pb")
	if err != nil {
		t.Fatal(err)
	}
	if run.BundlePath != bundle.PackRef(pack, "20261201-101544-m2x7pb") || run.Verdict == nil || len(run.Checks) != 4 {
		t.Fatalf("packed run: path %s verdict %+v checks %d", run.BundlePath, run.Verdict, len(run.Checks))
	}
	page, err := st.ListRuns(ctx, store.RunFilter{Query: "rounding"})
	if err != nil || len(page.Runs) == 0 {
		t.Fatalf("full-text search over packed transcripts: %d runs, %v", len(page.Runs), err)
	}

	// The same rows as the folders gave, but for the bundle paths.
	a, _ := folders.Snapshot(ctx)
	b, _ := st.Snapshot(ctx)
	if !reflect.DeepEqual(stripPaths(a), stripPaths(b)) {
		t.Fatalf("packed index differs from the folder index:\n%v\n%v", stripPaths(a), stripPaths(b))
	}

	rep, err = ix.Index(ctx, root)
	if err != nil || rep.Indexed != 0 || rep.Unchanged != 7 {
		t.Fatalf("second pass = %+v, %v; want 7 unchanged", rep, err)
	}
	// A pack given by name is indexed too, and is the same pack.
	if rep, err = ix.Index(ctx, pack); err != nil || rep.Indexed != 0 || rep.Unchanged != 6 {
		t.Fatalf("pack as a root = %+v, %v", rep, err)
	}

	os.Remove(pack)
	rep, err = ix.Index(ctx, root)
	if err != nil || rep.Removed != 6 {
		t.Fatalf("after removing the pack = %+v, %v; want 6 removed", rep, err)
	}
	if page, _ := st.ListRuns(ctx, store.RunFilter{}); len(page.Runs) != 0 {
		t.Fatalf("%d runs left", len(page.Runs))
	}
}

// A pack cut short (its writer killed while it added a run) is repaired
// on the first pass — cut back to its whole runs, a tar file again — and
// indexed up to the cut; the next pass finds nothing to repair.
func TestIndexPackCutShort(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	pack := packRuns(t, root, "suite-2")
	whole, _ := os.ReadFile(pack)
	os.WriteFile(pack, whole[:len(whole)*2/3], 0o644)
	ix := index.New(st)
	rep, err := ix.Index(ctx, root)
	if err != nil || len(rep.Repaired) != 1 || rep.Repaired[0] != pack || len(rep.Problems) != 0 {
		t.Fatalf("first pass: %+v %v", rep, err)
	}
	if out, err := exec.Command("tar", "-tf", pack).CombinedOutput(); err != nil {
		t.Fatalf("the repaired pack: tar -tf: %v\n%s", err, out)
	}
	page, _ := st.ListRuns(ctx, store.RunFilter{})
	if len(page.Runs) == 0 || len(page.Runs) >= 6 {
		t.Fatalf("%d runs indexed from the cut pack", len(page.Runs))
	}
	if rep, err = ix.Index(ctx, root); err != nil || len(rep.Repaired) != 0 || len(rep.Problems) != 0 || rep.Indexed != 0 {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
	os.WriteFile(pack, whole, 0o644)
	rep, err = ix.Index(ctx, root)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("whole again: %+v %v", rep, err)
	}
	if page, _ := st.ListRuns(ctx, store.RunFilter{}); len(page.Runs) != 6 {
		t.Fatalf("%d runs after the pack was whole again", len(page.Runs))
	}
}

// stripPaths drops bundle paths and fingerprints from a snapshot.
func stripPaths(snap map[string][]string) map[string][]string {
	out := map[string][]string{}
	for table, rows := range snap {
		if table == "bundles" {
			continue
		}
		for _, r := range rows {
			out[table] = append(out[table], stripPath(r))
		}
	}
	return out
}

func stripPath(row string) string {
	var keep []string
	for _, f := range strings.Split(row, "|") {
		if strings.Contains(f, "/runs/") || strings.Contains(f, "/sessions/") {
			continue
		}
		keep = append(keep, f)
	}
	return strings.Join(keep, "|")
}

// A tar file that is not in a runs/ folder is not taken for a pack unless
// it is named as a root.
func TestOnlyPacksInRunsFoldersAreRead(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	other := filepath.Join(root, "backups")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "photos.tar"), []byte("not a pack"), 0o644)
	rep, err := index.New(openStore(t)).Index(ctx, root)
	if err != nil || rep.Indexed != 0 || len(rep.Problems) != 0 {
		t.Fatalf("report %+v, %v; want nothing read", rep, err)
	}
	rep, err = index.New(openStore(t)).Index(ctx, filepath.Join(other, "photos.tar"))
	if err != nil || len(rep.Problems) == 0 {
		t.Fatalf("a tar named as a root: %+v, %v; want its problems", rep, err)
	}
}

// A pack written again without one of its runs (and a run moved from it
// into another pack) is read run by run: the run it lost is forgotten, the
// moved one is indexed from its new pack, and the batches are small.
func TestAPackThatLostARunIsReadAgainInBatches(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	root := copySamples(t)
	runs := filepath.Join(root, "runs")
	entries, _ := os.ReadDir(runs)
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	keep := filepath.Join(t.TempDir(), "runs")
	if err := os.CopyFS(keep, os.DirFS(runs)); err != nil {
		t.Fatal(err)
	}
	pack := packRuns(t, root, "suite-1")
	ix := index.NewWith(st, 2) // batches of two runs
	if rep, err := ix.Index(ctx, root); err != nil || rep.Indexed != 7 {
		t.Fatalf("%+v %v", rep, err)
	}
	// suite-1 again without the first two runs; the second moves to suite-2.
	os.Remove(pack)
	w1, err1 := bundle.CreatePack(pack)
	w2, err2 := bundle.CreatePack(filepath.Join(runs, "suite-2"+bundle.PackSuffix))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for i, id := range ids {
		w := w1
		switch {
		case i == 0:
			continue
		case i == 1:
			w = w2
		}
		if err := w.Add(filepath.Join(keep, id), id); err != nil {
			t.Fatal(err)
		}
	}
	if err1, err2 = w1.Close(), w2.Close(); err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	rep, err := ix.Index(ctx, root)
	if err != nil || rep.Removed != 2 || rep.Broken != 0 {
		t.Fatalf("second pass %+v %v", rep, err)
	}
	if _, err := st.GetRun(ctx, ids[0]); err == nil {
		t.Errorf("%s, gone from every pack, is still indexed", ids[0])
	}
	run, err := st.GetRun(ctx, ids[1])
	if err != nil || !strings.Contains(run.BundlePath, "suite-2") {
		t.Errorf("%s moved to suite-2: %v %+v", ids[1], err, run)
	}
}
