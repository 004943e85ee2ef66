package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/share"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/web"
)

// shareRun makes a read-only link to the run and shows it, once.
func (s *Server) shareRun(c echo.Context) error { return s.makeShare(c, share.Run) }

// shareSuite makes a read-only link to the suite and shows it, once.
func (s *Server) shareSuite(c echo.Context) error { return s.makeShare(c, share.Suite) }

func (s *Server) makeShare(c echo.Context, kind string) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No "+kind+" has the id "+strconv.Quote(id)+".")
	}
	who := s.actor(c, s.reviewerName(c))
	secret, link, err := s.shares.Create(c.Request().Context(), kind, id, who, c.FormValue("expires"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No "+kind+" "+id+" is indexed.")
	case errors.Is(err, share.ErrLifetime):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "No link was made: "+err.Error()+".")
	case err != nil:
		return err
	}
	s.auditAs(c, who, "share", id, "link #"+strconv.FormatInt(link.ID, 10)+" until "+link.ExpiresAt.Format("2006-01-02 15:04")+" UTC")
	scheme := "http"
	if s.cfg.TLS {
		scheme = "https"
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	url := scheme + "://" + c.Request().Host + "/share/" + secret
	return render(c, http.StatusCreated, web.ShareCreatedView(web.ShareCreatedPage{Meta: s.meta(c, "Share "+kind+" "+id, web.NavRuns), URL: url, Link: link}))
}

// listShares lists the links.
func (s *Server) listShares(c echo.Context) error {
	links, err := s.shares.List(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.SharesView(web.SharesPage{Meta: s.meta(c, "Share links", web.NavRuns), Links: links, Now: s.now()}))
}

// revokeShare ends a link at once.
func (s *Server) revokeShare(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return echo.NewHTTPError(http.StatusNotFound, "Links are numbered 1, 2, …; there is no link "+strconv.Quote(c.Param("id"))+".")
	}
	who := s.actor(c, s.reviewerName(c))
	link, err := s.shares.Revoke(c.Request().Context(), id, who)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "There is no live link #"+strconv.FormatInt(id, 10)+" (it may be revoked already).")
	}
	if err != nil {
		return err
	}
	s.auditAs(c, who, "share-revoke", link.Object, "link #"+strconv.FormatInt(id, 10))
	return c.Redirect(http.StatusSeeOther, "/shares")
}

// openShare shows the run a live link names, read-only, to whoever holds
// the link — the run as one self-contained page, loading nothing else.
func (s *Server) openShare(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the URL is the secret
	h.Set("X-Robots-Tag", "noindex")
	link, err := s.shares.Open(c.Request().Context(), c.Param("token"))
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "This link is unknown, expired or revoked. Ask whoever sent it for a new one.")
	}
	if err != nil {
		return err
	}
	s.auditAs(c, "link #"+strconv.FormatInt(link.ID, 10)+" of "+link.CreatedBy, "share-open", link.Object, "opened "+strconv.Itoa(link.Opened)+" times")
	var page templ.Component
	if link.Kind == share.Suite {
		n, _ := strconv.Atoi(c.QueryParam("page"))
		v, err := s.matrices.View(c.Request().Context(), link.Object, suite.Filter{}, n)
		if err != nil {
			return err
		}
		page = web.SharedSuiteView(web.SuitePage{View: v}, exportStyle(), s.now().UTC().Format("2006-01-02 15:04"))
	} else if page, err = ExportRun(c.Request().Context(), s.runs, link.Object, s.now()); errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "The run this link shows is no longer on this host.")
	} else if err != nil {
		return err
	}
	h.Set("Content-Security-Policy", exportPolicy)
	return render(c, http.StatusOK, page)
}
