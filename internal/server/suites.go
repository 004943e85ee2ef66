package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/web"
)

func (s *Server) scenarioIDs() []string {
	if len(s.cfg.ScenarioRoots) == 0 {
		return nil
	}
	found, _ := scenario.Discover(s.cfg.ScenarioRoots...)
	var ids []string
	for _, sc := range found {
		ids = append(ids, sc.ID)
	}
	return ids
}

func (s *Server) listSuites(c echo.Context) error {
	return s.renderSuites(c, nil, http.StatusOK)
}

func (s *Server) renderSuites(c echo.Context, errs map[string]string, status int) error {
	suites, err := s.store.ListSuites(c.Request().Context(), 100)
	if err != nil {
		return err
	}
	p := web.SuitesPage{Meta: s.meta(c, "Suites", web.NavSuites), Suites: suites, Scenarios: s.scenarioIDs(), Errors: errs}
	if s.cfg.Profiles != nil {
		if ps, err := s.cfg.Profiles(); err == nil {
			for _, pr := range ps.Profiles {
				p.Profiles = append(p.Profiles, pr.Name)
			}
		}
	}
	return render(c, status, web.SuitesView(p))
}

// launchSuite runs the chosen scenarios of the configured scenario roots
// as a suite in the background, and sends the browser to its matrix.
func (s *Server) launchSuite(c echo.Context) error {
	if s.cfg.Runner == nil || len(s.cfg.ScenarioRoots) == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "This server has no scenario roots (--scenarios DIR).")
	}
	errs := map[string]string{}
	k, err := strconv.Atoi(c.FormValue("repeat"))
	if err != nil || k < 1 || k > 100 {
		errs["repeat"] = "want a whole number from 1 to 100"
	}
	par, err := strconv.Atoi(c.FormValue("parallel"))
	if err != nil || par < 1 || par > 16 {
		errs["parallel"] = "want a whole number from 1 to 16"
	}
	form, _ := c.FormParams()
	chosen := map[string]bool{}
	for _, id := range form["scenarios"] {
		chosen[id] = true
	}
	found, problems := scenario.Discover(s.cfg.ScenarioRoots...)
	var picked []*scenario.Scenario
	for _, sc := range found {
		if chosen[sc.ID] {
			picked = append(picked, sc)
		}
	}
	if len(picked) == 0 {
		errs["scenarios"] = "choose at least one scenario"
	}
	opt := suite.Options{IndexEach: true, Repeat: k, Parallel: par}
	if name := c.FormValue("model"); name != "" {
		m, msg := s.profile(name)
		if msg != "" {
			errs["model"] = msg
		} else {
			opt.Model = &m
		}
	}
	if len(errs) > 0 {
		return s.renderSuites(c, errs, http.StatusUnprocessableEntity)
	}
	id := suite.NewID(time.Now())
	ctx := s.cfg.Background
	if ctx == nil {
		ctx = context.Background()
	}
	opt.ID = id
	go suite.Run(ctx, s.cfg.Runner, picked, problems, opt)
	return c.Redirect(http.StatusSeeOther, "/suites/"+id)
}

func (s *Server) showSuite(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No suite has the id "+strconv.Quote(id)+".")
	}
	cells, err := s.suiteCells(c.Request().Context(), id)
	if err != nil {
		return err
	}
	p := web.SuitePage{Meta: s.meta(c, "Suite "+id, web.NavSuites), Suite: id}
	p.Rows, p.Repeats = web.BuildMatrix(cells)
	for _, cl := range cells {
		p.Total++
		if !cl.HasVerdict {
			p.Running++
		} else if cl.Passed {
			p.Passed++
		}
	}
	for _, r := range p.Rows {
		if r.PassK() {
			p.AllPass++
		}
	}
	if len(cells) == 0 {
		// A suite launched a moment ago has no indexed run yet.
		p.Running = 1
	}
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
	return render(c, http.StatusOK, web.ScenarioView(web.ScenarioPage{Meta: s.meta(c, "Scenario "+id, web.NavSuites), Scenario: id, Cells: cells, Chart: web.BuildChart(cells)}))
}

// suiteCells returns a suite's cells, reading the index at most once a
// second per suite: a suite page is polled while its suite runs, and read
// by many people at once when it ends.
func (s *Server) suiteCells(ctx context.Context, id string) ([]store.Cell, error) {
	s.cacheMu.Lock()
	e, ok := s.suiteCache[id]
	s.cacheMu.Unlock()
	if ok && time.Since(e.at) < time.Second {
		return e.cells, nil
	}
	cells, err := s.store.SuiteCells(ctx, id)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	if len(s.suiteCache) > 256 {
		clear(s.suiteCache)
	}
	s.suiteCache[id] = cachedCells{cells: cells, at: time.Now()}
	s.cacheMu.Unlock()
	return cells, nil
}

type cachedCells struct {
	cells []store.Cell
	at    time.Time
}
