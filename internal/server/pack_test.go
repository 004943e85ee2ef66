package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

// A run recorded in a pack shows the same page and serves the same files as
// a run in a folder; when its pack is gone, the page still opens and says
// why the files are missing.
func TestPackedRunPage(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	data := t.TempDir()
	runs := filepath.Join(data, "runs")
	if err := os.CopyFS(runs, os.DirFS("../../testdata/bundles/runs")); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(runs, "suite-x"+bundle.PackSuffix)
	w, err := bundle.CreatePack(pack)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20261201-093012-k3f9qa", "20261201-101544-m2x7pb"} {
		if err := w.Add(filepath.Join(runs, id), id); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(filepath.Join(runs, id))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := index.New(st).Index(ctx, runs); err != nil {
		t.Fatal(err)
	}
	s := server.New(st, server.Config{LocalSecret: testSecret, DataDir: data})
	for _, tc := range []struct{ target, want string }{
		{"/runs/20261201-093012-k3f9qa", "math.Round"},
		{"/runs/20261201-101544-m2x7pb", "no-old-key"},
		{"/runs/20261201-093012-k3f9qa/files/diff.patch", "math.Round"},
		{"/runs/20261201-101544-m2x7pb/files/verdict.json", `"passed": false`},
	} {
		rec := get(t, s, tc.target)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("GET %s = %d, want 200 with %q:\n%.400s", tc.target, rec.Code, tc.want, rec.Body.String())
		}
	}
	os.Remove(pack)
	os.RemoveAll(filepath.Join(runs, ".unpacked"))
	rec := get(t, s, "/runs/20261201-093012-k3f9qa")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "cannot be read") {
		t.Errorf("page of a run whose pack is gone = %d:\n%.600s", rec.Code, rec.Body.String())
	}
	if rec := get(t, s, "/runs/20261201-093012-k3f9qa/files/diff.patch"); rec.Code != http.StatusNotFound {
		t.Errorf("file of a run whose pack is gone = %d", rec.Code)
	}
}
