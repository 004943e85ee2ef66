package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/run"
)

// startDemo launches the built-in demo on a fresh copy of the demo project
// inside the data folder, and sends the browser to the run's page.
func (s *Server) startDemo(c echo.Context) error {
	id := run.NewRunID(time.Now())
	if err := s.launcher.Demo(id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// stopRun cancels a queued run or stops a running one.
func (s *Server) stopRun(c echo.Context) error {
	id := c.Param("id")
	if s.queue.Stop(id) != nil {
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

// resumeRun starts a run that goes on from an interrupted one, and goes to
// it.
func (s *Server) resumeRun(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+".")
	}
	var f struct {
		Model  string `form:"resume_model"`
		Script string `form:"resume_script"`
	}
	if err := c.Bind(&f); err != nil {
		return err
	}
	next, err := s.launcher.ResumeRun(c.Request().Context(), id, launch.Task{Model: f.Model, Script: f.Script})
	if errs := launch.Fields(err); errs != nil {
		return s.renderRun(c, id, "Not resumed: "+errs.Error()+".", shownErrors)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+next)
}
