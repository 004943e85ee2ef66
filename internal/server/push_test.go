package server_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/index"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
)

// pushRun writes a small valid run bundle in dir/id.
func pushRun(t *testing.T, dir, id string) string {
	t.Helper()
	run := filepath.Join(dir, id)
	if err := os.MkdirAll(filepath.Join(run, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 48<<10) // incompressible: gzip keeps its size on the wire
	rand.Read(noise)
	os.WriteFile(filepath.Join(run, "workspace", "noise.bin"), noise, 0o644)
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	end := start.Add(time.Second)
	r := &bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
		Task: "t", Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: "m"}, StartedAt: start, EndedAt: &end}
	if err := bundle.WriteReceipt(run, r); err != nil {
		t.Fatal(err)
	}
	return run
}

// token makes an API token of scope for user.
func token(t *testing.T, st *store.Store, user, name, scope string) string {
	t.Helper()
	secret, _ := auth.NewSecret(auth.TokenPrefix)
	if err := st.AddAPIToken(context.Background(), user, name, auth.HashSecret(secret), scope); err != nil {
		t.Fatal(err)
	}
	return secret
}

// A CI job pushes a pack, a run folder and a data folder to the host with
// a push-only token: each is stored and indexed once, a second push sends
// nothing, a push cut off mid-way goes on where it stopped, and the token
// can do nothing else.
func TestPushToTheHost(t *testing.T) {
	dataDir := t.TempDir()
	a := newAuthServer(t, server.Config{DataDir: dataDir})
	var cut atomic.Int32 // PUTs to cut off after some bytes
	var puts, gets atomic.Int32
	h := withSecret(a.s)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		if r.Method == http.MethodPut {
			puts.Add(1)
			if cut.Add(-1) >= 0 { // the connection drops after 2 KiB of the body
				r.Body = io.NopCloser(io.MultiReader(io.LimitReader(r.Body, 2048), errReader{}))
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	pushTok := token(t, a.st, "vic", "ci", store.TokenPush)
	viewerTok := token(t, a.st, "vic", "reading", "")

	src := t.TempDir()
	w, err := bundle.CreatePack(filepath.Join(src, "suite-1.tar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"run-p1", "run-p2"} {
		if err := w.Add(pushRun(t, filepath.Join(src, "scratch"), id), id); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	folder := pushRun(t, src, "run-folder")
	data := t.TempDir()
	pushRun(t, filepath.Join(data, "runs"), "run-data")
	os.MkdirAll(filepath.Join(data, "runs", ".unpacked", "x"), 0o755)

	p := &push.Pusher{URL: ts.URL, Token: pushTok, Chunk: 16 << 10, Backoff: time.Millisecond}
	cut.Store(1)
	results, err := p.Push(context.Background(), w.Path(), folder, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d results: %+v", len(results), results)
	}
	for _, r := range results {
		if !r.Pushed() || r.Already || len(r.Status.Problems) > 0 {
			t.Fatalf("%s: %+v", r.Path, r)
		}
	}
	// The cut PUT kept its first bytes; the pusher asked what the host had
	// (one GET more than the three paths') and went on from there.
	if results[0].Status.Runs != 2 || puts.Load() < 8 || gets.Load() != 4 {
		t.Fatalf("the pack: %+v after %d PUTs and %d GETs", results[0].Status, puts.Load(), gets.Load())
	}
	if parts, _ := filepath.Glob(filepath.Join(dataDir, "incoming", "*.part")); len(parts) != 0 {
		t.Fatalf("parts left: %v", parts)
	}
	for _, id := range []string{"run-p1", "run-p2", "run-folder", "run-data"} {
		if _, err := a.st.GetRun(context.Background(), id); err != nil {
			t.Fatalf("run %s is not on the host: %v", id, err)
		}
	}

	// Again: each is there already, nothing is sent.
	before := puts.Load()
	results, err = p.Push(context.Background(), w.Path(), folder, data)
	if err != nil || len(results) != 3 || !results[0].Already || !results[1].Already || !results[2].Already || puts.Load() != before {
		t.Fatalf("pushed again: %+v %v, %d PUTs more", results, err, puts.Load()-before)
	}

	// The push token pushes and nothing else; a viewer's plain token does
	// not push.
	if rec := a.do("GET", "/api/v1/runs", reqOpts{bearer: pushTok, json: true}); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "may only push") {
		t.Fatalf("the push token reads the runs: %d %s", rec.Code, rec.Body)
	}
	viewer := &push.Pusher{URL: ts.URL, Token: viewerTok, Backoff: time.Millisecond}
	results, err = viewer.Push(context.Background(), pushRun(t, t.TempDir(), "run-viewer"))
	if err != nil || results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "403") {
		t.Fatalf("a viewer pushed: %+v %v", results, err)
	}
	nobody := &push.Pusher{URL: ts.URL, Backoff: time.Millisecond}
	results, _ = nobody.Push(context.Background(), folder)
	if results[0].Err == nil || !strings.Contains(results[0].Err.Error(), "401") {
		t.Fatalf("pushed without a token: %+v", results)
	}
	if _, err := p.Push(context.Background(), filepath.Join(src, "nope")); err == nil {
		t.Fatal("a missing path was pushed")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

// A reviewer makes a read-only link to a run: it opens without an account
// (the run as one self-contained page, every opening audited), and stops
// opening when revoked or expired; a push-only or viewer cannot make one.
func TestShareLinks(t *testing.T) {
	a := newAuthServer(t, server.Config{})
	const run = "20261201-093012-k3f9qa"
	root := t.TempDir()
	os.CopyFS(root, os.DirFS("../../testdata/bundles"))
	if _, err := index.New(a.st).Index(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	makeLink := func(expires string) (int, string) {
		rec := a.do("POST", "/runs/"+run+"/share", reqOpts{session: a.session("rev"), csrf: testCSRF, body: "expires=" + expires})
		return rec.Code, regexp.MustCompile(`/share/psl_[A-Za-z0-9_-]+`).FindString(rec.Body.String())
	}
	code, link := makeLink("24h")
	if code != http.StatusCreated || link == "" {
		t.Fatalf("make a link: %d %q", code, link)
	}
	open := func(path string) *httptest.ResponseRecorder { return a.do("GET", path, reqOpts{}) }
	rec := open(link)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "math.Round") || rec.Header().Get("Referrer-Policy") != "no-referrer" ||
		strings.Contains(rec.Body.String(), "<script") {
		t.Fatalf("open the link without an account: %d %v", rec.Code, rec.Header())
	}
	// Not a key to anything else.
	if rec := open("/runs/" + run); rec.Code != http.StatusSeeOther {
		t.Fatalf("the run page without an account: %d", rec.Code)
	}
	for _, bad := range []string{"/share/psl_forged", "/share/ptk_x", "/share/" + strings.Repeat("a", 200)} {
		if rec := open(bad); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d", bad, rec.Code)
		}
	}
	if c, _ := makeLink("forever"); c != http.StatusUnprocessableEntity {
		t.Errorf("a link forever: %d", c)
	}
	if rec := a.do("POST", "/runs/"+run+"/share", reqOpts{session: a.session("vic"), csrf: testCSRF, body: "expires=1h"}); rec.Code != http.StatusForbidden {
		t.Errorf("a viewer made a link: %d", rec.Code)
	}

	// Revoked: it stops opening; the list says who revoked it.
	list := a.do("GET", "/shares", reqOpts{session: a.session("rev")}).Body.String()
	if !strings.Contains(list, `data-share="1"`) || !strings.Contains(list, "live") || !strings.Contains(list, `aria-label="Revoke link 1"`) {
		t.Fatalf("the list: %.500s", list)
	}
	if rec := a.do("POST", "/shares/1/revoke", reqOpts{session: a.session("ada"), csrf: testCSRF}); rec.Code != http.StatusSeeOther {
		t.Fatalf("revoke: %d", rec.Code)
	}
	if rec := open(link); rec.Code != http.StatusNotFound {
		t.Fatalf("a revoked link opens: %d", rec.Code)
	}
	if list := a.do("GET", "/shares", reqOpts{session: a.session("rev")}).Body.String(); !strings.Contains(list, "revoked by ada") {
		t.Fatalf("the list after revoking: %.500s", list)
	}

	// Expired: an hour's link does not open after an hour.
	_, hour := makeLink("1h")
	if rec := open(hour); rec.Code != http.StatusOK {
		t.Fatalf("an hour's link: %d", rec.Code)
	}
	a.now = a.now.Add(time.Hour)
	if rec := open(hour); rec.Code != http.StatusNotFound {
		t.Fatalf("an hour's link after an hour: %d", rec.Code)
	}

	// The audit log says who made each link, and each opening.
	entries, _, err := a.st.ListAudit(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, e := range entries {
		said = append(said, e.Actor+" "+e.Action)
	}
	for _, want := range []string{"rev share", "link #1 of rev share-open", "ada share-revoke", "link #2 of rev share-open"} {
		if !slices.Contains(said, want) {
			t.Errorf("the audit log lacks %q: %v", want, said)
		}
	}
}
