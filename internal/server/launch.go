package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/review"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/web"
)

// startDemo launches the built-in demo on a fresh copy of the demo project
// inside the data folder, and sends the browser to the run's page.
func (s *Server) startDemo(c echo.Context) error {
	if s.queue == nil || s.runner == nil {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "This server cannot launch runs.")
	}
	id := run.NewRunID(time.Now())
	if err := s.launcher.Demo(id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// stopRun cancels a queued run or stops a running one.
func (s *Server) stopRun(c echo.Context) error {
	id := c.Param("id")
	if s.queue == nil || s.queue.Stop(id) != nil {
		return echo.NewHTTPError(http.StatusNotFound, "Run "+id+" was not launched by this server, or has ended.")
	}
	if fin, ok := s.queue.Finished(id); ok {
		select {
		case <-fin:
		case <-time.After(10 * time.Second):
		}
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// reviewForm is the review form of a run page: a decision on the diff, or
// a request for changes (its comments, like the parts of a decision part by
// part, are read from the form's numbered fields).
type reviewForm struct {
	Reviewer      string       `form:"reviewer"`
	Decision      web.Decision `form:"decision"` // approve, reject, partial or changes
	Reason        string       `form:"reason"`
	Summary       string       `form:"summary"`
	ChangesModel  string       `form:"changes_model"`
	ChangesScript string       `form:"changes_script"`
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
	if reviewer == "" || len(reviewer) > 80 {
		return s.renderRun(c, id, "Give your name (at most 80 characters), so the decision says who made it.", shownErrors)
	}
	if err := s.saveDraft(c, id, reviewer, ""); err != nil { // kept until a decision is taken
		return reviewError(err)
	}
	decision := f.Decision
	if decision == web.Changes {
		return s.requestChanges(c, id, reviewer, f)
	}
	var parts []patch.Choice
	if decision == web.Partial {
		form, _ := c.FormParams()
		var err error
		if parts, err = review.FormParts(form); err != nil {
			return s.renderRun(c, id, "Nothing was applied: "+err.Error()+".", shownErrors)
		}
		decision = web.Approve
	}
	if decision != web.Approve && decision != web.Reject {
		return echo.NewHTTPError(http.StatusBadRequest, "decision: want approve, reject, partial or changes")
	}
	err := s.reviews.Decide(c.Request().Context(), id, s.who(c, reviewer), review.Diff{Approve: decision == web.Approve, Reason: f.Reason, Parts: parts})
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

// approvalForm is an approval box's form: approve or deny, or approve and
// make a rule (what it matches, where and for how long).
type approvalForm struct {
	Reviewer    string       `form:"reviewer"`
	Decision    web.Decision `form:"decision"` // approve, deny or approve-rule
	Reason      string       `form:"reason"`
	RuleMatch   string       `form:"rule_match"`
	RuleCommand string       `form:"rule_command"`
	RuleScope   string       `form:"rule_scope"`
	RuleFor     string       `form:"rule_for"`
}

// decideApproval answers a gated tool call a running run waits on.
func (s *Server) decideApproval(c echo.Context) error {
	id := c.Param("id")
	var f approvalForm
	if err := c.Bind(&f); err != nil {
		return err
	}
	who := s.decider(c, f.Reviewer)
	if who == "" {
		who = s.reviewerName(c)
	}
	num, _ := strconv.ParseInt(c.Param("n"), 10, 64)
	if f.Decision == web.ApproveRule {
		_, err := s.reviews.ApproveByRule(c.Request().Context(), id, num, s.who(c, who),
			review.RuleRequest{Match: f.RuleMatch, Command: f.RuleCommand, Scope: f.RuleScope, For: f.RuleFor})
		var invalid *review.Invalid
		switch {
		case errors.Is(err, review.ErrNotWaiting):
			return s.renderRun(c, id, "That request is no longer waiting: it was answered already, or timed out. No rule was made.", conflictStatus(c))
		case errors.As(err, &invalid):
			return s.renderRun(c, id, "No rule was made and the request still waits: "+invalid.Problem+".", shownErrors)
		case err != nil:
			return reviewError(err)
		}
	} else if err := s.answer(c, id, num, f.Decision, who, f.Reason); err != nil {
		if errors.Is(err, review.ErrNotWaiting) {
			return s.renderRun(c, id, "That request is no longer waiting: it was answered already, or timed out.", conflictStatus(c))
		}
		return err
	}
	// The page shows the request answered at once (it is off the board);
	// the run's own record of the decision comes through its event stream.
	if isHTMX(c) {
		return s.renderRun(c, id, "", http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// answer approves or denies request num that run id waits on.
func (s *Server) answer(c echo.Context, id string, num int64, decision web.Decision, who, reason string) error {
	if decision != web.Approve && decision != web.Deny {
		return echo.NewHTTPError(http.StatusBadRequest, "decision: want approve or deny")
	}
	err := s.reviews.Answer(c.Request().Context(), id, num, s.who(c, who), decision == web.Approve, reason)
	if errors.Is(err, review.ErrNotWaiting) {
		return err
	}
	if err != nil {
		return reviewError(err)
	}
	return nil
}

// shownErrors is the status of a page that shows a form again with what
// is wrong in it: 200, as the page is what the person asked for (a browser
// logs any 4xx answer as an error in its console). The JSON API answers
// such a request 422.
const shownErrors = http.StatusOK

// conflictStatus is the status of a page that says why nothing was done:
// 409, except to HTMX, which swaps only successful answers into the page.
func conflictStatus(c echo.Context) int {
	if isHTMX(c) {
		return http.StatusOK
	}
	return http.StatusConflict
}

func (s *Server) reviewerName(c echo.Context) string {
	if ck, err := c.Cookie("proctor_reviewer"); err == nil {
		if v, err := url.QueryUnescape(ck.Value); err == nil && v != "" {
			return v
		}
	}
	return s.cfg.Reviewer
}

// runEvents streams a run's events as server-sent events, each an HTML
// timeline item, from the one after the last seen (Last-Event-ID or
// ?after=), "reload" when the pending approval requests or the status
// differ from the page's (?shown=, ?status=), then "done" when the run has
// ended. Reconnecting
// resumes with no duplicates and no gaps, because every event carries its
// seq as its id.
func (s *Server) runEvents(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run has the id "+strconv.Quote(id)+".")
	}
	after, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
	if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx := c.Request().Context()
	err := s.runs.Follow(ctx, id, after, c.QueryParam("shown"), c.QueryParam("status"), func(u runview.Update) error {
		switch {
		case u.Event != nil:
			var html bytes.Buffer
			if err := web.TimelineItem(u.First, *u.Event).Render(ctx, &html); err != nil {
				return err
			}
			fmt.Fprintf(w, "id: %d\nevent: ev\ndata: %s\n\n", u.Event.Seq, strings.ReplaceAll(html.String(), "\n", ""))
		case u.Reload:
			fmt.Fprint(w, "event: reload\ndata: reload\n\n")
		case u.Done:
			fmt.Fprint(w, "event: done\ndata: done\n\n")
		default:
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		w.Flush()
		return nil
	})
	if err == nil { // done: closing is left to the page, which reloads (a stream the server closed would make the browser reconnect)
		select {
		case <-ctx.Done():
		case <-time.After(s.doneLinger):
		}
	}
	return nil
}
