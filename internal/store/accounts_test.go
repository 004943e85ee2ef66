package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/store"
)

func TestAccounts(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	if err := st.AddUser(ctx, store.User{Name: "ada", Role: "admin", PasswordHash: "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddUser(ctx, store.User{Name: "ada", Role: "viewer", PasswordHash: "h"}); !errors.Is(err, store.ErrUserExists) {
		t.Fatalf("second ada: %v, want ErrUserExists", err)
	}
	if err := st.AddUser(ctx, store.User{Name: "bob", Role: "root", PasswordHash: "h"}); err == nil {
		t.Fatal("role root was stored")
	}
	if err := st.AddUser(ctx, store.User{Name: "rev", Role: "reviewer", PasswordHash: "h2"}); err != nil {
		t.Fatal(err)
	}
	users, admins, err := st.CountUsers(ctx)
	if err != nil || users != 2 || admins != 1 {
		t.Fatalf("CountUsers = %d, %d, %v; want 2, 1", users, admins, err)
	}

	now := time.Now()
	if err := st.AddWebSession(ctx, "s1", "rev", "10.0.0.2", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.AddWebSession(ctx, "old", "rev", "10.0.0.2", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	ws, err := st.LookupWebSession(ctx, "s1", now)
	if err != nil || ws.User.Name != "rev" || ws.User.Role != "reviewer" {
		t.Fatalf("LookupWebSession = %+v, %v", ws, err)
	}
	if _, err := st.LookupWebSession(ctx, "old", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired session: %v, want ErrNotFound", err)
	}
	if _, err := st.LookupWebSession(ctx, "nope", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}

	// A new password signs the user out everywhere.
	u, _ := st.GetUser(ctx, "rev")
	u.PasswordHash = "h3"
	if err := st.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LookupWebSession(ctx, "s1", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("session after password change: %v, want ErrNotFound", err)
	}

	// Tokens: unique per user and name, looked up by hash, gone with the user.
	if err := st.AddAPIToken(ctx, "rev", "ci", "th", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.AddAPIToken(ctx, "rev", "ci", "th2", ""); !errors.Is(err, store.ErrTokenExists) {
		t.Errorf("second token ci: %v, want ErrTokenExists", err)
	}
	if err := st.AddAPIToken(ctx, "ghost", "ci", "th3", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token for unknown user: %v, want ErrNotFound", err)
	}
	if u, err := st.LookupAPIToken(ctx, "th", now); err != nil || u.Name != "rev" {
		t.Fatalf("LookupAPIToken = %+v, %v", u, err)
	}
	toks, _ := st.ListAPITokens(ctx, "rev")
	if len(toks) != 1 || toks[0].LastUsed.IsZero() {
		t.Errorf("tokens = %+v, want one, used", toks)
	}
	// Disabled: neither sessions nor tokens work.
	u, _ = st.GetUser(ctx, "rev")
	u.Disabled = true
	if err := st.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LookupAPIToken(ctx, "th", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token of disabled user: %v, want ErrNotFound", err)
	}
	if err := st.RemoveUser(ctx, "rev"); err != nil {
		t.Fatal(err)
	}
	if toks, _ := st.ListAPITokens(ctx, ""); len(toks) != 0 {
		t.Errorf("tokens after removing their user: %+v", toks)
	}
	if err := st.RemoveUser(ctx, "rev"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("remove twice: %v", err)
	}

	// A rebuild of the index keeps the accounts.
	if err := st.ForgetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetUser(ctx, "ada"); err != nil {
		t.Errorf("ForgetAll lost an account: %v", err)
	}
}

func TestAuditPages(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	for i := range 5 {
		if err := st.Audit(ctx, store.AuditEntry{Actor: "ada", Action: "approve", Object: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := st.ListAudit(ctx, 0, 3)
	if err != nil || len(page) != 3 || page[0].Object != "e" || next == 0 {
		t.Fatalf("first page = %+v, next %d, %v", page, next, err)
	}
	page, next, err = st.ListAudit(ctx, next, 3)
	if err != nil || len(page) != 2 || page[1].Object != "a" || next != 0 {
		t.Fatalf("second page = %+v, next %d, %v", page, next, err)
	}
}
