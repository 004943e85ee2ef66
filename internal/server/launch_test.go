package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/live"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// liveServer is a server that can launch runs, over a real data folder.
func liveServer(t *testing.T) (*httptest.Server, string, *store.Store) {
	t.Helper()
	return liveServerWith(t, 2)
}

// liveServerWith is liveServer with this many workers.
func liveServerWith(t *testing.T, workers int) (*httptest.Server, string, *store.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	data := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	news := live.New()
	r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: index.Into(st), OnEvent: func(id string, _ bundle.Event) { news.Publish(id) }}
	q := jobs.New(r, workers)
	context.AfterFunc(ctx, q.Close)
	board := approval.NewBoard(time.Minute, news.Publish)
	roots := t.TempDir()
	demo.WriteFixture(filepath.Join(roots, "invoice"))
	os.Symlink(t.TempDir(), filepath.Join(roots, "escape"))
	demoYAML, _ := os.ReadFile("../demo/demo.yaml")
	os.WriteFile(filepath.Join(roots, "demo-script.yaml"), demoYAML, 0o644)
	sc, _ := demo.Script()
	ep, err := script.Start(sc, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	profiles := func() (*model.Profiles, error) {
		return model.ParseProfiles("models.yaml", []byte("profiles:\n  - name: local\n    base_url: "+ep.URL+"\n    model: proctor-demo\n  - name: keyed\n    base_url: https://example.invalid/v1\n    model: m\n    api_key_env: PROCTOR_TEST_MISSING_KEY\n"))
	}
	srv := httptest.NewServer(withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Reviewer: "tester", Live: news, Launcher: &launch.Launcher{Runner: r, Queue: q, Board: board,
		SourceRoots: []string{roots}, Profiles: profiles, Getenv: func(string) string { return "" }, ScenarioRoots: []string{"../../examples/scenarios"}}})))
	t.Cleanup(func() {
		srv.Close()
		cancel()
		q.Wait(context.Background())
		st.Close()
	})
	return srv, data, st
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, and knows the CSRF token of its cookie.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string // the CSRF token of the last page that had one
}

func newBrowser(t *testing.T, base string) *browser {
	jar := newJar()
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if m := csrfInPage.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1]
	}
	return resp, string(body)
}

var csrfInPage = regexp.MustCompile(`X-CSRF-Token&#34;: &#34;([0-9a-f]{64})`)

// token is the CSRF token the pages give this browser, as a page's forms
// and HTMX send it.
func (b *browser) token() string {
	if b.csrf == "" {
		b.get("/runs")
	}
	return b.csrf
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestDemoRunReviewAndEvents(t *testing.T) {
	srv, data, st := liveServer(t)
	b := newBrowser(t, srv.URL)
	_, page := b.get("/runs")
	if !strings.Contains(page, `id="run-demo"`) {
		t.Fatal("no demo button")
	}
	// Without the CSRF token the POST is refused.
	if resp, body := b.post("/demo", url.Values{}); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Fatalf("demo without token: %d", resp.StatusCode)
	}
	resp, _ := b.post("/demo", url.Values{"csrf": {b.token()}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("demo: %d", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	id := strings.TrimPrefix(loc, "/runs/")
	approveCommand(t, b, loc)

	// The event stream delivers every event, then done.
	req0, _ := http.NewRequest("GET", srv.URL+"/runs/"+id+"/events?after=0", nil)
	text := readStream(t, b.c, req0)
	if !strings.Contains(text, "event: ev") || !strings.HasSuffix(strings.TrimSpace(text), "data: done") || strings.Count(text, "tool.call") != 6 {
		t.Fatalf("stream:\n%s", text)
	}
	// Resuming after an event id sends only what came after it.
	req, _ := http.NewRequest("GET", srv.URL+"/runs/"+id+"/events", nil)
	req.Header.Set("Last-Event-ID", "3")
	rest := readStream(t, b.c, req)
	if strings.Contains(rest, "id: 3\n") || !strings.Contains(rest, "id: 4\n") {
		t.Fatalf("resume:\n%.500s", rest)
	}

	_, page = b.get(loc)
	if !strings.Contains(page, `id="approve"`) {
		t.Fatalf("no approve button on the finished demo run:\n%.2000s", page)
	}
	// A decision without a name is refused, beside the form.
	if resp, body := b.post(loc+"/review", url.Values{"csrf": {b.token()}, "decision": {"approve"}, "reviewer": {" "}}); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Nothing was done: give your name (at most 80 characters)") {
		t.Fatalf("nameless review: %d", resp.StatusCode)
	}
	// Approve: the diff lands in the demo's own copy, inside the data folder.
	resp, _ = b.post(loc+"/review", url.Values{"csrf": {b.token()}, "decision": {"approve"}, "reviewer": {"ana"}, "reason": {"good"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	money, _ := os.ReadFile(filepath.Join(data, "demo", id, "invoice", "money.go"))
	if !strings.Contains(string(money), "math.Round") {
		t.Fatal("the demo copy was not patched")
	}
	rb, _ := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	if rb.Receipt.Review == nil || rb.Receipt.Review.ReviewedBy != "ana" || !rb.Receipt.Review.Applied {
		t.Fatalf("review %+v", rb.Receipt.Review)
	}
	_, page = b.get(loc)
	if !strings.Contains(page, "Approved") || !strings.Contains(page, "ana") || strings.Contains(page, `id="approve"`) {
		t.Fatal("the page does not show the decision")
	}
	// One identity rule: the audit log names whom the decision names
	// (the audit once said local:<the --reviewer default>).
	entries, _, _ := st.ListAudit(context.Background(), 0, 20)
	actors := map[string]string{}
	for _, e := range entries {
		actors[e.Action] = e.Actor
	}
	if actors["approve"] != "local:ana" || actors["approval-approve"] != "local:ana" {
		t.Fatalf("audit actors %v, want local:ana for the command approval and the diff approval", actors)
	}
	// A second decision (another tab) changes nothing and says who decided.
	resp, body2 := b.post(loc+"/review", url.Values{"csrf": {b.token()}, "decision": {"reject"}, "reviewer": {"bo"}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body2, "already reviewed by ana") {
		t.Fatalf("second review: %d", resp.StatusCode)
	}
}

// approveCommand waits for the demo's command to ask for approval, checks
// that the run shows it, and approves it.
func approveCommand(t *testing.T, b *browser, loc string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, page := b.get(loc)
		if strings.Contains(page, "The agent waits for your approval") {
			if !strings.Contains(page, "go test ./...") || !strings.Contains(page, "awaiting approval") {
				t.Fatalf("approval box without the command or the status:\n%.3000s", page)
			}
			call := regexp.MustCompile(`data-request="([0-9]+)"`).FindStringSubmatch(page)[1]
			resp, _ := b.post(loc+"/approvals/"+call, url.Values{"csrf": {b.token()}, "decision": {"approve"}, "reviewer": {"ana"}})
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("approve the command: %d", resp.StatusCode)
			}
			resp, _ = b.post(loc+"/approvals/"+call, url.Values{"csrf": {b.token()}, "decision": {"deny"}})
			if resp.StatusCode != http.StatusConflict {
				t.Fatalf("a second answer: %d, want 409", resp.StatusCode)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the demo never asked for approval")
}

// A run page's stream is woken by the run's news, not by reading the file
// again and again: the decision on a command reaches an open stream while
// the run still works on (its go test), long before the run's end would
// wake the stream.
func TestTheStreamWakesOnTheRunsNews(t *testing.T) {
	srv, data, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	b.get("/runs")
	loc, id := startDemo(t, b)
	var call string
	testutil.Eventually(t, 20*time.Second, "the approval request", func() bool {
		_, page := b.get(loc)
		if m := regexp.MustCompile(`data-request="([0-9]+)"`).FindStringSubmatch(page); m != nil {
			call = m[1]
		}
		return call != ""
	})
	events, _, _ := bundle.ReadEvents(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+loc+"/events?after="+strconv.FormatInt(events[len(events)-1].Seq, 10)+"&shown="+call, nil)
	stream, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if resp, _ := b.post(loc+"/approvals/"+call, url.Values{"csrf": {b.token()}, "decision": {"approve"}, "reviewer": {"ana"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(stream.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "approval.decided") {
			break
		}
	}
	if sc.Err() != nil {
		t.Fatalf("the stream ended without the decision: %v", sc.Err())
	}
	rc, _ := bundle.ReadFile(filepath.Join(data, "runs", id), bundle.ReceiptFile, 1<<20)
	if !strings.Contains(string(rc), `"status": "running"`) && !strings.Contains(string(rc), `"status":"running"`) {
		t.Fatalf("the decision came only once the run had ended: %s", rc)
	}
}

func TestPendingRunPageWaits(t *testing.T) {
	srv, _, _ := liveServer(t)
	demoAwaitingReview(t, newBrowser(t, srv.URL))
}

// startDemo launches the demo run as its button does, and returns the path
// of its page and its id.
func startDemo(t *testing.T, b *browser) (loc, id string) {
	t.Helper()
	resp, _ := b.post("/demo", url.Values{"csrf": {b.token()}})
	loc = resp.Header.Get("Location")
	return loc, strings.TrimPrefix(loc, "/runs/")
}

// demoAwaitingReview starts the demo, approves its command, waits (on the
// run page) until it awaits review, and returns its id.
func demoAwaitingReview(t *testing.T, b *browser) string {
	t.Helper()
	_, id := startDemo(t, b)
	approveCommand(t, b, "/runs/"+id)
	testutil.Eventually(t, 20*time.Second, "the demo run waiting for review", func() bool {
		r, page := b.get("/runs/" + id)
		if r.StatusCode != 200 {
			t.Fatalf("run page %d", r.StatusCode)
		}
		return strings.Contains(page, "awaiting review")
	})
	return id
}

// readStream reads a server-sent event stream until its "done" event.
func readStream(t *testing.T, c *http.Client, req *http.Request) string {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "data: done" {
			break
		}
	}
	return b.String()
}

func TestLaunchFormValidatesAndLaunches(t *testing.T) {
	srv, data, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	resp, page := b.get("/launch")
	if resp.StatusCode != 200 || !strings.Contains(page, `<option value="local"`) {
		t.Fatalf("launch form: %d", resp.StatusCode)
	}
	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {b.token()}, "root": {"0"}, "path": {"invoice"}, "task": {"Fix the rounding bug"}, "model": {"local"}, "allow": {"go test"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	bad := []struct {
		name, field, msg string
		kv               []string
	}{
		{"dot dot", "path", `".." is not allowed`, []string{"path", "../etc"}},
		{"absolute", "path", "not an absolute path", []string{"path", "/etc"}},
		{"symlink out", "path", "leads outside the root", []string{"path", "escape"}},
		{"missing folder", "path", "no such folder", []string{"path", "nope"}},
		{"bad root", "root", "choose one of the source roots", []string{"root", "7"}},
		{"no task", "task", "say what the agent should do", []string{"task", "  "}},
		{"unknown model", "model", `model profile "nope" is not in models.yaml`, []string{"model", "nope"}},
		{"missing key", "model", "PROCTOR_TEST_MISSING_KEY is empty", []string{"model", "keyed"}},
		{"bad bound", "max_turns", `"0" is not a positive integer`, []string{"max_turns", "0"}},
		{"bound too large", "max_turns", `is too large; the most is 2147483647`, []string{"max_turns", "99999999999999999999"}},
		{"script outside", "script", `".." is not allowed`, []string{"script", "../model.yaml"}},
		{"script missing", "script", `no file "nope.yaml" under`, []string{"script", "nope.yaml"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			resp, page := b.post("/launch", form(tc.kv...))
			if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="`+tc.field+`-error"`) || !strings.Contains(page, html.EscapeString(tc.msg)) {
				t.Fatalf("%d, field %s, want %q:\n%.200s", resp.StatusCode, tc.field, tc.msg, page)
			}
		})
	}
	resp, _ = b.post("/launch", form())
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("launch: %d", resp.StatusCode)
	}
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	var rb *bundle.Run
	testutil.Eventually(t, 20*time.Second, "the launched run waiting for review", func() bool {
		var err error
		rb, err = bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
		return err == nil && rb.Receipt.Status == bundle.StatusAwaitingReview
	})
	if rb.Receipt.Model.Profile != "local" || !strings.HasSuffix(rb.Receipt.Source.Path, "invoice") {
		t.Fatalf("receipt %+v", rb.Receipt)
	}
}

// oneRunSession makes a session with one run, the way the CLI makes it, and
// returns the runner and the session's id.
func oneRunSession(t *testing.T, data string, st *store.Store) (*run.Runner, string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	sc, _ := script.Parse("s.yaml", []byte("steps:\n  - reply: {content: hello}\n"))
	r := &run.Runner{DataDir: data, Index: index.Into(st)}
	first, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: "say hello", Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults(), Session: "new"})
	if err != nil {
		t.Fatal(err)
	}
	return r, first.Receipt.SessionID
}

// endedRun waits for run id of the data folder to end and returns its
// receipt.
func endedRun(t *testing.T, data, id string) bundle.Receipt {
	t.Helper()
	var rc bundle.Receipt
	testutil.Eventually(t, 20*time.Second, "the end of run "+id, func() bool {
		rb, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
		if err == nil {
			rc = rb.Receipt
		}
		return err == nil && rc.EndedAt != nil
	})
	return rc
}

func TestContinueSessionFromTheBrowser(t *testing.T) {
	srv, data, st := liveServer(t)
	r, sid := oneRunSession(t, data, st)
	b := newBrowser(t, srv.URL)
	_, page := b.get("/sessions/" + sid)
	if !strings.Contains(page, `id="continue-form"`) {
		t.Fatal("no continue form")
	}
	resp, page := b.post("/sessions/"+sid+"/continue", url.Values{"csrf": {b.token()}, "task": {" "}, "model": {"local"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "write the next message") {
		t.Fatalf("empty message: %d", resp.StatusCode)
	}
	if resp, _ := b.post("/sessions/sess-nope/continue", url.Values{"csrf": {b.token()}, "task": {"x"}, "model": {"local"}}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d", resp.StatusCode)
	}
	resp, _ = b.post("/sessions/"+sid+"/continue", url.Values{"csrf": {b.token()}, "task": {"Fix the rounding bug"}, "model": {"local"}, "allow": {"go test"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("continue: %d", resp.StatusCode)
	}
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	if rc := endedRun(t, data, id); rc.SessionID != sid {
		t.Fatalf("the run is not in the session: %+v", rc)
	}
	// The session names the run by the time its receipt says it ended.
	if s, err := r.Records().LoadSession(sid); err != nil || len(s.Runs) != 2 || s.Runs[1] != id {
		t.Fatalf("the session does not name its second run: %+v %v", s, err)
	}
}

// restartable returns a data folder and a func that starts a server on it
// with one worker, as `proctor serve` does, until ctx ends: a test can stop
// it and start another on the same folder.
func restartable(t *testing.T, scenarioRoots ...string) (string, func(ctx context.Context) (*server.Server, *jobs.Queue, *httptest.Server)) {
	t.Helper()
	data, st := dataStore(t)
	return data, func(ctx context.Context) (*server.Server, *jobs.Queue, *httptest.Server) {
		r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: index.Into(st)}
		q := jobs.New(r, 1)
		context.AfterFunc(ctx, q.Close)
		srv := server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Reviewer: "t", Launcher: &launch.Launcher{Runner: r, Queue: q, Board: approval.NewBoard(time.Minute, nil), ScenarioRoots: scenarioRoots}})
		return srv, q, httptest.NewServer(withSecret(srv))
	}
}

func TestQueuedRunsSurviveARestart(t *testing.T) {
	data, start := restartable(t)
	ctx1, stop1 := context.WithCancel(context.Background())
	_, q1, ts1 := start(ctx1)
	b := newBrowser(t, ts1.URL)
	b.get("/runs")
	first, _ := b.post("/demo", url.Values{"csrf": {b.token()}}) // takes the only worker, waits for approval
	second, _ := b.post("/demo", url.Values{"csrf": {b.token()}})
	firstID := strings.TrimPrefix(first.Header.Get("Location"), "/runs/")
	secondID := strings.TrimPrefix(second.Header.Get("Location"), "/runs/")
	if j, _ := q1.Get(secondID); j.State != jobs.Queued {
		t.Fatalf("second run: %+v", j)
	}
	// The server stops: the running run ends interrupted, the queued one
	// has never started.
	ts1.Close()
	stop1()
	q1.Wait(context.Background())
	if _, err := os.Stat(filepath.Join(data, "runs", secondID)); err == nil {
		t.Fatal("the queued run started")
	}
	rb, _ := bundle.ReadRun(filepath.Join(data, "runs", firstID), bundle.DefaultLimits())
	if rb.Receipt.Status != bundle.StatusInterrupted {
		t.Fatalf("first run: %s", rb.Receipt.Status)
	}
	// A new server launches the queued run again, under its id.
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	srv2, q2, ts2 := start(ctx2)
	defer ts2.Close()
	n, err := srv2.ResumeQueued()
	if err != nil || n != 1 {
		t.Fatalf("resumed %d, %v", n, err)
	}
	if j, ok := q2.Get(secondID); !ok || j.State == jobs.Cancelled {
		t.Fatalf("second run after restart: %+v %v", j, ok)
	}
	testutil.Eventually(t, 10*time.Second, "the start of the resumed run", func() bool {
		_, err := os.Stat(filepath.Join(data, "runs", secondID, bundle.ReceiptFile))
		return err == nil
	})
	if _, err := os.Stat(filepath.Join(data, "queue", secondID+".json")); err == nil {
		t.Fatal("the queue record outlived the start")
	}
	stop2()
	q2.Wait(context.Background())
}

func TestLaunchWithAModelScript(t *testing.T) {
	srv, data, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	b.get("/launch")
	resp, _ := b.post("/launch", url.Values{"csrf": {b.token()}, "root": {"0"}, "path": {"invoice"}, "task": {"Fix the rounding bug"},
		"script": {"demo-script.yaml"}, "allow": {"go test"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("launch: %d", resp.StatusCode)
	}
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	if rc := endedRun(t, data, id); rc.Status != bundle.StatusAwaitingReview || rc.Model.Profile != "script:demo-script.yaml" {
		t.Fatalf("receipt %+v", rc)
	}
}

// A review whose audit entry could not be written (the process died, the
// database was locked) leaves its journal; the serve start-up recovery
// writes the entry once and removes the journal.
func TestRecoverReviewsWritesTheMissingAuditEntry(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	src := filepath.Join(t.TempDir(), "invoice")
	demo.WriteFixture(src)
	sc, _ := demo.Script()
	r := &run.Runner{DataDir: data}
	res, err := r.Run(ctx, run.Spec{SourceDir: src, Task: demo.Task, Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: demo.AllowedCommands}})
	if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("demo run: %v", err)
	}
	rvw, _ := r.Records().Review(res.RunID)
	opt := rvw.Options
	opt.Actor, opt.Address = "ana", "192.0.2.9"
	opt.Record = func(context.Context, gate.Decided) error { return errors.New("database is locked") }
	gate.Review(ctx, res.Dir, gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "ana"}, nil
	}), opt)
	st, err := store.Open(ctx, filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r.Index = index.Into(st)
	s := server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Launcher: &launch.Launcher{Runner: r}})
	for range 2 { // a second start finds nothing left to do
		if _, errs := s.RecoverReviews(ctx); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	entries, _, _ := st.ListAudit(ctx, 0, 10)
	if len(entries) != 1 || entries[0].Action != "approve" || entries[0].Actor != "ana" || entries[0].Object != res.RunID || entries[0].Address != "192.0.2.9" {
		t.Fatalf("audit %+v", entries)
	}
	if left, _ := filepath.Glob(filepath.Join(res.Dir, ".review*")); len(left) != 0 {
		t.Fatalf("journal left: %v", left)
	}
	if got, err := st.GetRun(ctx, res.RunID); err != nil || got.Receipt.Review == nil || !got.Receipt.Review.Applied {
		t.Fatalf("the index does not show the review: %v", err)
	}
}

// A session continues with a model script under a source root, not only
// a models.yaml profile.
func TestContinueSessionWithAModelScript(t *testing.T) {
	srv, data, st := liveServer(t)
	_, sid := oneRunSession(t, data, st)
	b := newBrowser(t, srv.URL)
	if _, page := b.get("/sessions/" + sid); !strings.Contains(page, `name="script"`) {
		t.Fatal("the continue form offers no model script")
	}
	resp, page := b.post("/sessions/"+sid+"/continue", url.Values{"csrf": {b.token()}, "task": {"Fix the rounding bug"}, "root": {"0"}, "script": {"nope.yaml"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `no file &#34;nope.yaml&#34; under`) {
		t.Fatalf("a missing script: %d", resp.StatusCode)
	}
	resp, _ = b.post("/sessions/"+sid+"/continue", url.Values{"csrf": {b.token()}, "task": {"Fix the rounding bug"}, "root": {"0"}, "script": {"demo-script.yaml"}, "allow": {"go test"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("continue with a script: %d", resp.StatusCode)
	}
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	if rc := endedRun(t, data, id); rc.SessionID != sid || rc.Model.Name != "proctor-demo" {
		t.Fatalf("run %+v", rc)
	}
}

// A server with no source root cannot read a model script: continuing a
// session with one says so beside the script field.
func TestContinueWithAScriptAndNoSourceRootSaysWhatToPass(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	data, st := dataStore(t)
	r, sid := oneRunSession(t, data, st)
	q := jobs.New(r, 1)
	context.AfterFunc(ctx, q.Close)
	defer q.Wait(context.Background())
	srv := httptest.NewServer(withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Launcher: &launch.Launcher{Runner: r, Queue: q}})))
	defer srv.Close()
	b := newBrowser(t, srv.URL)
	b.get("/sessions/" + sid)
	resp, page := b.post("/sessions/"+sid+"/continue", url.Values{"csrf": {b.token()}, "task": {"next"}, "script": {"demo-script.yaml"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="script-error"`) || !strings.Contains(page, "--source-root") {
		t.Fatalf("%d:\n%.3000s", resp.StatusCode, page)
	}
}

// With no models.yaml the Launch form says where to add a profile, and a
// model script still launches.
func TestLaunchFormWithoutProfilesSaysHowToAddOne(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	data, st := dataStore(t)
	r := &run.Runner{DataDir: data}
	q := jobs.New(r, 1)
	context.AfterFunc(ctx, q.Close)
	defer q.Wait(context.Background())
	missing := filepath.Join(t.TempDir(), "models.yaml")
	srv := httptest.NewServer(withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Launcher: &launch.Launcher{Runner: r, Queue: q,
		SourceRoots: []string{t.TempDir()}, Profiles: func() (*model.Profiles, error) { return model.LoadProfiles(missing) }}})))
	defer srv.Close()
	_, page := newBrowser(t, srv.URL).get("/launch")
	if !strings.Contains(page, `id="no-profiles"`) || !strings.Contains(page, missing) || !strings.Contains(page, "docs/models.md") || !strings.Contains(page, `name="script"`) {
		t.Fatalf("the form does not say how to add a profile:\n%.3000s", page)
	}
}

// Queued runs were missing from /runs until they started, though the list
// has a "queued" filter.
func TestQueuedRunsAreListed(t *testing.T) {
	srv, _, _ := liveServerWith(t, 1)
	b := newBrowser(t, srv.URL)
	b.get("/runs")
	// The first demo takes the only worker (it waits for its approval);
	// the second waits in the queue.
	b.post("/demo", url.Values{"csrf": {b.token()}})
	resp, _ := b.post("/demo", url.Values{"csrf": {b.token()}})
	queued := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	for path, want := range map[string]bool{"/runs": true, "/runs?status=queued": true, "/runs?status=passed": false, "/api/v1/runs": true} {
		_, page := b.get(path)
		if got := strings.Contains(page, queued); got != want {
			t.Errorf("%s lists the queued run: %v, want %v", path, got, want)
		}
	}
	if _, page := b.get("/runs"); !strings.Contains(page, "place 1 in the queue") {
		t.Error("the list does not say the run waits in the queue")
	}
}

// A denial in the dashboard once read "denyd in the dashboard".
func TestDenialIsWordedInTheTranscript(t *testing.T) {
	srv, data, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	resp, _ := b.post("/demo", url.Values{"csrf": {b.token()}})
	loc := resp.Header.Get("Location")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, page := b.get(loc)
		if m := regexp.MustCompile(`data-request="([0-9]+)"`).FindStringSubmatch(page); m != nil {
			b.post(loc+"/approvals/"+m[1], url.Values{"csrf": {b.token()}, "decision": {"deny"}, "reviewer": {"ana"}})
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		tr, err := os.ReadFile(filepath.Join(data, "runs", strings.TrimPrefix(loc, "/runs/"), "transcript.md"))
		if strings.Contains(string(tr), "denyd") {
			t.Fatalf("transcript:\n%s", tr)
		}
		if err == nil && strings.Contains(string(tr), "denied in the dashboard") { // written as the conversation grows
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the transcript never said the call was denied in the dashboard")
}

// A run whose edit failed ended green "passed" because nothing changed. It
// says "no changes" and names the tool calls that failed.
func TestARunThatChangedNothingSaysSoAndShowsItsErrors(t *testing.T) {
	ctx := context.Background()
	data, st := dataStore(t)
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	sc, _ := script.Parse("s.yaml", []byte("steps:\n  - reply:\n      tool_calls: [{name: edit_file, arguments: {path: a.txt, search: missing, replace: x}}]\n  - reply: {content: done}\n"))
	r := &run.Runner{DataDir: data, Index: index.Into(st)}
	res, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "edit", Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults()})
	if err != nil || res.Receipt.Status != bundle.StatusPassed {
		t.Fatalf("%v %+v", err, res)
	}
	srv := httptest.NewServer(withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: data})))
	defer srv.Close()
	_, page := newBrowser(t, srv.URL).get("/runs/" + res.RunID)
	if !strings.Contains(page, `id="no-changes"`) || !strings.Contains(page, `id="tool-errors"`) || !strings.Contains(page, "edit_file (call_1_1)") {
		t.Fatalf("the page does not say that nothing changed and what failed:\n%.3000s", page)
	}
}

// A suite launched from the dashboard ran as goroutines of its own: past
// --workers, unstoppable, forgotten by a restart. Its runs are jobs of the
// launch queue now.
func TestSuiteRunsAreJobsOfTheQueue(t *testing.T) {
	data, start := restartable(t, "../../examples/scenarios")
	ctx1, stop1 := context.WithCancel(context.Background())
	_, q1, ts1 := start(ctx1)
	b := newBrowser(t, ts1.URL)
	b.get("/suites")
	b.post("/demo", url.Values{"csrf": {b.token()}}) // takes the only worker, waits for approval
	resp, _ := b.post("/suites", url.Values{"csrf": {b.token()}, "scenarios": {"rename-config-key"}, "repeat": {"3"}})
	suiteID := strings.TrimPrefix(resp.Header.Get("Location"), "/suites/")
	var queued []jobs.Job
	for _, j := range q1.Queued() {
		if j.Suite == suiteID {
			queued = append(queued, j)
		}
	}
	if resp.StatusCode != http.StatusSeeOther || len(queued) != 3 {
		t.Fatalf("launch: %d, %d runs of %q queued", resp.StatusCode, len(queued), suiteID)
	}
	if _, page := b.get("/suites/" + suiteID); !strings.Contains(page, "3 runs wait in the launch queue") {
		t.Fatalf("the suite page does not say its runs wait:\n%.2000s", page)
	}
	// Each waiting run is listed by its scenario (none of them is in the
	// matrix yet, which holds indexed runs).
	if _, page := b.get("/suites/" + suiteID); strings.Count(page, `<th scope="row" class="mono">rename-config-key</th>`) != 3 ||
		!strings.Contains(page, `<td class="num">#3</td>`) || !strings.Contains(page, `id="queued-table"`) {
		t.Fatalf("the suite page does not list the waiting runs' scenarios:\n%s", page[strings.Index(page, "<main"):])
	}
	// One is stopped; the server stops with the other two still queued.
	if err := q1.Stop(queued[0].RunID); err != nil {
		t.Fatal(err)
	}
	ts1.Close()
	stop1()
	q1.Wait(context.Background())
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	srv2, q2, ts2 := start(ctx2)
	defer ts2.Close()
	if n, err := srv2.ResumeQueued(); err != nil || n != 2 {
		t.Fatalf("resumed %d, %v", n, err)
	}
	for _, j := range queued[1:] {
		got, ok := q2.Get(j.RunID)
		if !ok || got.Suite != suiteID {
			t.Fatalf("run %s after the restart: %+v %v", j.RunID, got, ok)
		}
		if rc := endedRun(t, data, j.RunID); rc.Scenario == nil || rc.Scenario.Suite != suiteID || rc.Status != bundle.StatusPassed {
			t.Fatalf("run %s: %+v", j.RunID, rc)
		}
	}
	if _, ok := q2.Get(queued[0].RunID); ok {
		t.Fatal("the stopped run was launched again")
	}
	stop2()
	q2.Wait(context.Background())
}

// dataStore is a new data folder with its index open until the test ends.
func dataStore(t *testing.T) (string, *store.Store) {
	t.Helper()
	data := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return data, st
}

// The run page offers a review part by part: each hunk has its accept and
// reject in the review form; "Apply accepted" applies only those, and the
// page says what was applied and what was edited.
func TestApplyAcceptedFromTheRunPage(t *testing.T) {
	srv, data, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	b.get("/runs")
	loc, id := startDemo(t, b)
	approveCommand(t, b, loc)
	var page string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !strings.Contains(page, `id="apply-accepted"`); time.Sleep(50 * time.Millisecond) {
		_, page = b.get(loc)
	}
	diff, _ := os.ReadFile(filepath.Join(data, "runs", id, bundle.DiffFile))
	files, _ := patch.Parse(string(diff))
	if len(files) != 2 || files[0].NewPath != "money.go" || files[1].NewPath != "money_test.go" || len(files[0].Hunks) < 1 {
		t.Fatalf("the demo's diff is not what this test needs: %+v", files)
	}
	for f := range files {
		for i := range files[f].Hunks {
			if !strings.Contains(page, fmt.Sprintf(`name="part.%d.%d" value="accept" form="review-form"`, f, i)) || !strings.Contains(page, fmt.Sprintf(`name="edit.%d.%d" form="review-form"`, f, i)) {
				t.Fatalf("hunk %d of file %d has no controls:\n%.3000s", i, f, page)
			}
		}
	}
	// Bad form values are refused; accepting nothing applies nothing.
	for _, bad := range []url.Values{{"part.0.x": {"accept"}}, {"part.0.0": {"maybe"}}, {"part.-3.0": {"accept"}}} {
		bad.Set("csrf", b.token())
		bad.Set("decision", "partial")
		bad.Set("reviewer", "ana")
		if resp, body := b.post(loc+"/review", bad); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Nothing was applied: part.") {
			t.Errorf("%v: %d, want the page naming the field:\n%.2000s", bad, resp.StatusCode, body)
		}
	}
	if resp, body := b.post(loc+"/review", url.Values{"csrf": {b.token()}, "decision": {"partial"}, "reviewer": {"ana"}, "part.0.0": {"reject"}}); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "no part of the diff was accepted") {
		t.Fatalf("nothing accepted: %d", resp.StatusCode)
	}
	// Accept the last hunk of money.go alone, edited, as a browser sends a
	// textarea (CRLF); reject the new test.
	last := len(files[0].Hunks) - 1
	var side []string
	for _, l := range files[0].Hunks[last].Lines {
		if l.Kind == patch.Context || l.Kind == patch.Added {
			side = append(side, l.Text)
		}
	}
	side = append(side, "// kept by the reviewer")
	form := url.Values{"csrf": {b.token()}, "decision": {"partial"}, "reviewer": {"ana"},
		fmt.Sprintf("part.0.%d", last): {"accept"}, fmt.Sprintf("edit.0.%d", last): {strings.Join(side, "\r\n")}}
	for i := range last {
		form.Set(fmt.Sprintf("part.0.%d", i), "reject")
	}
	form.Set("part.1.0", "reject")
	if resp, body := b.post(loc+"/review", form); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("apply accepted: %d\n%s", resp.StatusCode, regexp.MustCompile(`role="alert">[^<]*`).FindString(body))
	}
	rb, _ := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	rv := rb.Receipt.Review
	if rv == nil || !rv.Applied || len(rv.AppliedParts) != 1 || rv.AppliedParts[0].Hunk != last+1 || len(rv.RejectedParts) != len(files[0].Hunks) || len(rv.Edits) != 1 {
		t.Fatalf("review %+v", rv)
	}
	money, _ := os.ReadFile(filepath.Join(data, "demo", id, "invoice", "money.go"))
	if !strings.Contains(string(money), "// kept by the reviewer") {
		t.Fatalf("the edited hunk was not applied:\n%s", money)
	}
	_, page = b.get(loc)
	if !strings.Contains(page, `id="review-parts"`) || !strings.Contains(page, "as the agent proposed it") || !strings.Contains(page, "// kept by the reviewer") || strings.Contains(page, `id="apply-accepted"`) {
		t.Fatalf("the page does not show the parts:\n%.4000s", page)
	}
}

// A run that waits for an approval when the server stops is interrupted;
// after the restart its page offers Resume, which starts a run from where
// it stopped: the same approval is asked again, and once approved the run
// goes on to its review with the change made before the stop.
func TestResumeARunInterruptedWhileItWaited(t *testing.T) {
	data, st := dataStore(t)
	roots := t.TempDir()
	os.WriteFile(filepath.Join(roots, "after.yaml"), []byte("steps:\n  - expect: {last_role: tool}\n    reply: {content: Tested after the restart.}\n"), 0o644)
	start := func(ctx context.Context) (*jobs.Queue, *httptest.Server) {
		r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: index.Into(st)}
		q := jobs.New(r, 1)
		context.AfterFunc(ctx, q.Close)
		srv := server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Reviewer: "t", Launcher: &launch.Launcher{Runner: r, Queue: q, Board: approval.NewBoard(time.Minute, nil), SourceRoots: []string{roots}}})
		return q, httptest.NewServer(withSecret(srv))
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	q1, ts1 := start(ctx1)
	b := newBrowser(t, ts1.URL)
	b.get("/runs")
	_, id := startDemo(t, b)
	testutil.Eventually(t, 20*time.Second, "the approval request", func() bool {
		_, page := b.get("/runs/" + id)
		return strings.Contains(page, "The agent waits for your approval")
	})
	ts1.Close()
	stop1()
	q1.Wait(context.Background())

	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	q2, ts2 := start(ctx2)
	defer ts2.Close()
	b = newBrowser(t, ts2.URL)
	_, page := b.get("/runs/" + id)
	if !strings.Contains(page, `id="resume"`) {
		t.Fatalf("no Resume on the interrupted run:\n%.3000s", page)
	}
	// The demo's model is a script: the form asks for one.
	if resp, body := b.post("/runs/"+id+"/resume", url.Values{"csrf": {b.token()}}); resp.StatusCode != http.StatusOK || !strings.Contains(body, "give a model script") {
		t.Fatalf("resume without a model: %d", resp.StatusCode)
	}
	resp, _ := b.post("/runs/"+id+"/resume", url.Values{"csrf": {b.token()}, "resume_script": {"after.yaml"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("resume: %d", resp.StatusCode)
	}
	loc := resp.Header.Get("Location")
	approveCommand(t, b, loc)
	rc := endedRun(t, data, strings.TrimPrefix(loc, "/runs/"))
	if rc.Status != bundle.StatusAwaitingReview || rc.Resumes != id || strings.Join(rc.Changed, ",") != "money.go,money_test.go" {
		t.Fatalf("the resumed run: %+v", rc)
	}
	stop2()
	q2.Wait(context.Background())
}
