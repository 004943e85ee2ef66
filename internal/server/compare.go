package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/web"
)

// compareQuery reads a comparison's query: base and head (suite ids or
// baselines' names), class and page. A problem is a 400 naming the field.
func (s *Server) compareQuery(c echo.Context) (q suite.CompareRequest, baseName, headName string, err error) {
	q.Class = c.QueryParam("class")
	q.Page = 1
	if p := c.QueryParam("page"); p != "" {
		if q.Page, err = strconv.Atoi(p); err != nil || q.Page < 1 {
			return q, "", "", errors.New("page: want a page number from 1; got " + strconv.Quote(p))
		}
	}
	if q.Base, baseName, err = suite.ResolveSuite(s.cfg.DataDir, c.QueryParam("base")); err != nil {
		return q, "", "", errors.New("base: " + err.Error())
	}
	if q.Head, headName, err = suite.ResolveSuite(s.cfg.DataDir, c.QueryParam("head")); err != nil {
		return q, "", "", errors.New("head: " + err.Error())
	}
	return q, baseName, headName, nil
}

// showCompare compares two suites; without both, it shows the form that
// picks them (the baseline set last picked as the base), saying what is
// missing when the form was sent; a comparison that cannot be made shows
// the form again with why.
func (s *Server) showCompare(c echo.Context) error {
	ctx := c.Request().Context()
	p := web.ComparePage{Meta: s.meta(c, "Compare suites", web.NavSuites), Base: c.QueryParam("base"), Head: c.QueryParam("head")}
	var err error
	if p.Suites, err = s.store.RecentSuites(ctx, 100); err != nil {
		return err
	}
	if p.Baselines, err = suite.Baselines(s.cfg.DataDir); err != nil {
		return err
	}
	for _, id := range []string{p.Head, p.Base} { // a suite named by the link, older than the recent ones
		if bundle.ValidID(id) && !slices.ContainsFunc(p.Suites, func(s store.SuiteSummary) bool { return s.Suite == id }) &&
			!slices.ContainsFunc(p.Baselines, func(b suite.Baseline) bool { return b.Name == id }) {
			p.Suites = append([]store.SuiteSummary{{Suite: id}}, p.Suites...)
		}
	}
	sent := c.QueryParams().Has("base") || c.QueryParams().Has("head")
	if p.Base == "" || p.Head == "" {
		switch {
		case sent && p.Base == "" && p.Head == "":
			p.Problem = "Pick the two suites: the base (before) and the head (after)."
		case sent && p.Base == "":
			p.Problem = "Pick the base: the suite (or baseline) to compare " + p.Head + " with."
		case sent:
			p.Problem = "Pick the head: the suite to compare with " + p.Base + "."
		}
		if p.Base == "" {
			p.Base = suite.LatestBaseline(p.Baselines)
		}
		return render(c, http.StatusOK, web.CompareView(p))
	}
	q, baseName, headName, err := s.compareQuery(c)
	if err != nil {
		p.Problem = "Not compared: " + err.Error() + "."
		return render(c, shownErrors, web.CompareView(p))
	}
	p.BaseName, p.HeadName = baseName, headName
	if p.Cmp, err = suite.Compare(ctx, s.store, q); compareStatus(err) != 0 {
		p.Cmp, p.Problem = nil, "Not compared: "+err.Error()+"."
		return render(c, shownErrors, web.CompareView(p))
	} else if err != nil {
		return err
	}
	p.Meta.Title = "Compare " + q.Head + " with " + q.Base
	return render(c, http.StatusOK, web.CompareView(p))
}

// compareStatus is a comparison's error as an HTTP status (0: not the
// asker's mistake): an unknown suite is 404, a suite compared with itself
// or an unknown class 400.
func compareStatus(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, suite.ErrSameSuite), errors.Is(err, suite.ErrBadClass):
		return http.StatusBadRequest
	}
	return 0
}

// apiCompare is a page of a comparison as JSON (suite.CompareJSON).
func (s *Server) apiCompare(c echo.Context) error {
	if c.QueryParam("base") == "" || c.QueryParam("head") == "" {
		return apiError(c, http.StatusBadRequest, "give the two suites: ?base=SUITE&head=SUITE (a suite id or a baseline's name)", nil)
	}
	q, _, _, err := s.compareQuery(c)
	if err != nil {
		return apiError(c, http.StatusBadRequest, err.Error(), nil)
	}
	cmp, err := suite.Compare(c.Request().Context(), s.store, q)
	if err != nil {
		if status := compareStatus(err); status != 0 {
			return apiError(c, status, err.Error(), nil)
		}
		return err
	}
	return c.JSON(http.StatusOK, cmp.JSON())
}

// setBaseline makes the suite the baseline the form names, and goes back
// to the suite's page.
func (s *Server) setBaseline(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No suite has the id "+strconv.Quote(id)+".")
	}
	name := c.FormValue("name")
	m, err := s.matrices.Matrix(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if m.Total == 0 {
		return echo.NewHTTPError(http.StatusNotFound, "No suite "+id+" is indexed, so it cannot be a baseline.")
	}
	who := s.actor(c, s.reviewerName(c))
	if err := suite.SetBaseline(c.Request().Context(), s.cfg.DataDir, name, id, who); err != nil {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "Not set: "+err.Error())
	}
	s.auditAs(c, who, "baseline", id, "baseline "+name)
	return c.Redirect(http.StatusSeeOther, "/suites/"+id)
}

// showRunPair shows runs a and b side by side.
func (s *Server) showRunPair(c echo.Context) error {
	a, b := c.QueryParam("a"), c.QueryParam("b")
	for _, q := range []struct{ name, id string }{{"a", a}, {"b", b}} {
		if !bundle.ValidID(q.id) {
			return echo.NewHTTPError(http.StatusBadRequest, q.name+": want a run id; got "+strconv.Quote(q.id)+". This page is /compare/runs?a=RUN&b=RUN.")
		}
	}
	p, err := s.runs.Pair(c.Request().Context(), a, b)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, err.Error()+". If its bundle is on disk, run proctor index on its folder.")
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunPairView(web.NewRunPairPage(s.meta(c, "Runs "+a+" and "+b, web.NavRuns), p)))
}
