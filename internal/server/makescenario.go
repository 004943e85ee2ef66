package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/web"
)

// makeScenario makes a regression scenario of the run in the dashboard's
// scenario folder, and shows what was made.
func (s *Server) makeScenario(c echo.Context) error {
	id := c.Param("id")
	name := strings.TrimSpace(c.FormValue("name"))
	made, err := s.launcher.MakeScenario(c.Request().Context(), id, name)
	if errs := launch.Fields(err); errs != nil {
		return s.renderRun(c, id, "No scenario was made: "+errs.Error()+".", shownErrors)
	}
	s.auditAs(c, s.actor(c, s.reviewerName(c)), "scenario from", id, "scenario "+made.ID+" in "+made.Dir)
	return render(c, http.StatusCreated, web.ScenarioMadeView(web.ScenarioMadePage{Meta: s.meta(c, "Scenario "+made.ID, web.NavSuites), Made: *made}))
}

// continueAsSession makes a scenario run the first run of a session, and
// sends the browser to the session, whose Continue goes on from it.
func (s *Server) continueAsSession(c echo.Context) error {
	id := c.Param("id")
	sid, err := s.launcher.ContinueAsSession(c.Request().Context(), id)
	if err != nil {
		return s.renderRun(c, id, "The run was not continued: "+err.Error()+".", shownErrors)
	}
	s.audit(c, "runs session", id, "session "+sid)
	if isHTMX(c) {
		c.Response().Header().Set("HX-Redirect", "/sessions/"+sid)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/sessions/"+sid)
}
