package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/review"
	"github.com/proctor-dev/proctor/web"
)

// apiLaunch is the body of POST /api/v1/runs.
type apiLaunch struct {
	Root         int      `json:"root"`
	Path         string   `json:"path"`
	Task         string   `json:"task"`
	Criteria     []string `json:"criteria"`
	OutOfScope   []string `json:"out_of_scope"`
	Model        string   `json:"model"`
	Script       string   `json:"script"`  // a model script under the source root, instead of model
	Agent        string   `json:"agent"`   // native (default), codex, or an agents.yaml name
	Repo         string   `json:"repo"`    // a git repository instead of path: https URL or owner/name
	Sandbox      string   `json:"sandbox"` // workspace (default), strict or off
	Ref          string   `json:"ref"`
	Commit       string   `json:"commit"`
	Checks       []string `json:"checks"`
	Allow        []string `json:"allow"`
	MaxTurns     int      `json:"max_turns"`
	MaxToolCalls int      `json:"max_tool_calls"`
	Verifier     string   `json:"verifier"`
}

type apiDecision struct {
	Decision review.Action `json:"decision"`
	Reviewer string        `json:"reviewer"`
	Reason   string        `json:"reason"`
	// Force approves a run that failed, errored or was interrupted (review
	// only; recorded on the receipt and in the audit log).
	Force bool `json:"force"`
	// Parts decides part by part (review only; with decision "approve"):
	// only the accepted hunks and files are applied.
	Parts []apiPart `json:"parts"`
}

// apiPart is the decision on one part of a diff: file and hunk as the diff
// numbers them from 0, hunk -1 for a whole file; edit the hunk's new side.
type apiPart struct {
	File   int     `json:"file"`
	Hunk   int     `json:"hunk"`
	Accept bool    `json:"accept"`
	Edit   *string `json:"edit"`
}

// readJSON decodes a request's JSON body into v. Its error is the API's
// answer (a 400 naming where the body is wrong and what it should look
// like), for the caller to return.
func readJSON(c echo.Context, v any, example string) error {
	err := json.NewDecoder(io.LimitReader(c.Request().Body, 1<<20)).Decode(v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := ""
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		msg = "request body: empty"
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("request body: invalid JSON at offset %d", syntax.Offset)
	case errors.As(err, &typ):
		msg = fmt.Sprintf("request body: %s: want %s, got %s", typ.Field, jsonKind(typ.Type), typ.Value)
	default:
		msg = "request body: cut short or not JSON"
	}
	return echo.NewHTTPError(http.StatusBadRequest, msg+"; want JSON like "+example)
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return "a number"
	}
}

func apiError(c echo.Context, status int, msg string, fields map[string]string) error {
	return c.JSON(status, apiErrorBody{Error: msg, Fields: fields})
}

func (s *Server) apiLaunchRun(c echo.Context) error {
	var in apiLaunch
	if err := readJSON(c, &in, `{"path": "…", "task": "…", "model": "…"}`); err != nil {
		return err
	}
	v := web.LaunchValues{Root: itoa(in.Root), Path: in.Path, Task: in.Task, Criteria: strings.Join(in.Criteria, "\n"),
		OutOfScope: strings.Join(in.OutOfScope, "\n"), Model: in.Model, Agent: in.Agent, Repo: in.Repo, Ref: in.Ref, Commit: in.Commit, Sandbox: in.Sandbox, Checks: strings.Join(in.Checks, "\n"), Allow: strings.Join(in.Allow, "\n")}
	if in.MaxTurns != 0 {
		v.MaxTurns = itoa(in.MaxTurns)
	}
	if in.MaxToolCalls != 0 {
		v.MaxToolCalls = itoa(in.MaxToolCalls)
	}
	v.Verifier, v.Script = in.Verifier, in.Script
	id, err := s.launcher.Launch(v)
	if errs := launch.Fields(err); errs != nil {
		return apiError(c, http.StatusUnprocessableEntity, "the run was not launched", errs)
	}
	return c.JSON(http.StatusAccepted, acceptedRun(id))
}

// apiResumeRun starts a run that goes on from an interrupted one.
func (s *Server) apiResumeRun(c echo.Context) error {
	var in struct {
		Model  string `json:"model"`
		Script string `json:"script"`
	}
	if err := readJSON(c, &in, `{"script": "…"} or {"model": "…"} or {}`); err != nil {
		return err
	}
	id, err := s.launcher.ResumeRun(c.Request().Context(), c.Param("id"), launch.Task{Model: in.Model, Script: in.Script})
	if errs := launch.Fields(err); errs != nil {
		return apiError(c, http.StatusUnprocessableEntity, "the run was not resumed", errs)
	}
	return c.JSON(http.StatusAccepted, acceptedRun(id))
}

// apiRequestChanges asks for changes of a run that awaits review: its
// summary and line comments become the agent's next turn in the run's
// session (launch.Launcher.RequestChanges).
func (s *Server) apiRequestChanges(c echo.Context) error {
	var in struct {
		Reviewer string           `json:"reviewer"`
		Summary  string           `json:"summary"`
		Comments []bundle.Comment `json:"comments"`
		Model    string           `json:"model"`
		Script   string           `json:"script"`
	}
	if err := readJSON(c, &in, `{"summary": "…", "comments": [{"path": "a.go", "line": 12, "text": "…"}, {"path": "a.go", "start_line": 3, "start_side": "old", "line": 5, "text": "…"}], "reviewer": "name", "script": "…"}`); err != nil {
		return err
	}
	who := s.decider(c, in.Reviewer)
	if who == "" || len(who) > 80 {
		return apiError(c, http.StatusBadRequest, "reviewer: give your name (at most 80 characters)", nil)
	}
	cr := bundle.ChangeRequest{By: who, At: time.Now().UTC(), Summary: in.Summary}
	for _, cm := range in.Comments { // what a request says of a thread is its place and text
		cr.Comments = append(cr.Comments, bundle.Comment{Path: cm.Path, Line: cm.Line, Side: cm.Side, StartLine: cm.StartLine, StartSide: cm.StartSide, Text: cm.Text})
	}
	next, err := s.launcher.RequestChanges(c.Param("id"), cr, launch.Task{Model: in.Model, Script: in.Script})
	if errs := launch.Fields(err); errs != nil {
		return apiError(c, http.StatusUnprocessableEntity, "no changes were requested", errs)
	}
	s.auditAs(c, s.actor(c, who), "request-changes", c.Param("id"), "next run "+next)
	return c.JSON(http.StatusAccepted, acceptedRun(next))
}

func (s *Server) apiStopRun(c echo.Context) error {
	id := c.Param("id")
	if s.queue.Stop(id) != nil {
		return apiError(c, http.StatusNotFound, "run "+id+" was not launched by this server, or has ended", nil)
	}
	return c.JSON(http.StatusAccepted, runStopping{RunID: id, Status: "stopping"})
}

func (s *Server) apiReviewRun(c echo.Context) error {
	id := c.Param("id")
	var in apiDecision
	if err := readJSON(c, &in, `{"decision": "approve", "reviewer": "name"}`); err != nil {
		return err
	}
	if in.Decision != review.Approve && in.Decision != review.Reject {
		return apiError(c, http.StatusBadRequest, "decision: want approve or reject", nil)
	}
	d := review.Diff{Approve: in.Decision == review.Approve, Reason: in.Reason, Force: in.Force}
	if in.Parts != nil {
		d.Parts = []patch.Choice{}
		for _, p := range in.Parts {
			d.Parts = append(d.Parts, patch.Choice{File: p.File, Hunk: p.Hunk, Accept: p.Accept, Edit: p.Edit})
		}
	}
	err := s.reviews.Decide(c.Request().Context(), id, s.who(c, s.decider(c, in.Reviewer)), d)
	var refused *review.Refused
	var invalid *review.Invalid
	switch {
	case errors.As(err, &refused):
		return apiError(c, http.StatusConflict, refused.Reason, nil)
	case errors.As(err, &invalid):
		return apiError(c, http.StatusBadRequest, invalid.Error(), nil)
	case errors.Is(err, review.ErrNoRun):
		return apiError(c, http.StatusNotFound, err.Error(), nil)
	case err != nil:
		return err
	}
	return s.apiGetRun(c)
}

func (s *Server) apiListApprovals(c echo.Context) error {
	out := approvalList{Approvals: []approvalItem{}}
	if s.board != nil {
		for _, r := range s.board.Pending(c.Param("id")) {
			out.Approvals = append(out.Approvals, approvalItem{ID: r.ID, CallID: r.CallID, Tool: r.Tool, Args: r.Args, Command: r.Command(), AskedAt: r.Asked})
		}
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) apiDecideApproval(c echo.Context) error {
	var in apiDecision
	if err := readJSON(c, &in, `{"decision": "approve", "reviewer": "name"}`); err != nil {
		return err
	}
	num, _ := strconv.ParseInt(c.Param("n"), 10, 64)
	if err := s.answer(c, c.Param("id"), num, in.Decision, s.decider(c, in.Reviewer), in.Reason); err != nil {
		if errors.Is(err, review.ErrNotWaiting) {
			return apiError(c, http.StatusConflict, "that request is no longer waiting: it was answered already, or timed out", nil)
		}
		return err
	}
	return c.JSON(http.StatusOK, approvalAnswered{RunID: c.Param("id"), ID: c.Param("n"), Decision: string(in.Decision)})
}

func itoa(n int) string { return strconv.Itoa(n) }
