package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/review"
)

// requestChanges sends a reviewer's summary and line comments to the agent
// as the next turn of the run's session, and goes to the new run.
func (s *Server) requestChanges(c echo.Context, id, reviewer string, f reviewForm) error {
	if s.launcher == nil || !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "This server does not run agents, so it cannot ask for changes.")
	}
	files, _, err := s.runDiff(c, id)
	if err != nil {
		return err
	}
	form, _ := c.FormParams()
	comments, err := review.FormComments(form, files)
	if err != nil {
		return s.renderRun(c, id, "No changes were requested: "+err.Error()+".", shownErrors)
	}
	cr := bundle.ChangeRequest{By: reviewer, At: time.Now().UTC(), Summary: f.Summary, Comments: comments}
	next, err := s.launcher.RequestChanges(id, cr, launch.Task{Model: f.ChangesModel, Script: f.ChangesScript})
	if errs := launch.Fields(err); errs != nil {
		return s.renderRun(c, id, "No changes were requested: "+errs.Error()+".", shownErrors)
	}
	s.auditAs(c, s.actor(c, reviewer), "request-changes", id, "next run "+next)
	if err := s.saveDraft(c, id, reviewer, next); err != nil {
		s.log.Warn("keep the draft review after a request for changes", "run", id, "err", err)
	}
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", "/runs/"+next)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+next)
}
