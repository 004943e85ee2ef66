package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
)

// A sign-in is right, wrong (the same for an unknown name, a wrong
// password and a disabled account) or limited after too many failures
// from its address; a right one makes a web session the store knows.
func TestSignIn(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hash, err := auth.HashPassword("correct horse battery", auth.Params{Time: 1, Memory: 8 * 1024, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []store.User{{Name: "dana", Role: "reviewer", PasswordHash: hash}, {Name: "gone", Role: "viewer", PasswordHash: hash, Disabled: true}} {
		if err := st.AddUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := &auth.Signins{Store: st, Limiter: auth.NewLimiter(3, time.Minute, clock), TTL: time.Hour, Now: clock}

	sess, err := s.SignIn(ctx, " dana ", "correct horse battery", "10.0.0.1")
	if err != nil || sess.User.Name != "dana" || !sess.Expires.Equal(now.Add(time.Hour)) {
		t.Fatalf("a right sign-in: %+v, %v", sess, err)
	}
	if ws, err := st.LookupWebSession(ctx, auth.HashSecret(sess.Secret), now); err != nil || ws.User.Name != "dana" {
		t.Fatalf("its session: %+v, %v", ws, err)
	}
	for _, bad := range [][2]string{{"dana", "wrong"}, {"nobody", "correct horse battery"}, {"gone", "correct horse battery"}} {
		if _, err := s.SignIn(ctx, bad[0], bad[1], "10.0.0.2"); !errors.Is(err, auth.ErrWrongPassword) {
			t.Errorf("%s/%s: %v, want ErrWrongPassword", bad[0], bad[1], err)
		}
	}
	var limited *auth.Limited
	if _, err := s.SignIn(ctx, "dana", "correct horse battery", "10.0.0.2"); !errors.As(err, &limited) || limited.Wait <= 0 {
		t.Fatalf("a fourth try from an address that failed three times: %v", err)
	}
	if _, err := s.SignIn(ctx, "dana", "correct horse battery", "10.0.0.3"); err != nil { // the owner, from a clean address
		t.Fatalf("from a clean address: %v", err)
	}
}
