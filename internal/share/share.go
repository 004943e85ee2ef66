// Package share owns read-only links to one run or one suite: made by a
// reviewer for
// someone without an account, opened by whoever holds the URL until they
// expire or are revoked. A link's secret is 256 random bits shown once;
// only its SHA-256 is kept, so the index's file gives no link away.
package share

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
)

// Prefix begins every link's secret.
const Prefix = "psl_"

// Lifetimes are how long a link may last, by the form's name for each.
func Lifetimes() []string { return []string{"1h", "24h", "168h", "720h"} }

// LifetimeLabel is a lifetime in words.
func LifetimeLabel(s string) string {
	return map[string]string{"1h": "an hour", "24h": "a day", "168h": "a week", "720h": "30 days"}[s]
}

// ErrLifetime is a lifetime not among Lifetimes.
var ErrLifetime = errors.New("expires: want one of " + strings.Join(Lifetimes(), ", "))

// Links makes, opens, lists and revokes share links.
type Links struct {
	Store *store.Store
	Now   func() time.Time
}

func (l *Links) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// What a link may show.
const (
	Run   = "run"
	Suite = "suite"
)

// Create makes a link to run or suite (kind) id lasting lifetime (one of
// Lifetimes), made by by; the secret is returned once and kept nowhere.
func (l *Links) Create(ctx context.Context, kind, id, by, lifetime string) (string, store.ShareLink, error) {
	if !slices.Contains(Lifetimes(), lifetime) {
		return "", store.ShareLink{}, fmt.Errorf("%w; got %q", ErrLifetime, lifetime)
	}
	switch kind {
	case Run:
		if _, err := l.Store.GetRun(ctx, id); err != nil {
			return "", store.ShareLink{}, fmt.Errorf("share run %s: %w", id, err)
		}
	case Suite:
		if ok, err := l.Store.SuiteExists(ctx, id); err != nil || !ok {
			return "", store.ShareLink{}, fmt.Errorf("share suite %s: %w", id, cmp.Or(err, store.ErrNotFound))
		}
	default:
		return "", store.ShareLink{}, fmt.Errorf("share %s %s: a link shows a run or a suite", kind, id)
	}
	d, _ := time.ParseDuration(lifetime)
	secret, err := auth.NewSecret(Prefix)
	if err != nil {
		return "", store.ShareLink{}, err
	}
	now := l.now().UTC()
	link := store.ShareLink{Kind: kind, Object: id, CreatedBy: by, CreatedAt: now, ExpiresAt: now.Add(d)}
	if link.ID, err = l.Store.AddShareLink(ctx, auth.HashSecret(secret), link); err != nil {
		return "", store.ShareLink{}, err
	}
	return secret, link, nil
}

// Open is the live link of secret (store.ErrNotFound when there is none,
// or it expired or was revoked), its opening counted.
func (l *Links) Open(ctx context.Context, secret string) (store.ShareLink, error) {
	if !strings.HasPrefix(secret, Prefix) || len(secret) > 128 {
		return store.ShareLink{}, fmt.Errorf("share link: %w", store.ErrNotFound)
	}
	return l.Store.OpenShareLink(ctx, auth.HashSecret(secret), l.now())
}

// Revoke ends link id at once.
func (l *Links) Revoke(ctx context.Context, id int64, by string) (store.ShareLink, error) {
	return l.Store.RevokeShareLink(ctx, id, by, l.now())
}

// List is every link, newest first.
func (l *Links) List(ctx context.Context) ([]store.ShareLink, error) {
	return l.Store.ListShareLinks(ctx)
}
