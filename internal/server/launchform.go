package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/web"
)

func (s *Server) launchForm(c echo.Context) error {
	return s.renderLaunch(c, web.LaunchValues{Root: "0", MaxTurns: ""}, nil, http.StatusOK)
}

func (s *Server) renderLaunch(c echo.Context, v web.LaunchValues, errs map[string]string, status int) error {
	p := web.LaunchPage{Meta: s.meta(c, "Launch a run", web.NavLaunch), Roots: s.launcher.SourceRoots, Values: v, Errors: errs}
	var err error
	if p.Models, err = s.models(false); err != nil && (errs == nil || errs["model"] == "") {
		if p.Errors == nil {
			p.Errors = map[string]string{}
		}
		p.Errors["model"] = err.Error()
	}
	p.Missing = s.launcher.MissingAgents()
	if p.Agents, err = s.launcher.AgentNames(); err != nil && (errs == nil || errs["agent"] == "") {
		if p.Errors == nil {
			p.Errors = map[string]string{}
		}
		p.Errors["agent"] = err.Error()
	}
	return render(c, status, web.LaunchView(p))
}

// models lists the model profiles of models.yaml (read fresh, so edits
// apply) and says where the file is; an error is a file that cannot be read.
// A form for a conversation's next message (followUp) offers only the
// built-in scripts that answer one.
func (s *Server) models(followUp bool) (web.Models, error) {
	var m web.Models
	builtins := demo.Builtins()
	if followUp {
		builtins = demo.FollowUps()
	}
	for _, b := range builtins {
		m.Builtins = append(m.Builtins, web.Option{Value: launch.BuiltinModel + b.Name, Label: b.Title})
	}
	if s.launcher == nil || s.launcher.Profiles == nil { // (the run, session and suites pages of a server that launches nothing)
		return m, nil
	}
	ps, err := s.launcher.Profiles()
	if err != nil {
		return m, err
	}
	m.File = ps.Path
	for _, pr := range ps.Profiles {
		m.Profiles = append(m.Profiles, pr.Name)
	}
	return m, nil
}

// launchRun validates the launch form and queues the run.
func (s *Server) launchRun(c echo.Context) error {
	var v web.LaunchValues
	if err := c.Bind(&v); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	id, err := s.launcher.Launch(v)
	if errs := launch.Fields(err); errs != nil {
		return s.renderLaunch(c, v, errs, shownErrors)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// continueSession queues a new run of a session: the next message, over the
// same workspace and conversation.
func (s *Server) continueSession(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No session "+id+".")
	}
	if _, err := s.runner.Records().LoadSession(id); errors.Is(err, records.ErrPushedSession) {
		return echo.NewHTTPError(http.StatusConflict, "Session "+id+" cannot be continued here: "+records.ErrPushedSession.Error()+".")
	} else if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "Session "+id+" is not in this server's data folder.")
	}
	var form web.LaunchValues
	if err := c.Bind(&form); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	// A session's next run takes only these from the form.
	v := web.LaunchValues{Task: form.Task, Model: form.Model, Allow: form.Allow, Root: form.Root, Script: form.Script}
	runID, err := s.launcher.Continue(id, v)
	if errs := launch.Fields(err); errs != nil {
		return s.renderSession(c, id, v, errs, shownErrors)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+runID)
}
