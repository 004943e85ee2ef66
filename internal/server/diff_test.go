package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

// diffOfFiles is a diff changing one line in each of n files.
func diffOfFiles(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "diff --git a/pkg/f%06d.go b/pkg/f%06d.go\n--- a/pkg/f%06d.go\n+++ b/pkg/f%06d.go\n@@ -1,2 +1,2 @@\n package p\n-var x = %d\n+var x = %d\n", i, i, i, i, i, i+1)
	}
	return b.String()
}

// serverWithDiff is a server over one indexed run whose diff changes n
// files; it returns the server and the run's id.
func serverWithDiff(tb testing.TB, n int) (*server.Server, string) {
	tb.Helper()
	const id = "20261201-141005-s4d5tb"
	root := tb.TempDir()
	if err := os.CopyFS(filepath.Join(root, id), os.DirFS("../../testdata/bundles/runs/"+id)); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, id, bundle.DiffFile), []byte(diffOfFiles(n)), 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	st := storetest.New(tb)
	if _, err := index.New(st).Index(ctx, root); err != nil {
		tb.Fatal(err)
	}
	return server.New(st, server.Config{LocalSecret: testSecret, DataDir: tb.TempDir()}), id
}

// A run page with a 100,000-file diff once took 244 s and 93 MB of HTML.
// A large diff is a list of its files, each loaded when opened.
func TestLargeDiffIsAListOfFilesLoadedOnDemand(t *testing.T) {
	s, id := serverWithDiff(t, 3000)
	rec := get(t, s, "/runs/"+id)
	page := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(page, `id="diff-large"`) || !strings.Contains(page, "3,000 files") {
		t.Fatalf("%d: no large-diff notice", rec.Code)
	}
	if n := strings.Count(page, `hx-trigger="toggle once from:closest details, intersect once"`); n != 1000 {
		t.Fatalf("%d files listed to load, want the first 1000", n)
	}
	if strings.Contains(page, `class="diff"`) || !strings.Contains(page, "/files/diff.patch") {
		t.Fatal("hunks were rendered inline, or diff.patch is not linked")
	}
	// One file, as HTMX loads it and as a page of its own.
	frag := get(t, s, "/runs/"+id+"/diff/2999", "HX-Request", "true")
	if frag.Code != http.StatusOK || !strings.Contains(frag.Body.String(), ">3000</span>") || strings.Contains(frag.Body.String(), "<html") {
		t.Fatalf("fragment %d:\n%.500s", frag.Code, frag.Body.String())
	}
	full := get(t, s, "/runs/"+id+"/diff/7?view=split")
	if full.Code != http.StatusOK || !strings.Contains(full.Body.String(), "<html") || !strings.Contains(full.Body.String(), "pkg/f000007.go") || !strings.Contains(full.Body.String(), "diff split") {
		t.Fatalf("full page %d", full.Code)
	}
	for _, bad := range []string{"/runs/" + id + "/diff/3000", "/runs/" + id + "/diff/-1", "/runs/" + id + "/diff/x", "/runs/nope/diff/0"} {
		if rec := get(t, s, bad); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, rec.Code)
		}
	}
	// A small diff is still shown whole.
	small, id := serverWithDiff(t, 3)
	if page := get(t, small, "/runs/"+id).Body.String(); strings.Contains(page, `id="diff-large"`) || strings.Count(page, `class="diff"`) != 3 {
		t.Fatal("a small diff is not shown inline")
	}
}

// The lines around a hunk: bad numbers, a file or run that is not there,
// and a run whose base cannot be read are each refused with what is wrong.
func TestDiffLinesRefusesBadInput(t *testing.T) {
	s, id := serverWithDiff(t, 2)
	for target, want := range map[string]int{
		"/runs/" + id + "/diff/0/lines?from=x&to=0&shift=0":  http.StatusBadRequest,
		"/runs/" + id + "/diff/0/lines?from=1&shift=0":       http.StatusBadRequest,
		"/runs/" + id + "/diff/9/lines?from=1&to=0&shift=0":  http.StatusNotFound,
		"/runs/" + id + "/diff/-1/lines?from=1&to=0&shift=0": http.StatusNotFound,
		"/runs/nope/diff/0/lines?from=1&to=0&shift=0":        http.StatusNotFound,
		"/runs/" + id + "/diff/0/lines?from=1&to=20&shift=0": http.StatusUnprocessableEntity, // the fixture keeps no base repository
	} {
		rec := get(t, s, target)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d\n%.300s", target, rec.Code, want, rec.Body.String())
		}
	}
	if body := get(t, s, "/runs/"+id+"/diff/0/lines?from=x&to=0&shift=0").Body.String(); !strings.Contains(body, `from=&#34;x&#34;: want a line number`) {
		t.Errorf("the refusal does not name the field:\n%.300s", body)
	}
}

// BenchmarkRunPageLargeDiff times the run page of a 100,000-file diff
// (target ≤1 s) against the page of the same run with a one-file diff,
// measured in the same run.
func BenchmarkRunPageLargeDiff(b *testing.B) {
	timePage := func(s *server.Server, id string) (time.Duration, int) {
		req := httptest.NewRequest(http.MethodGet, "http://localhost/runs/"+id, nil)
		rec := httptest.NewRecorder()
		t0 := time.Now()
		withSecret(s).ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d", rec.Code)
		}
		return time.Since(t0), rec.Body.Len()
	}
	small, sid := serverWithDiff(b, 1)
	large, lid := serverWithDiff(b, 100000)
	var base, total time.Duration
	size := 0
	for range b.N {
		d, _ := timePage(small, sid)
		base += d
		d, size = timePage(large, lid)
		total += d
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/page")
	b.ReportMetric(float64(size)/(1<<20), "MB/page")
	b.ReportMetric(float64(total)/float64(base), "ratio-to-1-file-page")
}
