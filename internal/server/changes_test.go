package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// Comments from the review form reach the agent in the diff's order (file
// 2 before file 11, whatever order the form's fields have), and the API
// takes the same request, refusing a comment that is not on a line of the
// diff with the problem by field.
func TestRequestChangesFromTheFormAndTheAPI(t *testing.T) {
	data, st := dataStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &run.Runner{DataDir: data, Environ: os.Environ(), Index: index.Into(st)}
	q := jobs.New(r, 1)
	context.AfterFunc(ctx, q.Close)
	t.Cleanup(func() { cancel(); q.Wait(context.Background()) })
	src, roots := t.TempDir(), t.TempDir()
	var calls []string
	for i := range 12 {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d.txt", i)), []byte("old\n"), 0o644)
		calls = append(calls, fmt.Sprintf("{name: write_file, arguments: {path: f%02d.txt, content: \"new\\n\"}}", i))
	}
	sc, err := script.Parse("first.yaml", []byte("steps:\n  - reply: {tool_calls: ["+strings.Join(calls, ", ")+"]}\n  - reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Run(ctx, run.Spec{SourceDir: src, Task: "renew every file", Bounds: bounds.Defaults(), Model: run.ModelChoice{Script: sc}})
	if err != nil || first.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("first run: %v %+v", err, first)
	}
	os.WriteFile(filepath.Join(roots, "next.yaml"), []byte("steps:\n  - expect: {last_matches: \"(?s)f02.txt:1: two.*f11.txt:1: eleven\"}\n    reply: {content: done}\n"), 0o644)
	srv := httptest.NewServer(withSecret(server.New(st, server.Config{LocalSecret: testSecret, DataDir: data, Reviewer: "t", Launcher: &launch.Launcher{Runner: r, Queue: q, Board: approval.NewBoard(time.Minute, nil), SourceRoots: []string{roots}}})))
	t.Cleanup(srv.Close)

	b := newBrowser(t, srv.URL)
	resp, _ := b.post("/runs/"+first.RunID+"/review", url.Values{"csrf": {b.token()}, "decision": {"changes"}, "reviewer": {"ana"},
		"summary": {"Two files."}, "comment.11.0": {"eleven"}, "line.11.0": {"1"}, "comment.2.0": {"two"}, "line.2.0": {"1"}, "changes_script": {"next.yaml"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("request changes: %d", resp.StatusCode)
	}
	next := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	if rc := endedRun(t, data, next); rc.Status != bundle.StatusPassed || rc.Addresses != first.RunID {
		t.Fatalf("the next run (its model expects the comments in the diff's order): %+v %+v", rc, rc.Failure)
	}

	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(srv.URL+"/api/v1/runs/"+first.RunID+"/changes", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if code, out := post(`{"reviewer": "ana", "comments": [{"path": "f05.txt", "line": 9, "text": "x"}], "script": "next.yaml"}`); code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(out["fields"]), "f05.txt:9 is not in the run's diff") {
		t.Errorf("a comment off the diff: %d %v", code, out)
	}
	if code, out := post(`{"reviewer": "ana", "comments": "x"}`); code != http.StatusBadRequest {
		t.Errorf("a malformed request: %d %v", code, out)
	}
	code, out := post(`{"reviewer": "ana", "summary": "Again.", "comments": [{"path": "f02.txt", "line": 1, "text": "two"}, {"path": "f11.txt", "line": 1, "text": "eleven"}], "script": "next.yaml"}`)
	if code != http.StatusAccepted {
		t.Fatalf("request changes through the API: %d %v", code, out)
	}
	if rc := endedRun(t, data, out["run_id"].(string)); rc.Status != bundle.StatusPassed {
		t.Fatalf("the API's next run: %+v %+v", rc, rc.Failure)
	}
	// A reply joins a comment's thread, from the asked run's page too; a
	// comment that is not there, or a reply with no text, is refused.
	reply := func(path string, form url.Values) (int, string) {
		form.Set("csrf", b.token())
		resp, body := b.post(path, form)
		return resp.StatusCode, body
	}
	base := "/runs/" + first.RunID + "/requests/0/comments/1/replies"
	if code, _ := reply(base, url.Values{"reviewer": {"ana"}, "reply": {"eleven is fine"}, "from": {next}}); code != http.StatusSeeOther {
		t.Fatalf("reply: %d", code)
	}
	if _, page := b.get("/runs/" + next); !strings.Contains(page, "eleven is fine") {
		t.Error("the asked run's page does not show the reply")
	}
	for path, want := range map[string]int{
		"/runs/" + first.RunID + "/requests/0/comments/9/replies":    http.StatusNotFound,
		"/runs/" + first.RunID + "/requests/7/comments/0/replies":    http.StatusNotFound,
		"/runs/" + first.RunID + "/requests/x/comments/0/replies":    http.StatusNotFound,
		"/runs/20261206-000000-nosuch/requests/0/comments/0/replies": http.StatusNotFound,
	} {
		if code, _ := reply(path, url.Values{"reviewer": {"ana"}, "reply": {"x"}}); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
	if code, body := reply(base, url.Values{"reviewer": {"ana"}, "reply": {"  "}}); code != http.StatusOK || !strings.Contains(body, "Not replied: reply: give its text") {
		t.Errorf("an empty reply: %d", code)
	}
	// A thread is resolved, and opened again, by a person, from either page.
	resolve := strings.TrimSuffix(base, "/replies") + "/resolve"
	if code, _ := reply(resolve, url.Values{"reviewer": {"ana"}, "resolved": {"1"}, "from": {next}}); code != http.StatusSeeOther {
		t.Fatalf("resolve: %d", code)
	}
	if _, page := b.get("/runs/" + first.RunID); !strings.Contains(page, "Resolved by ana") || !strings.Contains(page, `class="thread thread-resolved"`) || !strings.Contains(page, ">Open again</button>") {
		t.Errorf("the commented run's page does not show the thread resolved")
	}
	if code, _ := reply(resolve, url.Values{"reviewer": {"ana"}, "resolved": {"0"}}); code != http.StatusSeeOther {
		t.Fatalf("open again: %d", code)
	}
	if _, page := b.get("/runs/" + first.RunID); strings.Contains(page, "Resolved by") {
		t.Errorf("the thread is still resolved")
	}
	if code, _ := reply("/runs/"+first.RunID+"/requests/0/comments/9/resolve", url.Values{"reviewer": {"ana"}, "resolved": {"1"}}); code != http.StatusNotFound {
		t.Errorf("resolving a comment that is not there: %d", code)
	}
}

// The live stream tells a run page to reload when the approval requests on
// the board differ from those the page shows (?shown=): a page rendered
// before its request reached the board learns of it, and a page that shows
// it is left alone (a reviewer may be typing a rule into it).
func TestTheStreamTellsThePageWhenItsApprovalsChange(t *testing.T) {
	srv, _, _ := liveServer(t)
	b := newBrowser(t, srv.URL)
	b.get("/runs")
	_, id := startDemo(t, b)
	var num string
	testutil.Eventually(t, 20*time.Second, "the approval on the run page", func() bool {
		_, page := b.get("/runs/" + id)
		m := regexp.MustCompile(`/runs/[^/"]+/approvals/(\d+)`).FindStringSubmatch(page)
		if m != nil {
			num = m[1]
		}
		return m != nil
	})
	stream := func(shown string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/runs/"+id+"/events?after=0&shown="+shown, nil)
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body) // until the second is up
		return string(data)
	}
	if s := stream(""); !strings.Contains(s, "event: reload") {
		t.Errorf("a page that shows no request is not told of the waiting one:\n%.2000s", s)
	}
	if s := stream(num); strings.Contains(s, "event: reload") {
		t.Errorf("a page that shows the waiting request is told to reload:\n%.2000s", s)
	}
}
