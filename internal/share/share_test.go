package share_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/share"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

func TestALinkLivesUntilItExpiresOrIsRevoked(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	end := start.Add(time.Second)
	r := &bundle.Run{Dir: "/b/run-1", Receipt: bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: "run-1", Kind: bundle.KindTask, Status: bundle.StatusPassed,
		Stage: bundle.StageCompleted, Task: "t", Source: bundle.Source{Kind: "local", Path: "/s"}, Model: bundle.Model{Name: "m"}, StartedAt: start, EndedAt: &end}}
	if err := st.ApplyBundles(ctx, []store.BundleUpdate{{Path: r.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: r}}, nil); err != nil {
		t.Fatal(err)
	}
	now := start
	links := &share.Links{Store: st, Now: func() time.Time { return now }}

	for _, tc := range []struct{ run, lifetime, want string }{
		{"run-1", "forever", `expires: want one of 1h, 24h, 168h, 720h; got "forever"`},
		{"run-1", "", "expires: want one of"},
		{"run-nope", "1h", "share run run-nope: get run run-nope: not found"},
	} {
		if _, _, err := links.Create(ctx, share.Run, tc.run, "rev", tc.lifetime); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s for %q: %v", tc.run, tc.lifetime, err)
		}
	}
	if _, _, err := links.Create(ctx, share.Suite, "suite-nope", "rev", "1h"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a link to an unknown suite: %v", err)
	}
	if _, _, err := links.Create(ctx, "session", "run-1", "rev", "1h"); err == nil || !strings.Contains(err.Error(), "a link shows a run or a suite") {
		t.Errorf("a link to a session: %v", err)
	}
	day, link, err := links.Create(ctx, share.Run, "run-1", "rev", "24h")
	if err != nil || !strings.HasPrefix(day, share.Prefix) || !link.ExpiresAt.Equal(start.Add(24*time.Hour)) {
		t.Fatalf("a day's link: %q %+v %v", day, link, err)
	}
	week, _, _ := links.Create(ctx, share.Run, "run-1", "rev", "168h")
	if got, err := links.Open(ctx, day); err != nil || got.Object != "run-1" || got.Opened != 1 {
		t.Fatalf("open: %+v %v", got, err)
	}
	for _, bad := range []string{"", "psl_", "psl_forged", "ptk_" + day[4:], day + "x", strings.Repeat("a", 1000)} {
		if _, err := links.Open(ctx, bad); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("open %.20q: %v", bad, err)
		}
	}
	now = start.Add(24 * time.Hour) // at its expiry it is over
	if _, err := links.Open(ctx, day); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired link opens: %v", err)
	}
	if _, err := links.Revoke(ctx, 2, "ada"); err != nil {
		t.Fatal(err)
	}
	if _, err := links.Open(ctx, week); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a revoked link opens: %v", err)
	}
	if _, err := links.Revoke(ctx, 2, "ada"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked twice: %v", err)
	}
	all, err := links.List(ctx)
	if err != nil || len(all) != 2 || all[0].RevokedBy != "ada" || all[1].Opened != 1 || all[1].Live(now) {
		t.Fatalf("list: %+v %v", all, err)
	}
}
