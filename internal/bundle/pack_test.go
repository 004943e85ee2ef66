package bundle_test

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

const sampleRuns = "../../testdata/bundles/runs"

// packSamples packs every sample bundle, each with a small workspace, and
// returns the pack's path and the run ids in order.
func packSamples(t *testing.T) (string, []string) {
	t.Helper()
	entries, err := os.ReadDir(sampleRuns)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	pack := filepath.Join(t.TempDir(), "suite-1"+bundle.PackSuffix)
	w, err := bundle.CreatePack(pack)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		dir := filepath.Join(work, e.Name())
		copyDir(t, filepath.Join(sampleRuns, e.Name()), dir)
		os.MkdirAll(filepath.Join(dir, "workspace", "pkg"), 0o755)
		os.WriteFile(filepath.Join(dir, "workspace", "pkg", "a.go"), []byte("package pkg\n"), 0o644)
		os.Symlink("pkg/a.go", filepath.Join(dir, "workspace", "link.go"))
		os.WriteFile(filepath.Join(dir, ".run.json.tmp-1"), []byte("partial"), 0o644)
		if err := w.Add(dir, e.Name()); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.Name())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return pack, ids
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	os.MkdirAll(to, 0o755)
	entries, _ := os.ReadDir(from)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), data, 0o644)
	}
}

// A packed run reads exactly as its folder does, and unpacks to the same
// files.
func TestPackRoundTrip(t *testing.T) {
	pack, ids := packSamples(t)
	var got []string
	probs, err := bundle.ReadPack(pack, bundle.DefaultLimits(), func(p *bundle.PackedRun) error {
		got = append(got, p.ID)
		fromPack, err := p.Read(bundle.DefaultLimits())
		if err != nil {
			t.Fatalf("%s: %v", p.ID, err)
		}
		fromDir, err := bundle.ReadRun(filepath.Join(sampleRuns, p.ID), bundle.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		if fromPack.Dir != p.Ref() {
			t.Errorf("Dir = %q, want %q", fromPack.Dir, p.Ref())
		}
		fromPack.Dir, fromDir.Dir = "", ""
		for i := range fromPack.Problems {
			fromPack.Problems[i].File = filepath.Base(fromPack.Problems[i].File)
		}
		for i := range fromDir.Problems {
			fromDir.Problems[i].File = filepath.Base(fromDir.Problems[i].File)
		}
		if !reflect.DeepEqual(fromPack, fromDir) {
			t.Errorf("%s: from the pack %+v\nfrom the folder %+v", p.ID, fromPack, fromDir)
		}
		return nil
	})
	if err != nil || len(probs) > 0 {
		t.Fatalf("read pack: %v %v", err, probs)
	}
	if !reflect.DeepEqual(got, ids) {
		t.Fatalf("runs %v, want %v", got, ids)
	}

	cache := filepath.Join(t.TempDir(), "runs", ".unpacked")
	dir, err := bundle.Unpacked(bundle.PackRef(pack, ids[1]), cache)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(dir)) != cache || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "suite-1-") || filepath.Base(dir) != ids[1] {
		t.Fatalf("unpacked to %s, want %s/suite-1-<hash>/%s", dir, cache, ids[1])
	}
	for _, name := range []string{bundle.ReceiptFile, bundle.EventsFile, bundle.TranscriptFile} {
		a, _ := os.ReadFile(filepath.Join(sampleRuns, ids[1], name))
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s differs after unpacking: %v", name, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "workspace", "link.go")); err != nil || target != "pkg/a.go" {
		t.Errorf("symlink: %q %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".run.json.tmp-1")); err == nil {
		t.Error("a temp file was packed")
	}
	// A second call uses the cache; a plain folder is itself.
	if again, err := bundle.Unpacked(bundle.PackRef(pack, ids[1]), cache); err != nil || again != dir {
		t.Fatalf("again: %s %v", again, err)
	}
	if d, _ := bundle.Unpacked("/some/folder", cache); d != "/some/folder" {
		t.Fatalf("folder ref = %s", d)
	}
	if _, err := bundle.Unpacked(bundle.PackRef(pack, "20990101-000000-nosuch"), cache); err == nil || !strings.Contains(err.Error(), "no run") {
		t.Fatalf("missing run: %v", err)
	}
}

// A pack cut short anywhere (a crash while a run was added) still gives
// every run before the cut, and says what was lost.
func TestPackCutShort(t *testing.T) {
	pack, ids := packSamples(t)
	data, _ := os.ReadFile(pack)
	for _, frac := range []float64{0.15, 0.5, 0.85, 0.999} {
		cut := filepath.Join(t.TempDir(), "cut"+bundle.PackSuffix)
		os.WriteFile(cut, data[:int(float64(len(data))*frac)], 0o644)
		var got []string
		probs, err := bundle.ReadPack(cut, bundle.DefaultLimits(), func(p *bundle.PackedRun) error {
			if _, err := p.Read(bundle.DefaultLimits()); err != nil {
				t.Errorf("cut at %.0f%%: %s: %v", frac*100, p.ID, err)
			}
			got = append(got, p.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) >= len(ids) || strings.Join(got, ",") != strings.Join(ids[:len(got)], ",") {
			t.Errorf("cut at %.0f%%: runs %v", frac*100, got)
		}
		if len(probs) == 0 {
			t.Errorf("cut at %.0f%%: no problem reported", frac*100)
		}
	}
}

// Hostile entries never leave the run's folder: names with .., absolute
// names, and a file written through a symlink the pack made.
// writeTar writes a pack of these entries, each regular file holding "x".
func writeTar(t *testing.T, hdrs []tar.Header) string {
	t.Helper()
	pack := filepath.Join(t.TempDir(), "p"+bundle.PackSuffix)
	f, err := os.Create(pack)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for _, h := range hdrs {
		tw.WriteHeader(&h)
		if h.Size > 0 {
			tw.Write([]byte("x"))
		}
	}
	tw.Close()
	f.Close()
	return pack
}

func TestUnpackConfinesEntries(t *testing.T) {
	outside := t.TempDir()
	cases := map[string][]tar.Header{
		"dotdot":   {{Name: "20261201-093012-k3f9qa/../../escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		"absolute": {{Name: "20261201-093012-k3f9qa//etc/passwd", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}},
		"through a symlink": {
			{Name: "20261201-093012-k3f9qa/workspace/out", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "20261201-093012-k3f9qa/workspace/out/escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
			{Name: "20261201-093012-k3f9qa/run.json", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		},
		// The attack that once wrote /outside/planted when a viewer opened the run.
		"a symlink planted through a symlink": {
			{Name: "20261201-093012-k3f9qa/run.json", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
			{Name: "20261201-093012-k3f9qa/workspace/a", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "20261201-093012-k3f9qa/workspace/a/planted", Typeflag: tar.TypeSymlink, Linkname: "x"},
		},
		"a relative symlink out": {
			{Name: "20261201-093012-k3f9qa/run.json", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
			{Name: "20261201-093012-k3f9qa/workspace/up", Typeflag: tar.TypeSymlink, Linkname: "../../.."},
			{Name: "20261201-093012-k3f9qa/workspace/up/planted", Typeflag: tar.TypeSymlink, Linkname: "x"},
		},
		"out through an inside symlink": {
			{Name: "20261201-093012-k3f9qa/run.json", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
			{Name: "20261201-093012-k3f9qa/workspace/d/s", Typeflag: tar.TypeSymlink, Linkname: "../.."},
			{Name: "20261201-093012-k3f9qa/workspace/d/l", Typeflag: tar.TypeSymlink, Linkname: "s/../x"},
		},
	}
	for name, hdrs := range cases {
		t.Run(name, func(t *testing.T) {
			pack := writeTar(t, hdrs)
			dest := filepath.Join(t.TempDir(), "run")
			if err := bundle.Unpack(pack, "20261201-093012-k3f9qa", dest); err == nil {
				t.Fatal("unpacked a hostile pack")
			}
			if _, err := os.Lstat(dest); err == nil {
				t.Fatal("a hostile pack left a run folder")
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Fatalf("wrote outside: %v", entries)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(dest), "escape")); err == nil {
				t.Fatal("wrote beside the run folder")
			}
			probs, _ := bundle.ReadPack(pack, bundle.DefaultLimits(), func(*bundle.PackedRun) error { return nil })
			if name != "through a symlink" && name != "out through an inside symlink" && len(probs) == 0 {
				t.Fatal("hostile entry not reported")
			}
		})
	}
}

// Symlinks that stay inside the run folder unpack as they were.
func TestUnpackKeepsSymlinksInside(t *testing.T) {
	hdrs := []tar.Header{
		{Name: "20261201-093012-k3f9qa/run.json", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		{Name: "20261201-093012-k3f9qa/workspace/README.md", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644},
		{Name: "20261201-093012-k3f9qa/workspace/docs/readme", Typeflag: tar.TypeSymlink, Linkname: "../README.md"},
		{Name: "20261201-093012-k3f9qa/workspace/dangling", Typeflag: tar.TypeSymlink, Linkname: "not-there"},
	}
	pack := writeTar(t, hdrs)
	dest := filepath.Join(t.TempDir(), "run")
	if err := bundle.Unpack(pack, "20261201-093012-k3f9qa", dest); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dest, "workspace", "docs", "readme")); err != nil || target != "../README.md" {
		t.Fatalf("link %q %v", target, err)
	}
}

func TestSplitPackRef(t *testing.T) {
	for _, tc := range []struct {
		ref      string
		pack, id string
		ok       bool
	}{
		{"/d/runs/suite-1.tar#20261201-093012-k3f9qa", "/d/runs/suite-1.tar", "20261201-093012-k3f9qa", true},
		{"/d/runs/20261201-093012-k3f9qa", "", "", false},
		{"/d/runs/notes#1.txt", "", "", false},
		{"/d/runs/x.tar#../../etc", "", "", false},
		{"/d/runs/x.tar#", "", "", false},
	} {
		pack, id, ok := bundle.SplitPackRef(tc.ref)
		if pack != tc.pack || id != tc.id || ok != tc.ok {
			t.Errorf("SplitPackRef(%q) = %q %q %v", tc.ref, pack, id, ok)
		}
	}
}

// A pack may come from anywhere (CI, another host): whatever its bytes,
// reading and unpacking never fail hard, never write outside their folder,
// and every run read is valid.
func FuzzReadPack(f *testing.F) {
	var whole bytes.Buffer
	tw := tar.NewWriter(&whole)
	receipt, _ := os.ReadFile(filepath.Join(sampleRuns, "20261201-113020-z8c1rd", bundle.ReceiptFile))
	for _, e := range []struct {
		name string
		data []byte
	}{
		{"20261201-113020-z8c1rd/transcript.md", []byte("# Run\n\n## user\n\nhello\n")},
		{"20261201-113020-z8c1rd/workspace/a.txt", []byte("new\n")},
		{"20261201-113020-z8c1rd/run.json", receipt},
	} {
		tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.data))})
		tw.Write(e.data)
	}
	tw.Close()
	f.Add(whole.Bytes())
	f.Add(whole.Bytes()[:whole.Len()/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		pack := filepath.Join(dir, "runs", "p"+bundle.PackSuffix)
		os.MkdirAll(filepath.Dir(pack), 0o755)
		os.WriteFile(pack, data, 0o644)
		var ids []string
		if _, err := bundle.ReadPack(pack, bundle.DefaultLimits(), func(p *bundle.PackedRun) error {
			if run, err := p.Read(bundle.DefaultLimits()); err == nil {
				if err := run.Receipt.Validate("run.json", p.ID); err != nil {
					t.Fatalf("accepted receipt does not validate: %v", err)
				}
			}
			ids = append(ids, p.ID)
			return nil
		}); err != nil {
			t.Fatalf("ReadPack: %v", err)
		}
		for _, id := range ids {
			bundle.Unpacked(bundle.PackRef(pack, id), bundle.UnpackCache(dir))
		}
		// Nothing was written but the pack and the unpacked cache.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(dir, p)
			if rel != "." && rel != "runs" && rel != filepath.Join("runs", "p"+bundle.PackSuffix) && !strings.HasPrefix(rel, filepath.Join("runs", ".unpacked")) {
				t.Fatalf("wrote %s", rel)
			}
			return nil
		})
	})
}

// A run is in the pack file, whole, as soon as Add returns: a process
// killed right after it (before Close) keeps it.
func TestPackHoldsEachRunOnceAdded(t *testing.T) {
	pack := filepath.Join(t.TempDir(), "soon"+bundle.PackSuffix)
	w, err := bundle.CreatePack(pack)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ids := []string{"20261201-093012-k3f9qa", "20261201-101544-m2x7pb", "20261201-113020-z8c1rd"}
	for i, id := range ids {
		if err := w.Add(filepath.Join(sampleRuns, id), id); err != nil {
			t.Fatal(err)
		}
		var got []string
		bundle.ReadPack(pack, bundle.DefaultLimits(), func(p *bundle.PackedRun) error {
			got = append(got, p.ID)
			return nil
		})
		if len(got) != i+1 {
			t.Fatalf("after adding %d runs the pack file holds %v", i+1, got)
		}
	}
}

// A pack its writer left torn, cut anywhere, is cut back to its whole runs
// and ended as a tar file: tar reads it again, and so does ReadPack, with
// every run that was whole and no problem. A whole pack, and one a writer
// still holds, are left alone.
func TestRepairPackMakesATornPackWholeAgain(t *testing.T) {
	pack, ids := packSamples(t)
	data, _ := os.ReadFile(pack)
	if repaired, err := bundle.RepairPack(pack); err != nil || repaired {
		t.Fatalf("a whole pack: repaired %v, %v", repaired, err)
	}
	for _, frac := range []float64{0.15, 0.4, 0.5, 0.7, 0.85, 0.999} {
		cut := filepath.Join(t.TempDir(), "cut"+bundle.PackSuffix)
		os.WriteFile(cut, data[:int(float64(len(data))*frac)], 0o644)
		var before []string
		bundle.ReadPack(cut, bundle.DefaultLimits(), func(p *bundle.PackedRun) error { before = append(before, p.ID); return nil })
		if len(before) == 0 {
			continue // nothing whole to keep: left as it is
		}
		repaired, err := bundle.RepairPack(cut)
		if err != nil || !repaired {
			t.Fatalf("cut at %.0f%%: repaired %v, %v", frac*100, repaired, err)
		}
		if out, err := exec.Command("tar", "-tf", cut).CombinedOutput(); err != nil {
			t.Fatalf("cut at %.0f%% and repaired, tar -tf fails: %v\n%s", frac*100, err, out)
		}
		var after []string
		probs, err := bundle.ReadPack(cut, bundle.DefaultLimits(), func(p *bundle.PackedRun) error { after = append(after, p.ID); return nil })
		// Every run read before is kept (a run whose run.json was whole
		// before the cut is kept too, though the torn tail hid it).
		if err != nil || len(probs) > 0 || len(after) < len(before) || len(after) > len(ids) || strings.Join(after, ",") != strings.Join(ids[:len(after)], ",") {
			t.Fatalf("cut at %.0f%% and repaired: runs %v (before %v), problems %v, %v", frac*100, after, before, probs, err)
		}
		if again, _ := bundle.RepairPack(cut); again {
			t.Fatalf("cut at %.0f%%: a repaired pack was repaired again", frac*100)
		}
	}
	w, err := bundle.CreatePack(filepath.Join(t.TempDir(), "open"+bundle.PackSuffix))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if repaired, err := bundle.RepairPack(w.Path()); err != nil || repaired {
		t.Fatalf("a pack a writer holds: repaired %v, %v", repaired, err)
	}
}

// A packed run's decision folder is beside the data folder's runs/; a pack
// that lies anywhere else has none, and making one says so instead of
// writing beside the pack. Made, it is a copy of the run without its
// repositories or dot-files, and it is made once.
func TestADecisionFolderIsKeptInTheDataFolder(t *testing.T) {
	pack, ids := packSamples(t) // a pack in a folder that is not runs/
	cache := t.TempDir()
	if _, err := bundle.MakeDecisionDir(bundle.PackRef(pack, ids[0]), cache); err == nil || !strings.Contains(err.Error(), "not in a data folder's runs/") {
		t.Fatalf("a pack outside a data folder: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(pack)); len(entries) != 1 {
		t.Fatalf("something was written beside the pack: %v", entries)
	}
	data := t.TempDir()
	inData := filepath.Join(data, "runs", filepath.Base(pack))
	os.MkdirAll(filepath.Dir(inData), 0o755)
	raw, _ := os.ReadFile(pack)
	os.WriteFile(inData, raw, 0o644)
	dir, err := bundle.MakeDecisionDir(bundle.PackRef(inData, ids[0]), cache)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(data, "decisions", "suite-1", ids[0]); dir != want {
		t.Fatalf("the decision folder is %s, want %s", dir, want)
	}
	for _, name := range []string{"workspace", "workspace.git", ".run.json.tmp-1"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("the decision folder holds %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.ReceiptFile)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "marker"), nil, 0o644)
	if again, err := bundle.MakeDecisionDir(bundle.PackRef(inData, ids[0]), cache); err != nil || again != dir {
		t.Fatalf("made again: %s %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err != nil {
		t.Fatal("the decision folder was made anew, losing what it held")
	}
}
