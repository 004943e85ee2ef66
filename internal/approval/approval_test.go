package approval_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
)

func TestDecisionArrivesFromElsewhere(t *testing.T) {
	asked := make(chan string, 1)
	b := approval.NewBoard(time.Minute, func(run string) { asked <- run })
	got := make(chan agent.Decision, 1)
	go func() {
		d, _ := b.For("r1").Approve(context.Background(), agent.ApprovalRequest{CallID: "c1", Tool: "run_command", Args: `{"command":"make"}`})
		got <- d
	}()
	<-asked
	p := b.Pending("r1")
	if len(p) != 1 || p[0].Command() != "make" || len(b.Pending("r2")) != 0 {
		t.Fatalf("pending %+v", p)
	}
	if p[0].ID != 1 {
		t.Fatalf("the first request is numbered %d, want 1", p[0].ID)
	}
	// Another run cannot answer it with its number.
	if err := b.Decide("r2", p[0].ID, agent.Decision{Approved: true, By: "eve"}); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("decision from another run: %v", err)
	}
	if err := b.Decide("r1", p[0].ID, agent.Decision{Approved: true, By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if d := <-got; !d.Approved || d.By != "ana" {
		t.Fatalf("decision %+v", d)
	}
	// Exactly once: a second answer finds nothing waiting.
	if err := b.Decide("r1", p[0].ID, agent.Decision{By: "bo"}); !errors.Is(err, approval.ErrNotPending) {
		t.Fatalf("second decision: %v", err)
	}
}

func TestTimeoutDenies(t *testing.T) {
	b := approval.NewBoard(50*time.Millisecond, nil)
	d, err := b.For("r1").Approve(context.Background(), agent.ApprovalRequest{CallID: "c1", Tool: "run_command"})
	if err != nil || d.Approved || !strings.Contains(d.Reason, "no decision within 50ms") {
		t.Fatalf("%+v %v", d, err)
	}
	if len(b.Pending("r1")) != 0 {
		t.Fatal("a timed-out request is still pending")
	}
}

func TestCancelEndsTheWait(t *testing.T) {
	b := approval.NewBoard(time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.For("r1").Approve(ctx, agent.ApprovalRequest{CallID: "c1"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}
