package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/review"
)

// A thread is a comment of a request for changes with its replies:
// comment n of request r made of run id (both from 0). Its forms come
// from the page of that run or of the run that was asked (from), which is
// shown again.
type thread struct {
	id, back string
	r, n     int
	who      review.Who
}

// threadOf reads a thread action's address and who acts.
func (s *Server) threadOf(c echo.Context) (thread, error) {
	t := thread{id: c.Param("id")}
	var err1, err2 error
	t.r, err1 = strconv.Atoi(c.Param("r"))
	t.n, err2 = strconv.Atoi(c.Param("n"))
	if !bundle.ValidID(t.id) || err1 != nil || err2 != nil {
		return t, echo.NewHTTPError(http.StatusNotFound, "No such comment.")
	}
	name := s.decider(c, c.FormValue("reviewer"))
	if name == "" {
		name = s.reviewerName(c)
	}
	t.who, t.back = s.who(c, name), t.id
	if from := c.FormValue("from"); bundle.ValidID(from) {
		t.back = from
	}
	return t, nil
}

// threadDone shows the page a thread action came from again, with what went
// wrong (what says what was not done).
func (s *Server) threadDone(c echo.Context, t thread, what string, err error) error {
	var invalid *review.Invalid
	switch {
	case errors.As(err, &invalid):
		return s.renderRun(c, t.back, what+": "+invalid.Problem+".", shownErrors)
	case err != nil:
		return reviewError(err)
	}
	if isHTMX(c) {
		return s.renderRun(c, t.back, "", http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+t.back)
}

// replyToComment adds a reply at the end of a thread.
func (s *Server) replyToComment(c echo.Context) error {
	t, err := s.threadOf(c)
	if err != nil {
		return err
	}
	err = s.reviews.Reply(c.Request().Context(), t.id, t.r, t.n, t.who, c.FormValue("reply"))
	return s.threadDone(c, t, "Not replied", err)
}

// resolveComment marks a thread resolved (resolved=1) or open again.
func (s *Server) resolveComment(c echo.Context) error {
	t, err := s.threadOf(c)
	if err != nil {
		return err
	}
	err = s.reviews.Resolve(c.Request().Context(), t.id, t.r, t.n, t.who, c.FormValue("resolved") == "1")
	return s.threadDone(c, t, "Not resolved", err)
}
