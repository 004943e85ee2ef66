package server

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/web"
)

func (s *Server) launchForm(c echo.Context) error {
	return s.renderLaunch(c, web.LaunchValues{Root: "0", MaxTurns: ""}, nil, http.StatusOK)
}

func (s *Server) renderLaunch(c echo.Context, v web.LaunchValues, errs map[string]string, status int) error {
	if s.cfg.Queue == nil || s.cfg.Runner == nil {
		return echo.NewHTTPError(http.StatusNotFound, "This server cannot launch runs.")
	}
	p := web.LaunchPage{Meta: s.meta(c, "Launch a run", web.NavLaunch), Roots: s.cfg.SourceRoots, Values: v, Errors: errs}
	var err error
	if p.Models, err = s.models(); err != nil && (errs == nil || errs["model"] == "") {
		if p.Errors == nil {
			p.Errors = map[string]string{}
		}
		p.Errors["model"] = err.Error()
	}
	return render(c, status, web.LaunchView(p))
}

// models lists the model profiles of models.yaml (read fresh, so edits
// apply) and says where the file is; an error is a file that cannot be read.
func (s *Server) models() (web.Models, error) {
	if s.cfg.Profiles == nil {
		return web.Models{}, nil
	}
	ps, err := s.cfg.Profiles()
	if err != nil {
		return web.Models{}, err
	}
	m := web.Models{File: ps.Path}
	for _, pr := range ps.Profiles {
		m.Profiles = append(m.Profiles, pr.Name)
	}
	return m, nil
}

// sourceDir resolves the chosen folder under a source root, refusing
// anything that leads outside the root (absolute paths, "..", symlinks).
func (s *Server) sourceDir(rootField, rel string) (string, string, string) {
	root, rel, field, msg := s.openRoot(rootField, rel)
	if msg != "" {
		return "", field, msg
	}
	defer root.Close()
	info, err := root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "path", "no such folder under " + root.Name()
	case err != nil:
		return "", "path", "that folder leads outside the root (a symlink); choose a folder inside it"
	case !info.IsDir():
		return "", "path", "not a folder"
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root.Name(), rel))
	if err != nil {
		return "", "path", err.Error()
	}
	return real, "", ""
}

// readUnderRoot reads a file under a source root through an os.Root: a
// symlink out of the root is not followed.
func (s *Server) readUnderRoot(rootField, rel string) (string, []byte, string, string) {
	root, rel, field, msg := s.openRoot(rootField, rel)
	if msg != "" {
		return "", nil, field, msg
	}
	defer root.Close()
	data, err := root.ReadFile(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, "script", "no such file under " + root.Name()
	case err != nil:
		return "", nil, "script", "cannot read it (a file must be inside the root): " + err.Error()
	}
	return filepath.Join(root.Name(), rel), data, "", ""
}

// openRoot opens the chosen source root and checks that rel is a plain
// path inside it. It returns the field at fault and why.
func (s *Server) openRoot(rootField, rel string) (*os.Root, string, string, string) {
	i, err := strconv.Atoi(rootField)
	if err != nil || i < 0 || i >= len(s.cfg.SourceRoots) {
		return nil, "", "root", "choose one of the source roots"
	}
	rel = strings.TrimSpace(rel)
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return nil, "", "path", "give a folder relative to the root, not an absolute path"
	}
	if rel == "" {
		rel = "."
	}
	if !filepath.IsLocal(rel) {
		return nil, "", "path", `".." is not allowed: the folder must be inside the root`
	}
	root, err := os.OpenRoot(s.cfg.SourceRoots[i])
	if err != nil {
		return nil, "", "root", "the root cannot be read: " + err.Error()
	}
	return root, rel, "", ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// launchRun validates the launch form and queues the run.
func (s *Server) launchRun(c echo.Context) error {
	if s.cfg.Queue == nil || s.cfg.Runner == nil {
		return echo.NewHTTPError(http.StatusNotFound, "This server cannot launch runs.")
	}
	var v web.LaunchValues
	if err := c.Bind(&v); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	id, errs := s.launch(v)
	if len(errs) > 0 {
		return s.renderLaunch(c, v, errs, http.StatusUnprocessableEntity)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// launch validates a launch request and queues the run; it returns the run
// id, or the problems by field.
func (s *Server) launch(v web.LaunchValues) (string, map[string]string) {
	return s.launchAs(run.NewRunID(time.Now()), v)
}

// launchAs is launch under a given run id.
func (s *Server) launchAs(id string, v web.LaunchValues) (string, map[string]string) {
	errs := map[string]string{}
	src, field, msg := s.sourceDir(v.Root, v.Path)
	if msg != "" {
		errs[field] = msg
	}
	if strings.TrimSpace(v.Task) == "" {
		errs["task"] = "say what the agent should do"
	} else if len(v.Task) > 20000 {
		errs["task"] = "at most 20,000 characters"
	}
	b := bounds.Defaults()
	for key, val := range map[string]string{"max_turns": v.MaxTurns, "max_tool_calls": v.MaxToolCalls} {
		if strings.TrimSpace(val) != "" {
			if err := bounds.Set(&b, key, val, "form"); err != nil {
				errs[key] = strings.TrimPrefix(err.Error(), "form: "+key+": ")
			}
		}
	}
	choice, field, msg := s.modelChoice(v)
	if msg != "" {
		errs[field] = msg
	}
	var verifier *run.ModelChoice
	if v.Verifier != "" {
		m, msg := s.profile(v.Verifier)
		if msg != "" {
			errs["verifier"] = msg
		}
		verifier = &m
	}
	if len(errs) > 0 {
		return "", errs
	}
	policy := agent.Policy{Allow: lines(v.Allow)}
	var approver agent.Approver = policy
	if s.cfg.Board != nil {
		approver = agent.Chain{Policy: policy, Next: s.cfg.Board.For(id)}
	}
	forget := s.remember(queuedRecord{RunID: id, Kind: "task", Values: v})
	s.cfg.Queue.Submit(run.Spec{RunID: id, SourceDir: src, Task: strings.TrimSpace(v.Task), Criteria: lines(v.Criteria), OutOfScope: lines(v.OutOfScope),
		Model: choice, Bounds: b, Checks: lines(v.Checks), Verifier: verifier, Approver: approver,
		Started: forget, Dropped: forget}, strings.TrimSpace(v.Task))
	return id, nil
}

// modelChoice is the model a form asks for: a model script under a source
// root (v.Root, v.Script), or else the profile v.Model. A message names the
// field at fault.
func (s *Server) modelChoice(v web.LaunchValues) (run.ModelChoice, string, string) {
	if strings.TrimSpace(v.Script) == "" {
		choice, msg := s.profile(v.Model)
		return choice, "model", msg
	}
	if len(s.cfg.SourceRoots) == 0 {
		return run.ModelChoice{}, "script", "a model script is read from under a source root, and this server has none: start it with proctor serve --source-root DIR"
	}
	path, data, field, msg := s.readUnderRoot(v.Root, v.Script)
	switch {
	case msg != "" && field == "root":
		return run.ModelChoice{}, "root", msg
	case msg != "":
		return run.ModelChoice{}, "script", msg
	}
	sc, err := script.Parse(path, data)
	if err != nil {
		return run.ModelChoice{}, "script", err.Error()
	}
	return run.ModelChoice{Script: sc}, "", ""
}

// continueSession queues a new run of a session: the next message, over the
// same workspace and conversation.
func (s *Server) continueSession(c echo.Context) error {
	id := c.Param("id")
	if s.cfg.Queue == nil || s.cfg.Runner == nil || !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "This server cannot continue sessions.")
	}
	if _, err := s.cfg.Runner.LoadSession(id); err != nil {
		return echo.NewHTTPError(http.StatusNotFound, "Session "+id+" is not in this server's data folder.")
	}
	var form web.LaunchValues
	if err := c.Bind(&form); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	// A session's next run takes only these from the form.
	v := web.LaunchValues{Task: form.Task, Model: form.Model, Allow: form.Allow, Root: form.Root, Script: form.Script}
	errs := map[string]string{}
	if strings.TrimSpace(v.Task) == "" {
		errs["task"] = "write the next message"
	}
	choice, field, msg := s.modelChoice(v)
	if msg != "" {
		errs[field] = msg
	}
	if len(errs) > 0 {
		return s.renderSession(c, id, v, errs, http.StatusUnprocessableEntity)
	}
	runID := run.NewRunID(time.Now())
	policy := agent.Policy{Allow: lines(v.Allow)}
	var approver agent.Approver = policy
	if s.cfg.Board != nil {
		approver = agent.Chain{Policy: policy, Next: s.cfg.Board.For(runID)}
	}
	s.cfg.Queue.Submit(run.Spec{RunID: runID, Session: id, Task: strings.TrimSpace(v.Task), Model: choice, Bounds: bounds.Defaults(), Approver: approver}, strings.TrimSpace(v.Task))
	return c.Redirect(http.StatusSeeOther, "/runs/"+runID)
}

// profile resolves a model profile with its key; a message says what is
// wrong.
func (s *Server) profile(name string) (run.ModelChoice, string) {
	if s.cfg.Profiles == nil {
		return run.ModelChoice{}, "no models.yaml is configured"
	}
	ps, err := s.cfg.Profiles()
	if err != nil {
		return run.ModelChoice{}, err.Error()
	}
	p, err := ps.Find(name)
	if err != nil {
		return run.ModelChoice{}, err.Error()
	}
	getenv := s.cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	ep, err := p.Endpoint(getenv)
	if err != nil {
		return run.ModelChoice{}, err.Error()
	}
	return run.ModelChoice{Profile: &p, Endpoint: ep, Stream: p.Stream}, ""
}
