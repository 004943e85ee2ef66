package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// apiRun is a run in the JSON API's lists.
type apiRun struct {
	RunID          string        `json:"run_id"`
	SessionID      string        `json:"session_id,omitempty"`
	Kind           bundle.Kind   `json:"kind"`
	Status         bundle.Status `json:"status"`
	Stage          bundle.Stage  `json:"stage"`
	Task           string        `json:"task"`
	Model          string        `json:"model"`
	ModelProfile   string        `json:"model_profile,omitempty"`
	Agent          string        `json:"agent"`
	Scenario       string        `json:"scenario,omitempty"`
	ScenarioRepeat int           `json:"scenario_repeat,omitempty"`
	Source         string        `json:"source"`
	FailureDomain  string        `json:"failure_domain,omitempty"`
	FailureCode    string        `json:"failure_code,omitempty"`
	StartedAt      time.Time     `json:"started_at"`
	EndedAt        *time.Time    `json:"ended_at,omitempty"`
	DurationMS     int64         `json:"duration_ms,omitempty"`
	TotalTokens    int64         `json:"total_tokens"`
	ModelCalls     int64         `json:"model_calls"`
	ChangedFiles   int           `json:"changed_files"`
	ReviewState    string        `json:"review_state"`
	Snippet        string        `json:"snippet,omitempty"`
	URL            string        `json:"url"`
}

func toAPIRun(r store.RunSummary) apiRun {
	return apiRun{
		RunID: r.RunID, SessionID: r.SessionID, Kind: r.Kind, Status: r.Status, Stage: r.Stage, Task: r.Task,
		Model: r.ModelName, ModelProfile: r.ModelProfile, Agent: r.Agent, Scenario: r.ScenarioID, ScenarioRepeat: r.ScenarioRepeat,
		Source: r.SourceLocation, FailureDomain: r.FailureDomain, FailureCode: r.FailureCode,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, DurationMS: r.Duration().Milliseconds(),
		TotalTokens: r.TotalTokens, ModelCalls: r.ModelCalls, ChangedFiles: r.ChangedCount, ReviewState: r.ReviewState,
		Snippet: r.Snippet, URL: "/runs/" + r.RunID,
	}
}

type apiRunList struct {
	Runs []apiRun `json:"runs"`
	Next string   `json:"next,omitempty"`
	Prev string   `json:"prev,omitempty"` // pass as ?before= for the page before
}

type apiVerdict struct {
	Scenario     string               `json:"scenario"`
	Passed       bool                 `json:"passed"`
	FirstFailure string               `json:"first_failure,omitempty"`
	Aborted      string               `json:"aborted,omitempty"`
	Exchanges    int                  `json:"exchanges"`
	Results      []bundle.CheckResult `json:"results"`
}

type apiProblem struct {
	File    string `json:"file"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

type apiRunDetail struct {
	apiRun
	Receipt  bundle.Receipt `json:"receipt"`
	Verdict  *apiVerdict    `json:"verdict,omitempty"`
	Problems []apiProblem   `json:"problems"`
}

func (s *Server) apiListRuns(c echo.Context) error {
	f, err := runFilter(c)
	if err != nil {
		return err
	}
	page, err := s.store.ListRuns(c.Request().Context(), f)
	if errors.Is(err, store.ErrBadCursor) {
		return echo.NewHTTPError(http.StatusBadRequest, "after: not a cursor from this API's next field")
	}
	if err != nil {
		return err
	}
	out := apiRunList{Runs: make([]apiRun, 0, len(page.Runs)), Next: page.Next, Prev: page.Prev}
	for _, q := range s.queuedRuns(f) {
		out.Runs = append(out.Runs, apiRun{RunID: q.RunID, Kind: bundle.KindTask, Status: bundle.StatusQueued, Task: q.Title, StartedAt: q.Queued, URL: "/runs/" + q.RunID})
	}
	for _, r := range page.Runs {
		out.Runs = append(out.Runs, toAPIRun(r))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) apiGetRun(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "no run has the id "+strconv.Quote(id))
	}
	run, err := s.store.GetRun(c.Request().Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "run "+id+" is not indexed")
	}
	if err != nil {
		return err
	}
	out := apiRunDetail{apiRun: toAPIRun(run.RunSummary), Receipt: run.Receipt, Problems: []apiProblem{}}
	if v := run.Verdict; v != nil {
		out.Verdict = &apiVerdict{Scenario: v.Scenario, Passed: v.Passed, FirstFailure: v.FirstFailure, Aborted: v.Aborted, Exchanges: v.Exchanges, Results: run.Checks}
	}
	for _, p := range run.Problems {
		out.Problems = append(out.Problems, apiProblem{File: p.File, Field: p.Field, Message: p.Message})
	}
	return c.JSON(http.StatusOK, out)
}

// apiRunDecision is a run's decision as a CI job that lands it needs it
// (proctor apply --from): the review, the recorded diff, the accepted
// change.
func (s *Server) apiRunDecision(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "no run has the id "+strconv.Quote(id))
	}
	d, err := s.runs.ReviewedChange(c.Request().Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "run "+id+" is not indexed")
	}
	if err != nil {
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	}
	return c.JSON(http.StatusOK, d)
}
