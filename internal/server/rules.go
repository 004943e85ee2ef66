package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/review"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/web"
)

// rulesFile is the approval rules of the data folder.
func (s *Server) rulesFile() *rules.File { return rules.At(s.cfg.DataDir) }

// listRules shows every rule, newest first.
func (s *Server) listRules(c echo.Context) error {
	return s.renderRules(c, "", http.StatusOK)
}

func (s *Server) renderRules(c echo.Context, msg string, status int) error {
	list, err := s.rulesFile().List()
	if err != nil {
		msg, list = err.Error(), nil
	}
	slices.Reverse(list)
	return render(c, status, web.RulesView(web.RulesPage{Meta: s.meta(c, "Approval rules", web.NavRules), Rules: list, Now: time.Now(), Error: msg}))
}

// revokeRule ends a rule at once; it is audited.
func (s *Server) revokeRule(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return echo.NewHTTPError(http.StatusNotFound, "Rules are numbered 1, 2, …; there is no rule "+strconv.Quote(c.Param("id"))+".")
	}
	who := s.actor(c, s.reviewerName(c))
	r, err := s.rulesFile().Revoke(id, who)
	if errors.Is(err, rules.ErrNoRule) {
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	if err != nil {
		return s.renderRules(c, "Nothing was revoked: "+err.Error(), http.StatusInternalServerError)
	}
	s.auditAs(c, who, "rule-revoke", "rule #"+strconv.FormatInt(id, 10), r.Describe())
	return c.Redirect(http.StatusSeeOther, "/rules")
}

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
	next, errs := s.launcher.RequestChanges(id, cr, launch.Task{Model: f.ChangesModel, Script: f.ChangesScript})
	if len(errs) > 0 {
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

// resumeRun starts a run that goes on from an interrupted one, and goes to
// it.
func (s *Server) resumeRun(c echo.Context) error {
	id := c.Param("id")
	if s.launcher == nil || !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "This server does not run agents, so it cannot resume a run.")
	}
	var f struct {
		Model  string `form:"resume_model"`
		Script string `form:"resume_script"`
	}
	if err := c.Bind(&f); err != nil {
		return err
	}
	next, errs := s.launcher.ResumeRun(c.Request().Context(), id, launch.Task{Model: f.Model, Script: f.Script})
	if len(errs) > 0 {
		return s.renderRun(c, id, "Not resumed: "+errs.Error()+".", shownErrors)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+next)
}
