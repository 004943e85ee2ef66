package script_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/script"
)

// Two scripts on one host keep their own step positions; a script that
// was removed answers 404 naming why.
func TestHostServesScriptsApart(t *testing.T) {
	s, err := script.Load("testdata/two-steps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, err := script.NewHost("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	urlA, a, removeA := h.Add(s)
	urlB, b, removeB := h.Add(s)
	defer removeB()
	if urlA == urlB {
		t.Fatalf("both scripts at %s", urlA)
	}
	retry := model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 5 * time.Second}
	msgs := []model.Message{{Role: model.RoleSystem, Content: "be careful"}, {Role: model.RoleUser, Content: "fix the rounding bug"}}
	ctx := context.Background()
	for _, u := range []string{urlA, urlB} {
		c := model.NewClient(model.Endpoint{BaseURL: u, Model: s.Model}, retry, nil)
		r, err := c.Complete(ctx, model.Request{Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if r.Message.Content != "Let me look at the code." {
			t.Fatalf("%s: first reply %q", u, r.Message.Content)
		}
	}
	if a.Served() != 1 || b.Served() != 1 {
		t.Fatalf("served a=%d b=%d, want 1 each", a.Served(), b.Served())
	}
	removeA()
	resp, err := http.Post(urlA+"/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("removed script answered %d, want 404", resp.StatusCode)
	}
	resp, err = http.Get(urlB + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET models = %d", resp.StatusCode)
	}
}

// The in-process transport gives the same replies, plain and streamed, as
// the loopback endpoint, and the same errors past the last step.
func TestHostTransport(t *testing.T) {
	s, err := script.Load("testdata/two-steps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, err := script.NewHost("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, stream := range []bool{false, true} {
		url, srv, remove := h.Add(s)
		c := model.NewClient(model.Endpoint{BaseURL: url, Model: s.Model, Transport: h.Transport()}, model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 5 * time.Second}, nil)
		ctx := context.Background()
		msgs := []model.Message{{Role: model.RoleSystem, Content: "be careful"}, {Role: model.RoleUser, Content: "fix the rounding bug"}}
		r1, err := c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream})
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if len(r1.Message.ToolCalls) != 1 || r1.Message.ToolCalls[0].Arguments != `{"path":"money.go"}` || r1.Usage.TotalTokens != 110 {
			t.Fatalf("stream=%v: reply %+v", stream, r1)
		}
		msgs = append(msgs, r1.Message, model.Message{Role: model.RoleTool, ToolCallID: r1.Message.ToolCalls[0].ID, Name: "read_file", Content: "func Cents(e float64) int64"})
		if _, err := c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream}); err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(ctx, model.Request{Messages: msgs, Tools: tools, Stream: stream})
		if e, ok := model.AsError(err); !ok || e.Code != model.CodeScriptEnded {
			t.Fatalf("stream=%v: past the end: %v", stream, err)
		}
		if srv.Served() != 2 {
			t.Fatalf("served %d", srv.Served())
		}
		remove()
	}
}

// Clients made by the host share one SDK client, yet each talks to its own
// script.
func TestHostClientsShareTheSDK(t *testing.T) {
	s, err := script.Load("testdata/two-steps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, err := script.NewHost("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	retry := model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 5 * time.Second}
	var xs []model.Exchange
	a, removeA := h.Client(s, retry, func(x model.Exchange) { xs = append(xs, x) })
	b, removeB := h.Client(s, retry, nil)
	defer removeA()
	defer removeB()
	msgs := []model.Message{{Role: model.RoleSystem, Content: "be careful"}, {Role: model.RoleUser, Content: "fix the rounding bug"}}
	for _, c := range []*model.Client{a, b} {
		r, err := c.Complete(context.Background(), model.Request{Messages: msgs, Tools: tools})
		if err != nil || r.Message.Content != "Let me look at the code." {
			t.Fatalf("reply %+v, %v", r, err)
		}
	}
	if len(xs) != 1 {
		t.Fatalf("%d exchanges recorded for a, want 1", len(xs))
	}
}
