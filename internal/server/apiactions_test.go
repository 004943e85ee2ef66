package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
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
	srv, _, _ := liveServer(t)
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
	code, out := postJSON(t, c, srv.URL+"/api/v1/suites", `{"tags": ["scope"], "repeat": 2, "parallel": 2}`)
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
