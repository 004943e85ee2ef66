package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func postJSON(t *testing.T, c *http.Client, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

func TestAPILaunchReviewAndApprovals(t *testing.T) {
	srv, data, _ := liveServer(t)
	c := &http.Client{}
	// Field errors come back by field.
	code, out := postJSON(t, c, srv.URL+"/api/v1/runs", `{"path": "../x", "task": "", "model": "local"}`)
	fields, _ := out["fields"].(map[string]any)
	if code != http.StatusUnprocessableEntity || fields["path"] == nil || fields["task"] == nil {
		t.Fatalf("%d %v", code, out)
	}
	if code, _ := postJSON(t, c, srv.URL+"/api/v1/runs", `{not json`); code != http.StatusBadRequest {
		t.Fatalf("bad JSON: %d", code)
	}
	// A form-encoded POST to the API still needs the CSRF token.
	resp, err := c.PostForm(srv.URL+"/api/v1/runs", url.Values{"task": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("form POST without token: %d", resp.StatusCode)
	}
	// Launch; the command waits for approval, answered through the API.
	code, out = postJSON(t, c, srv.URL+"/api/v1/runs", `{"path": "invoice", "task": "Fix the rounding bug", "model": "local"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, out)
	}
	id := out["run_id"].(string)
	var call string
	deadline := time.Now().Add(20 * time.Second)
	for call == "" && time.Now().Before(deadline) {
		resp, err := c.Get(srv.URL + "/api/v1/runs/" + id + "/approvals")
		if err != nil {
			t.Fatal(err)
		}
		var ap struct {
			Approvals []struct {
				ID      int64  `json:"id"`
				CallID  string `json:"call_id"`
				Command string `json:"command"`
			} `json:"approvals"`
		}
		json.NewDecoder(resp.Body).Decode(&ap)
		resp.Body.Close()
		if len(ap.Approvals) > 0 {
			// A run launched here that waits for an approval says so
			// everywhere: its receipt, the API, the status filter.
			assertAwaitingApproval(t, c, srv.URL, data, id)
			call = strconv.FormatInt(ap.Approvals[0].ID, 10)
			if ap.Approvals[0].Command != "go test ./..." || ap.Approvals[0].CallID == "" {
				t.Fatalf("approval %+v", ap)
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	if code, out := postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/approvals/"+call, `{"decision": "approve", "reviewer": "ci"}`); code != http.StatusOK {
		t.Fatalf("approve call: %d %v", code, out)
	}
	if code, _ := postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/approvals/"+call, `{"decision": "deny", "reviewer": "ci"}`); code != http.StatusConflict {
		t.Fatalf("second answer: %d", code)
	}
	for time.Now().Before(deadline) {
		resp, _ := c.Get(srv.URL + "/api/v1/runs/" + id)
		var r struct {
			Status string `json:"status"`
		}
		json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if r.Status == "awaiting_review" {
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	code, out = postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/review", `{"decision": "reject", "reviewer": "ci", "reason": "not now"}`)
	if code != http.StatusOK || out["review_state"] != "rejected" {
		t.Fatalf("reject: %d %v", code, out)
	}
	code, out = postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "other"}`)
	if code != http.StatusConflict || !strings.Contains(out["error"].(string), "already reviewed by ci") {
		t.Fatalf("second review: %d %v", code, out)
	}
	if code, _ := postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/stop", `{}`); code != http.StatusNotFound {
		t.Fatalf("stop an ended run: %d", code)
	}
}

func TestAPISuite(t *testing.T) {
	srv, _, _ := liveServer(t)
	c := &http.Client{}
	if code, out := postJSON(t, c, srv.URL+"/api/v1/suites", `{"scenarios": ["nope"], "repeat": 0}`); code != http.StatusUnprocessableEntity || out["fields"] == nil {
		t.Fatalf("bad suite: %d %v", code, out)
	}
	if code, _ := postJSON(t, c, srv.URL+"/api/v1/suites", `{"tags": ["no-such-tag"]}`); code != http.StatusUnprocessableEntity {
		t.Fatalf("unknown tag: %d", code)
	}
	code, out := postJSON(t, c, srv.URL+"/api/v1/suites", `{"tags": ["scope"], "repeat": 2}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, out)
	}
	api := out["api"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(1100 * time.Millisecond) // suite cells are read at most once a second
		resp, err := c.Get(srv.URL + api)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Done bool `json:"done"`
			Rows []struct {
				Scenario string `json:"scenario"`
				Passed   int    `json:"passed"`
				PassK    bool   `json:"pass_k"`
			} `json:"rows"`
		}
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if m.Done && len(m.Rows) == 1 && m.Rows[0].Passed == 2 {
			if !m.Rows[0].PassK {
				t.Fatalf("%+v", m)
			}
			return
		}
	}
	t.Fatal("the suite did not finish")
}

// A run whose checks failed (no Approve button on its page) was once
// approved through the API and applied, and its status turned passed while
// failure.code still said verify_failed.
func TestAPIApprovalOfAFailedRunNeedsForce(t *testing.T) {
	srv, data, st := liveServer(t)
	id := demoAwaitingReview(t, newBrowser(t, srv.URL))
	runDir := filepath.Join(data, "runs", id)
	b, err := bundle.ReadRun(runDir, bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	rc := b.Receipt
	rc.Status, rc.Failure = bundle.StatusFailed, &bundle.Failure{Domain: bundle.DomainAgent, Stage: bundle.StageChecking, Code: "verify_failed", Message: "a check failed"}
	if err := bundle.WriteReceipt(runDir, &rc); err != nil {
		t.Fatal(err)
	}
	money := filepath.Join(data, "demo", id, "invoice", "money.go")
	before, _ := os.ReadFile(money)
	c := &http.Client{}
	code, out := postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "ci"}`)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(out["error"]), "force") {
		t.Fatalf("plain approval of a failed run: %d %v", code, out)
	}
	if after, _ := os.ReadFile(money); string(after) != string(before) {
		t.Fatal("the diff was applied")
	}
	code, out = postJSON(t, c, srv.URL+"/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "ci", "force": true}`)
	if code != http.StatusOK {
		t.Fatalf("forced approval: %d %v", code, out)
	}
	b, _ = bundle.ReadRun(runDir, bundle.DefaultLimits())
	if got := b.Receipt; got.Status != bundle.StatusFailed || got.Failure == nil || got.Failure.Code != "verify_failed" || got.Review == nil || !got.Review.Applied || !got.Review.Forced {
		t.Fatalf("receipt after a forced approval: status %s failure %+v review %+v", got.Status, got.Failure, got.Review)
	}
	entries, _, _ := st.ListAudit(context.Background(), 0, 100)
	n := 0
	for _, e := range entries {
		if e.Object == id && e.Action == "approve-forced" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d approve-forced audit entries, want 1: %+v", n, entries)
	}
}

// Runs launched from the form once showed running / acquiring source while
// they waited for a command approval; only demo runs said
// awaiting_approval.
func assertAwaitingApproval(t *testing.T, c *http.Client, base, data, id string) {
	t.Helper()
	b, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	if err != nil || b.Receipt.Status != bundle.StatusAwaitingApproval || b.Receipt.Stage != bundle.StageRunning {
		t.Fatalf("run.json while it waits: status %s stage %s %v", b.Receipt.Status, b.Receipt.Stage, err)
	}
	var one apiRun
	getJSON(t, c, base+"/api/v1/runs/"+id, &one)
	if one.Status != "awaiting_approval" || one.Stage != "running" {
		t.Fatalf("the API says status %s stage %s", one.Status, one.Stage)
	}
	var list struct{ Runs []apiRun }
	getJSON(t, c, base+"/api/v1/runs?status=awaiting_approval", &list)
	if len(list.Runs) != 1 || list.Runs[0].RunID != id {
		t.Fatalf("?status=awaiting_approval lists %+v", list.Runs)
	}
}

type apiRun struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Stage  string `json:"stage"`
}

func getJSON(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// The API once answered invalid JSON with echo's internals, a review of a
// run that does not exist with 400 "give your name", and took a suite's
// repeat: 0 (which the form refuses) for 1.
func TestAPIAnswersBadRequestsPlainly(t *testing.T) {
	srv, _, _ := liveServer(t)
	c := &http.Client{}
	tests := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/v1/runs", `{"path": `, http.StatusBadRequest, "request body: cut short or not JSON"},
		{"/api/v1/runs", `{"pa th`, http.StatusBadRequest, "request body: cut short or not JSON"},
		{"/api/v1/runs", `{x}`, http.StatusBadRequest, "request body: invalid JSON at offset 2"},
		{"/api/v1/runs", `{"max_turns": "many"}`, http.StatusBadRequest, "request body: max_turns: want a number, got string"},
		{"/api/v1/runs", `{"criteria": "one"}`, http.StatusBadRequest, "request body: criteria: want an array, got string"},
		{"/api/v1/runs/20991231-000000-nosuch/changes", `{"comments": [{"line": "two"}]}`, http.StatusBadRequest, "request body: comments.line: want a number, got string"},
		{"/api/v1/runs/20991231-000000-nosuch/review", `{"decision": "approve"}`, http.StatusNotFound, ""},
		{"/api/v1/suites", `{"scenarios": ["rename-config-key"], "repeat": 0}`, http.StatusUnprocessableEntity, "the suite was not launched"},
	}
	for _, tc := range tests {
		code, out := postJSON(t, c, srv.URL+tc.path, tc.body)
		if code != tc.status || !strings.Contains(fmt.Sprint(out["error"]), tc.want) || strings.Contains(fmt.Sprint(out), "internal=") {
			t.Errorf("POST %s %s: %d %v, want %d %q", tc.path, tc.body, code, out, tc.status, tc.want)
		}
	}
}
