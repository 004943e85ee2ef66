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
