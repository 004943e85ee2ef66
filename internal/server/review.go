package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/review"
	"github.com/proctor-dev/proctor/web"
)

// reviewForm is the review form of a run page: a decision on the diff, or
// a request for changes (its comments, like the parts of a decision part by
// part, are read from the form's numbered fields).
type reviewForm struct {
	Reviewer      string        `form:"reviewer"`
	Decision      review.Action `form:"decision"` // approve, reject, partial or changes
	Reason        string        `form:"reason"`
	Summary       string        `form:"summary"`
	ChangesModel  string        `form:"changes_model"`
	ChangesScript string        `form:"changes_script"`
}

// reviewRun approves or rejects a run's diff through the gate.
func (s *Server) reviewRun(c echo.Context) error {
	id := c.Param("id")
	var f reviewForm
	if err := c.Bind(&f); err != nil {
		return err
	}
	reviewer := s.decider(c, f.Reviewer)
	s.rememberReviewer(c, reviewer)
	var invalid *review.Invalid
	if err := review.CheckName(reviewer); errors.As(err, &invalid) {
		return s.renderRun(c, id, "Nothing was done: "+invalid.Problem+".", shownErrors)
	}
	if err := s.saveDraft(c, id, reviewer, ""); err != nil { // kept until a decision is taken
		return reviewError(err)
	}
	if f.Decision == review.Changes {
		return s.requestChanges(c, id, reviewer, f)
	}
	form, _ := c.FormParams()
	d, err := review.FormDiff(f.Decision, form, f.Reason)
	if err != nil {
		return s.renderRun(c, id, "Nothing was applied: "+err.Error()+".", shownErrors)
	}
	err = s.reviews.Decide(c.Request().Context(), id, s.who(c, reviewer), d)
	var refused *review.Refused
	if errors.As(err, &refused) {
		return s.renderRun(c, id, refused.Reason, conflictStatus(c))
	}
	if err != nil {
		return reviewError(err)
	}
	if isHTMX(c) {
		return s.renderRun(c, id, "", http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// RecoverReviews finishes or rolls back the reviews that a stopped process
// left journaled (review.Service.Recover).
func (s *Server) RecoverReviews(ctx context.Context) (int, []error) { return s.reviews.Recover(ctx) }

// who is the person a request decides for: the name the decision is
// recorded under, how the audit log names them, and their address.
func (s *Server) who(c echo.Context, name string) review.Who {
	return review.Who{Name: strings.TrimSpace(name), Actor: s.actor(c, name), Address: clientAddr(c)}
}

// draft is the draft review of run id by the reviewer this browser is.
func (s *Server) draft(c echo.Context, id string) (web.Draft, string) {
	d := s.reviews.Draft(id, s.actor(c, s.reviewerName(c)))
	return web.Draft(d.Fields), d.Restored
}

// saveDraft keeps the review form's decisions, edits and comments as
// reviewer's draft of run id; once its request for changes was sent to run
// sentTo, the comments and summary are kept aside until that run answers.
func (s *Server) saveDraft(c echo.Context, id, reviewer, sentTo string) error {
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	d, err := review.DraftFrom(form)
	if err != nil {
		return err
	}
	if sentTo != "" {
		d = d.Sending(sentTo)
	}
	return s.reviews.SaveDraft(id, s.actor(c, reviewer), d)
}

// saveDraftForm keeps the review form as the reviewer's draft as it is
// filled in (the page sends it a moment after each change).
func (s *Server) saveDraftForm(c echo.Context) error {
	reviewer := s.decider(c, c.FormValue("reviewer"))
	s.rememberReviewer(c, reviewer)
	if err := s.saveDraft(c, c.Param("id"), reviewer, ""); err != nil {
		return reviewError(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// rememberReviewer keeps the name a browser that is not signed in reviews
// under (a cookie), for its next form and its draft.
func (s *Server) rememberReviewer(c echo.Context, reviewer string) {
	if _, signedIn := principal(c); !signedIn && reviewer != "" && len(reviewer) <= 80 {
		c.SetCookie(&http.Cookie{Name: "proctor_reviewer", Value: url.QueryEscape(reviewer), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 365 * 24 * 3600})
	}
}

func (s *Server) reviewerName(c echo.Context) string {
	if ck, err := c.Cookie("proctor_reviewer"); err == nil {
		if v, err := url.QueryUnescape(ck.Value); err == nil && v != "" {
			return v
		}
	}
	return s.cfg.Reviewer
}

// reviewError is a review's error as an HTTP error: a run that is not
// here, a request that makes no sense; anything else fails the request.
func reviewError(err error) error {
	var invalid *review.Invalid
	switch {
	case errors.Is(err, review.ErrNoRun):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.As(err, &invalid):
		return echo.NewHTTPError(http.StatusBadRequest, invalid.Error())
	}
	return err
}

// conflictStatus is the status of a page that says why nothing was done:
// 409, except to HTMX, which swaps only successful answers into the page.
func conflictStatus(c echo.Context) int {
	if isHTMX(c) {
		return http.StatusOK
	}
	return http.StatusConflict
}

// shownErrors is the status of a page that shows a form again with what
// is wrong in it: 200, as the page is what the person asked for (a browser
// logs any 4xx answer as an error in its console). The JSON API answers
// such a request 422.
const shownErrors = http.StatusOK
