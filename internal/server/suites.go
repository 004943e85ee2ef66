package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/web"
)

// scenarioRoots are the folders suites may be launched from.
func (s *Server) scenarioRoots() []string {
	if s.launcher == nil {
		return nil
	}
	return s.launcher.ScenarioRoots
}

func (s *Server) scenarioRows() []web.ScenarioRow {
	if len(s.scenarioRoots()) == 0 {
		return nil
	}
	found, _ := scenario.Discover(s.scenarioRoots()...)
	var rows []web.ScenarioRow
	for _, sc := range found {
		rows = append(rows, web.ScenarioRow{ID: sc.ID, Description: sc.Description, MadeFrom: sc.MadeFrom, Turns: len(sc.Turns), Checks: len(sc.Checks)})
	}
	return rows
}

func (s *Server) listSuites(c echo.Context) error {
	return s.renderSuites(c, web.SuiteValues{}, nil, http.StatusOK)
}

func (s *Server) renderSuites(c echo.Context, v web.SuiteValues, errs map[string]string, status int) error {
	suites, err := s.store.ListSuites(c.Request().Context(), 100)
	if err != nil {
		return err
	}
	p := web.SuitesPage{Meta: s.meta(c, "Suites", web.NavSuites), Suites: suites, Scenarios: s.scenarioRows(), Values: v, Errors: errs}
	p.Models, _ = s.models(false)
	if s.launcher != nil {
		p.Agents, _ = s.launcher.AgentNames()
	}
	return render(c, status, web.SuitesView(p))
}

// launchSuite runs the chosen scenarios of the configured scenario roots
// as a suite in the background, and sends the browser to its matrix.
func (s *Server) launchSuite(c echo.Context) error {
	if len(s.scenarioRoots()) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "This server has no scenario roots (--scenarios DIR).")
	}
	v := web.SuiteValues{Sent: true}
	if err := c.Bind(&v); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	k, _ := strconv.Atoi(v.Repeat)
	id, err := s.launcher.Suite(launch.SuiteRequest{Scenarios: v.Scenarios, Tags: splitTags(v.Tags), Repeat: k, Model: v.Model, Agent: v.Agent})
	if errs := launch.Fields(err); errs != nil {
		return s.renderSuites(c, v, errs, shownErrors)
	}
	return c.Redirect(http.StatusSeeOther, "/suites/"+id)
}

func (s *Server) apiLaunchSuite(c echo.Context) error {
	if len(s.scenarioRoots()) == 0 {
		return apiError(c, http.StatusNotFound, "this server has no scenario roots (--scenarios DIR)", nil)
	}
	// Repeat left out is 1; given, it is checked as the form's is (0 is
	// refused, not taken for 1).
	in := struct {
		Scenarios []string `json:"scenarios"`
		Tags      []string `json:"tags"`
		Repeat    int      `json:"repeat"`
		Model     string   `json:"model"`
		Agent     string   `json:"agent"`
	}{Repeat: 1}
	if err := readJSON(c, &in, `{"scenarios": ["id"], "repeat": 3}`); err != nil {
		return err
	}
	id, err := s.launcher.Suite(launch.SuiteRequest{Scenarios: in.Scenarios, Tags: in.Tags, Repeat: in.Repeat, Model: in.Model, Agent: in.Agent})
	if errs := launch.Fields(err); errs != nil {
		return apiError(c, http.StatusUnprocessableEntity, "the suite was not launched", errs)
	}
	return c.JSON(http.StatusAccepted, suiteAccepted{Suite: id, URL: "/suites/" + id, API: "/api/v1/suites/" + id})
}

func (s *Server) apiGetSuite(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return apiError(c, http.StatusNotFound, "no suite has that id", nil)
	}
	r, err := s.matrices.Results(c.Request().Context(), id, len(s.suiteQueued(id)))
	if err != nil {
		return err
	}
	if r.Empty() && !s.launched(id) {
		return apiError(c, http.StatusNotFound, "no suite "+id+" is indexed, and this server has not launched one", nil)
	}
	return c.JSON(http.StatusOK, r)
}

func (s *Server) showSuite(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No suite has the id "+strconv.Quote(id)+".")
	}
	f := suite.Filter{Status: c.QueryParam("status"), Name: c.QueryParam("name"), Tag: c.QueryParam("tag")}
	if err := f.Check(); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	n, _ := strconv.Atoi(c.QueryParam("page"))
	v, err := s.matrices.View(c.Request().Context(), id, f, n)
	if err != nil {
		return err
	}
	if v.Matrix.Total == 0 && !s.launched(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No suite "+id+" is indexed. If its runs are on disk, run proctor index on their folder.")
	}
	p := web.SuitePage{Meta: s.meta(c, "Suite "+id, web.NavSuites), View: v, Queued: s.suiteQueued(id)}
	baselines, err := suite.Baselines(s.cfg.DataDir)
	if err != nil {
		return err
	}
	for _, b := range baselines {
		if b.Suite == id {
			p.BaselineOf = append(p.BaselineOf, b.Name)
		}
	}
	p.Working = v.Matrix.Running > 0 || v.Matrix.Total == 0 || len(p.Queued) > 0 // none indexed yet: launched a moment ago
	return render(c, http.StatusOK, web.SuiteView(p))
}

func (s *Server) showScenario(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No scenario has the id "+strconv.Quote(id)+".")
	}
	cells, err := s.store.ScenarioHistory(c.Request().Context(), id, 200)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "Scenario "+id+" has no indexed runs.")
	}
	suites, err := s.store.ScenarioSuites(c.Request().Context(), id, 20)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ScenarioView(web.ScenarioPage{Meta: s.meta(c, "Scenario "+id, web.NavSuites), Scenario: id, Cells: cells, Chart: web.BuildChart(cells), Suites: suites}))
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// launched reports whether this server launched suite id (which may have no
// indexed run yet).
func (s *Server) launched(id string) bool { return s.launcher != nil && s.launcher.Launched(id) }

// suiteQueued are the runs of suite id that wait in the launch queue.
func (s *Server) suiteQueued(id string) []jobs.Job {
	if s.launcher == nil {
		return nil
	}
	return s.launcher.SuiteQueued(id)
}
