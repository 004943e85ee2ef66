package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// newServer returns a server over a fresh store holding the sample bundles
// (copied, so a test may change them).
func newServer(t testing.TB, withSamples bool) (*server.Server, string) {
	t.Helper()
	s, root, _ := newServerStore(t, withSamples)
	return s, root
}

// newServerStore is newServer that also returns the store.
func newServerStore(t testing.TB, withSamples bool) (*server.Server, string, *store.Store) {
	t.Helper()
	return newServerWith(t, withSamples, server.Config{})
}

// newServerWith is newServerStore with a configuration (its DataDir, when
// empty, is a fresh folder).
func newServerWith(t testing.TB, withSamples bool, cfg server.Config) (*server.Server, string, *store.Store) {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	root := t.TempDir()
	if withSamples {
		if err := os.CopyFS(root, os.DirFS("../../testdata/bundles")); err != nil {
			t.Fatal(err)
		}
		if _, err := index.New(st).Index(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.LocalSecret == "" {
		cfg.LocalSecret = testSecret
	}
	return server.New(st, cfg), root, st
}

// launching is a launcher that launches runs (a runner and a queue of one
// worker) in data, for a test of the routes only such a server has.
func launching(t testing.TB, data string) *launch.Launcher {
	t.Helper()
	r := &run.Runner{DataDir: data}
	q := jobs.New(r, 1)
	t.Cleanup(func() { q.Close(); q.Wait(context.Background()) })
	return &launch.Launcher{Runner: r, Queue: q, Board: approval.NewBoard(time.Minute, nil)}
}

func get(t *testing.T, s *server.Server, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://localhost"+target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	withSecret(s).ServeHTTP(rec, req)
	return rec
}

func TestRoutes(t *testing.T) {
	s, _ := newServer(t, true)
	tests := []struct {
		target string
		status int
		want   string // a substring of the body
	}{
		{"/", http.StatusSeeOther, ""},
		{"/favicon.ico", http.StatusMovedPermanently, ""},
		{"/healthz", http.StatusOK, `"status":"ok"`},
		{"/runs", http.StatusOK, "Fix the rounding bug"},
		{"/runs?status=failed", http.StatusOK, "rename-config-key"},
		{"/runs?limit=0", http.StatusBadRequest, "limit: want a whole number from 1 to 500"},
		{"/runs?status=done", http.StatusBadRequest, "status: want one of queued, running, awaiting_approval"},
		{"/runs?kind=job", http.StatusBadRequest, "kind: want one of task, scenario; got &#34;job&#34;"},
		{"/runs?review=maybe", http.StatusBadRequest, "review: want one of pending, approved, rejected, none"},
		{"/runs?sort=random", http.StatusBadRequest, "sort: want one of newest, oldest"},
		{"/api/v1/runs?status=done", http.StatusBadRequest, "status: want one of"},
		{"/runs?after=garbage!", http.StatusOK, "This page link is out of date"},
		{"/runs/20261201-093012-k3f9qa", http.StatusOK, "Approved"},
		{"/runs/20261201-101544-m2x7pb", http.StatusOK, "no-old-key"},
		{"/runs/no-such-run", http.StatusNotFound, "proctor index"},
		{"/runs/..%2F..%2Fetc", http.StatusNotFound, ""},
		{"/runs/20261201-093012-k3f9qa/files/diff.patch", http.StatusOK, "math.Round"},
		{"/runs/20261201-093012-k3f9qa/files/..%2Fetc", http.StatusNotFound, ""},
		{"/runs/20261201-093012-k3f9qa/files/verdict.json", http.StatusNotFound, "has no verdict.json"},
		{"/sessions", http.StatusOK, "Health endpoint for the shop server"},
		{"/sessions/sess-20261201-140200-h7", http.StatusOK, "Now add a test for it."},
		{"/sessions/sess-20261201-140200-h7", http.StatusOK, `id="session-cost">$0.01 <span`},
		{"/sessions/nope", http.StatusNotFound, ""},
		{"/sessions?after=bm9wZQ", http.StatusBadRequest, "out of date"},
		{"/problems", http.StatusOK, "No problems"},
		{"/suites", http.StatusOK, "No suite has run yet"},
		{"/suites/nope", http.StatusNotFound, "No suite nope is indexed"},
		{"/api/v1/suites/nope", http.StatusNotFound, `no suite nope is indexed`},
		{"/scenarios/rename-config-key", http.StatusOK, "Scenario rename-config-key"},
		{"/scenarios/nope", http.StatusNotFound, "no indexed runs"},
		{"/api/v1/runs", http.StatusOK, `"run_id":"20261201-152233-q9w8er"`},
		{"/api/v1/runs?after=x", http.StatusBadRequest, `"error"`},
		{"/api/v1/runs/20261201-101544-m2x7pb", http.StatusOK, `"first_failure":"scope"`},
		{"/api/v1/runs/nope", http.StatusNotFound, `{"error":"run nope is not indexed"}`},
		{"/static/style.css", http.StatusOK, "--accent"},
		{"/static/vendor/htmx-2.0.11.min.js", http.StatusOK, "htmx"},
		{"/static/../go.mod", http.StatusNotFound, ""},
		{"/nope", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			rec := get(t, s, tc.target)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d; body:\n%.400s", rec.Code, tc.status, rec.Body.String())
			}
			if !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("body does not contain %q:\n%.600s", tc.want, rec.Body.String())
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	s, _ := newServer(t, false)
	for _, target := range []string{"/runs", "/api/v1/runs", "/nope", "/static/style.css"} {
		rec := get(t, s, target)
		h := rec.Header()
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP = %q", target, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
			t.Errorf("%s: headers = %v", target, h)
		}
	}
}

func TestEmptyIndexShowsHowToStart(t *testing.T) {
	s, _ := newServer(t, false)
	body := get(t, s, "/runs").Body.String()
	if !strings.Contains(body, "No runs yet") || !strings.Contains(body, "proctor index") {
		t.Fatalf("empty state missing:\n%s", body)
	}
}

func TestHTMXRequestGetsOnlyTheResults(t *testing.T) {
	s, _ := newServer(t, true)
	rec := get(t, s, "/runs?kind=scenario", "HX-Request", "true")
	body := rec.Body.String()
	if strings.Contains(body, "<html") || !strings.HasPrefix(strings.TrimSpace(body), `<section id="runs-results"`) {
		t.Fatalf("HTMX response is not the results fragment:\n%.300s", body)
	}
	if strings.Count(body, "<tr data-run=") != 1 {
		t.Fatalf("want one scenario run in:\n%s", body)
	}
}

func TestBundleTextIsEscaped(t *testing.T) {
	s, root := newServer(t, true)
	dir := filepath.Join(root, "runs", "20261201-113020-z8c1rd")
	f, _ := os.OpenFile(filepath.Join(dir, "transcript.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n## assistant\n\n<script>alert(1)</script>\n")
	f.Close()
	os.WriteFile(filepath.Join(dir, "diff.patch"), []byte("diff --git a/x.html b/x.html\n--- a/x.html\n+++ b/x.html\n@@ -1 +1 @@\n-<b>old</b>\n+<img src=x onerror=alert(1)>\n"), 0o644)
	body := get(t, s, "/runs/20261201-113020-z8c1rd").Body.String()
	for _, raw := range []string{"<script>alert(1)</script>", "<img src=x", "<b>old</b>"} {
		if strings.Contains(body, raw) {
			t.Errorf("page holds raw %q", raw)
		}
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped transcript text is missing")
	}
}

func TestAPIRunDetail(t *testing.T) {
	s, _ := newServer(t, true)
	rec := get(t, s, "/api/v1/runs/20261201-101544-m2x7pb")
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q", ct)
	}
	var out struct {
		RunID   string `json:"run_id"`
		Status  string `json:"status"`
		Receipt struct {
			Schema string `json:"schema"`
		} `json:"receipt"`
		Verdict struct {
			Passed  bool `json:"passed"`
			Results []struct {
				Name   string `json:"name"`
				Broken bool   `json:"broken"`
			} `json:"results"`
		} `json:"verdict"`
	}
	if err := json.NewDecoder(rec.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.RunID != "20261201-101544-m2x7pb" || out.Status != "failed" || out.Receipt.Schema != "proctor.receipt.v1" || out.Verdict.Passed || len(out.Verdict.Results) != 4 || !out.Verdict.Results[2].Broken {
		t.Fatalf("detail = %+v", out)
	}
}

func TestAPIListPaginates(t *testing.T) {
	s, _ := newServer(t, true)
	var ids []string
	next := ""
	for range 10 {
		rec := get(t, s, "/api/v1/runs?limit=4&after="+next)
		var out struct {
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
			Next string `json:"next"`
		}
		body, _ := io.ReadAll(rec.Body)
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for _, r := range out.Runs {
			ids = append(ids, r.RunID)
		}
		if out.Next == "" {
			break
		}
		next = out.Next
	}
	if len(ids) != 6 {
		t.Fatalf("paged through %v", ids)
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:7070": true, "localhost:7070": true, "[::1]:7070": true, "127.1.2.3:80": true,
		"0.0.0.0:7070": false, ":7070": false, "192.168.1.5:7070": false, "[::]:7070": false, "example.com:80": false, "7070": false,
	} {
		loop, err := server.IsLoopback(addr)
		if err == nil && !loop {
			err = errors.New("not loopback")
		}
		if (err == nil) != ok {
			t.Errorf("IsLoopback(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestHostileBundleContent(t *testing.T) {
	s, root, st := newServerStore(t, false)
	dir := filepath.Join(root, "runs", "20261202-000000-hostile")
	os.MkdirAll(dir, 0o755)
	src, _ := os.ReadFile("../../testdata/bundles/runs/20261201-113020-z8c1rd/run.json")
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(strings.ReplaceAll(string(src), "20261201-113020-z8c1rd", "20261202-000000-hostile")), 0o644)
	hostile := "## user\n\n\"><img src=x onerror=alert(1)> <script>alert(2)</script>\n\x1b[31mred\x1b[0m bytes: \xff\xfe\n\n## tool run_command (c1)\n\n    " + strings.Repeat("A", 10<<20) + "\n"
	os.WriteFile(filepath.Join(dir, "transcript.md"), []byte(hostile), 0o644)
	os.WriteFile(filepath.Join(dir, "diff.patch"), []byte("diff --git a/<b>x</b>.go b/<b>x</b>.go\n--- a/<b>x</b>.go\n+++ b/<b>x</b>.go\n@@ -1 +1 @@\n-<i>old</i>\n+\"><svg onload=alert(3)>\n"), 0o644)
	if _, err := index.New(st).Index(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	rec := get(t, s, "/runs/20261202-000000-hostile")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	for _, raw := range []string{"<img src=x", "<script>alert(2)", "<b>x</b>", "<i>old</i>", "<svg onload", "\x1b[31m"} {
		if strings.Contains(body, raw) {
			t.Errorf("page holds raw %q", raw)
		}
	}
	if !strings.Contains(body, "red bytes: \ufffd") {
		t.Error("colour codes or invalid UTF-8 are not cleaned")
	}
	if len(body) > 1<<20 {
		t.Errorf("the page is %d bytes; a 10 MB line must be cut", len(body))
	}
	if !strings.Contains(body, "Open the whole transcript") {
		t.Error("no link to the whole transcript")
	}
	file := get(t, s, "/runs/20261202-000000-hostile/files/transcript.md")
	if ct := file.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" || file.Header().Get("X-Content-Type-Options") != "nosniff" || file.Body.Len() < 10<<20 {
		t.Fatalf("file: %s, %d bytes", ct, file.Body.Len())
	}
}

func TestRunFiltersByDateAndSort(t *testing.T) {
	s, _ := newServer(t, true)
	tests := []struct {
		target string
		status int
		runs   int
		first  string
	}{
		{"/api/v1/runs?from=2026-12-01&to=2026-12-01", 200, 6, "20261201-152233-q9w8er"},
		{"/api/v1/runs?from=2026-12-01&to=2026-12-01&sort=oldest", 200, 6, "20261201-093012-k3f9qa"},
		{"/api/v1/runs?from=2026-12-02", 200, 0, ""},
		{"/api/v1/runs?to=2026-11-30", 200, 0, ""},
		{"/api/v1/runs?from=yesterday", 400, 0, ""},
		{"/api/v1/runs?sort=random", 400, 0, ""},
	}
	for _, tc := range tests {
		rec := get(t, s, tc.target)
		if rec.Code != tc.status {
			t.Fatalf("%s: %d", tc.target, rec.Code)
		}
		if tc.status != 200 {
			continue
		}
		var out struct {
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
		}
		json.NewDecoder(rec.Body).Decode(&out)
		if len(out.Runs) != tc.runs || (tc.runs > 0 && out.Runs[0].RunID != tc.first) {
			t.Fatalf("%s: %+v", tc.target, out.Runs)
		}
	}
	if body := get(t, s, "/runs?from=2026-12-01&sort=oldest").Body.String(); !strings.Contains(body, `value="2026-12-01"`) || !strings.Contains(body, `<option value="oldest" selected>`) {
		t.Fatal("the form does not keep the date and sort")
	}
}

func TestFindInARun(t *testing.T) {
	s, _ := newServer(t, true)
	body := get(t, s, "/runs/20261201-093012-k3f9qa?find=math.round").Body.String()
	if !strings.Contains(body, "2 messages match") || strings.Count(body, `class="msg role-`) != 2 {
		t.Fatalf("find: %d sections shown", strings.Count(body, `class="msg role-`))
	}
	if body := get(t, s, "/runs/20261201-093012-k3f9qa").Body.String(); strings.Count(body, `class="msg role-`) != 14 {
		t.Fatalf("without find: %d sections", strings.Count(body, `class="msg role-`))
	}
}

func TestRunsListRefreshesWhileARunWorks(t *testing.T) {
	s, _ := newServer(t, true)
	if body := get(t, s, "/runs").Body.String(); strings.Contains(body, `hx-trigger="every 2s"`) {
		t.Fatal("a list with no working run refreshes itself")
	}
}

func TestDiffHighlightedAndSideBySide(t *testing.T) {
	s, _ := newServer(t, true)
	unified := get(t, s, "/runs/20261201-093012-k3f9qa").Body.String()
	if !strings.Contains(unified, `<span class="hl-k">return</span>`) || strings.Contains(unified, `class="diff split"`) {
		t.Fatal("the unified diff is not highlighted")
	}
	split := get(t, s, "/runs/20261201-093012-k3f9qa?view=split").Body.String()
	if !strings.Contains(split, `class="diff split"`) || !strings.Contains(split, `id="view-unified"`) {
		t.Fatal("no side-by-side view")
	}
}

// "Files of the bundle" once ran its names together and linked files that
// do not exist (verdict.json of every task run, diff.patch of runs without
// a diff).
func TestRunPageLinksOnlyTheBundlesFiles(t *testing.T) {
	s, _ := newServer(t, true)
	tests := []struct {
		run     string
		present []string
		absent  []string
	}{
		{"20261201-101544-m2x7pb", []string{"run.json", "events.jsonl", "diff.patch", "verdict.json"}, nil},
		{"20261201-152233-q9w8er", []string{"run.json", "transcript.md"}, []string{"diff.patch", "verdict.json"}},
	}
	for _, tc := range tests {
		page := get(t, s, "/runs/"+tc.run).Body.String()
		list := page[strings.Index(page, `id="bundle-files"`):]
		list = list[:strings.Index(list, "</ul>")]
		for _, f := range tc.present {
			if !strings.Contains(list, `<li><a href="/runs/`+tc.run+`/files/`+f+`">`+f+`</a></li>`) {
				t.Errorf("%s: %s is not listed as its own item", tc.run, f)
			}
		}
		for _, f := range tc.absent {
			if strings.Contains(list, "/files/"+f) {
				t.Errorf("%s: links %s, which it does not have", tc.run, f)
			}
		}
	}
}

// The runs list's filter choices are read from the index at most once a
// second: a run indexed since shows in them after that.
func TestRunFacetsFollowTheIndex(t *testing.T) {
	s, root, st := newServerStore(t, true)
	if page := get(t, s, "/runs").Body.String(); strings.Contains(page, "brand-new-model") {
		t.Fatal("an unknown model is offered")
	}
	id := "20261203-120000-facet1"
	os.CopyFS(filepath.Join(root, "runs", id), os.DirFS(filepath.Join(root, "runs", "20261201-093012-k3f9qa")))
	rc := filepath.Join(root, "runs", id, "run.json")
	data, _ := os.ReadFile(rc)
	data = []byte(strings.ReplaceAll(strings.ReplaceAll(string(data), "20261201-093012-k3f9qa", id), `"name": "gpt-4.1-mini"`, `"name": "brand-new-model"`))
	os.WriteFile(rc, data, 0o644)
	if _, err := index.New(st).Index(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 3*time.Second, "the new model showing in the filter", func() bool {
		return strings.Contains(get(t, s, "/runs").Body.String(), `<option value="brand-new-model"`)
	})
}
