package web

import (
	"time"

	"github.com/proctor-dev/proctor/internal/share"
	"github.com/proctor-dev/proctor/internal/store"
)

// ShareCreatedPage shows a new share link, the one time its URL is shown.
type ShareCreatedPage struct {
	Meta Meta
	URL  string
	Link store.ShareLink
}

// SharesPage lists the share links.
type SharesPage struct {
	Meta  Meta
	Links []store.ShareLink
	Now   time.Time
}

// shareState is a link's state in words.
func shareState(l store.ShareLink, now time.Time) string {
	switch {
	case !l.RevokedAt.IsZero():
		return "revoked by " + l.RevokedBy + " " + formatTime(l.RevokedAt)
	case !now.Before(l.ExpiresAt):
		return "expired"
	}
	return "live"
}

// shareLifetimes are the choices of the share form.
func shareLifetimes() []string { return share.Lifetimes() }

func shareLifetimeLabel(s string) string { return share.LifetimeLabel(s) }

// shareTarget is the dashboard's page of what a link shows.
func shareTarget(l store.ShareLink) string {
	if l.Kind == share.Suite {
		return suiteURL(l.Object)
	}
	return runURL(l.Object)
}

// shareExposes says what a link shows.
func shareExposes(l store.ShareLink) string {
	if l.Kind == share.Suite {
		return "the suite — its matrix of results, pass rates and costs, not its runs —"
	}
	return "the run — its summary, checks, transcript and diff —"
}
