package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/web"
)

func (s *Server) healthz(c echo.Context) error {
	if err := s.store.Ping(c.Request().Context()); err != nil {
		return c.JSON(http.StatusServiceUnavailable, health{Status: "unavailable", Error: "database: " + err.Error()})
	}
	return c.JSON(http.StatusOK, health{Status: "ok"})
}

// runFilter reads the runs-list filter from the query string.
func runFilter(c echo.Context) (store.RunFilter, error) {
	f := store.RunFilter{
		Status:   c.QueryParam("status"),
		Kind:     c.QueryParam("kind"),
		Scenario: c.QueryParam("scenario"),
		Model:    c.QueryParam("model"),
		Agent:    c.QueryParam("agent"),
		Review:   c.QueryParam("review"),
		Session:  c.QueryParam("session"),
		Suite:    c.QueryParam("suite"),
		Query:    c.QueryParam("q"),
		After:    c.QueryParam("after"),
		Before:   c.QueryParam("before"),
	}
	for _, d := range []struct {
		name string
		dst  *time.Time
		add  int
	}{{"from", &f.From, 0}, {"to", &f.To, 1}} {
		v := c.QueryParam(d.name)
		if v == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return f, echo.NewHTTPError(http.StatusBadRequest, d.name+": want a date like 2026-12-01, got "+strconv.Quote(v))
		}
		*d.dst = t.AddDate(0, 0, d.add) // "to" includes its whole day
	}
	var statuses []string
	for _, st := range bundle.Statuses() {
		statuses = append(statuses, string(st))
	}
	for _, q := range []struct {
		name    string
		value   string
		allowed []string
	}{
		{"status", f.Status, statuses},
		{"kind", f.Kind, []string{string(bundle.KindTask), string(bundle.KindScenario)}},
		{"review", f.Review, store.ReviewStates()},
		{"sort", c.QueryParam("sort"), []string{"newest", "oldest"}},
	} {
		if q.value != "" && !slices.Contains(q.allowed, q.value) {
			return f, echo.NewHTTPError(http.StatusBadRequest, q.name+": want one of "+strings.Join(q.allowed, ", ")+"; got "+strconv.Quote(q.value))
		}
	}
	f.Oldest = c.QueryParam("sort") == "oldest"
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return f, echo.NewHTTPError(http.StatusBadRequest, "limit: want a whole number from 1 to 500, got "+strconv.Quote(v))
		}
		f.Limit = n
	}
	return f, nil
}

func (s *Server) listRuns(c echo.Context) error {
	ctx := c.Request().Context()
	f, err := runFilter(c)
	if err != nil {
		return err
	}
	p := web.RunsPage{Meta: s.meta(c, "Runs", web.NavRuns), Filter: f, Statuses: bundle.Statuses()}
	hasRuns, err := s.store.HasRuns(ctx)
	if err != nil {
		return err
	}
	p.Queued = s.queuedRuns(f)
	p.Empty = !hasRuns && len(p.Queued) == 0
	p.Page, err = s.store.ListRuns(ctx, f)
	switch {
	case errors.Is(err, store.ErrBadCursor):
		p.Error = "This page link is out of date or was changed by hand; start again from the first page."
	case err != nil:
		return err
	}
	if isHTMX(c) {
		return render(c, http.StatusOK, web.RunsResults(p))
	}
	if p.Facets, err = s.runFacets(ctx); err != nil {
		return err
	}
	return render(c, http.StatusOK, web.RunsView(p))
}

// queuedRuns are the runs waiting in the launch queue, listed at the top
// of the first page of the newest runs when the filter lets queued runs
// through (no filter but status=queued).
func (s *Server) queuedRuns(f store.RunFilter) []web.QueuedRun {
	if s.queue == nil || f.After != "" || f.Before != "" || f.Oldest || f.Session != "" || f.Narrows() ||
		(f.Status != "" && f.Status != string(bundle.StatusQueued)) {
		return nil
	}
	var out []web.QueuedRun
	for _, j := range s.queue.Queued() {
		out = append(out, web.QueuedRun{RunID: j.RunID, Title: j.Title, Place: j.Place, Queued: j.Queued})
	}
	return out
}

// cachedFacets are the runs list's filter choices as read at a time.
type cachedFacets struct {
	facets store.Facets
	at     time.Time
}

// runFacets are the models and scenarios the runs list's filters offer,
// read from the index at most once a second: they change only when runs
// are indexed, and reading them costs as much as the rest of the page.
func (s *Server) runFacets(ctx context.Context) (store.Facets, error) {
	s.cacheMu.Lock()
	cached := s.facets
	s.cacheMu.Unlock()
	if !cached.at.IsZero() && time.Since(cached.at) < time.Second {
		return cached.facets, nil
	}
	f, err := s.store.RunFacets(ctx)
	if err != nil {
		return f, err
	}
	s.cacheMu.Lock()
	s.facets = cachedFacets{facets: f, at: time.Now()}
	s.cacheMu.Unlock()
	return f, nil
}

func (s *Server) showRun(c echo.Context) error {
	return s.renderRun(c, c.Param("id"), "", http.StatusOK)
}

// renderRun renders a run's page; a run launched here that has no bundle
// yet gets a page that waits for it.
func (s *Server) renderRun(c echo.Context, id, reviewErr string, status int) error {
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run has the id "+strconv.Quote(id)+".")
	}
	v, err := s.runs.Page(c.Request().Context(), id, c.QueryParam("find"))
	var waiting *runview.NotStarted
	switch {
	case errors.As(err, &waiting):
		j := waiting.Job
		return render(c, http.StatusOK, web.PendingView(web.PendingPage{Meta: s.meta(c, "Run "+id, web.NavRuns), RunID: id, Title: j.Title, State: string(j.State), Place: j.Place}))
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed. If its bundle is on disk, run proctor index on its folder.")
	case err != nil:
		return err
	}
	draft, restored := s.draft(c, id)
	p := web.NewRunPage(s.meta(c, "Run "+id, web.NavRuns), v, s.runner != nil, draft, c.QueryParam("view") == "split")
	if roots := s.scenarioRoots(); len(roots) > 0 {
		p.ScenarioFolder = roots[0]
	}
	p.ContinueAsSession = s.launcher != nil && s.runner != nil && v.Run != nil && s.runner.Records().Continuable(v.Run.Receipt)
	p.ReviewError, p.Reviewer, p.Restored = reviewErr, s.reviewerName(c), restored
	p.All = c.QueryParam("all") == "1"
	if p.CanRequestChanges() {
		p.Models, _ = s.models(true) // a models.yaml that cannot be read leaves the built-in ones
	}
	return render(c, status, web.RunView(p))
}

// runEarlier is the part of a run's transcript or timeline before the
// part the page has (?upto=): what its loader asks for.
func (s *Server) runEarlier(c echo.Context) error {
	id, what := c.Param("id"), c.Param("part")
	upto, err := strconv.Atoi(c.QueryParam("upto"))
	if !bundle.ValidID(id) || err != nil || upto < 0 || (what != "transcript" && what != "timeline") {
		return echo.NewHTTPError(http.StatusNotFound, "No such part of a run.")
	}
	v, err := s.runs.Page(c.Request().Context(), id, "")
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed.")
	case err != nil:
		return err
	}
	p := web.RunPage{Meta: s.meta(c, "Run "+id, web.NavRuns), View: v}
	if what == "timeline" {
		return render(c, http.StatusOK, web.TimelineBefore(p, upto))
	}
	return render(c, http.StatusOK, web.TranscriptBefore(p, upto))
}

// runCalls lists a run's recorded calls to its model.
func (s *Server) runCalls(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run has the id "+strconv.Quote(id)+".")
	}
	calls, probs, err := s.runs.Calls(c.Request().Context(), id)
	if err != nil {
		return runError(id, err)
	}
	return render(c, http.StatusOK, web.CallsView(web.CallsPage{Meta: s.meta(c, "Calls of run "+id, web.NavRuns), RunID: id, Calls: calls, Problems: probs}))
}

// runRequest is one recorded request of a run, rebuilt alone, as the
// agent sent it.
func (s *Server) runRequest(c echo.Context) error {
	id := c.Param("id")
	seq, err := strconv.ParseInt(c.Param("seq"), 10, 64)
	if !bundle.ValidID(id) || err != nil || seq < 1 {
		return echo.NewHTTPError(http.StatusNotFound, "No such call of a run.")
	}
	body, err := s.runs.Request(c.Request().Context(), id, seq)
	if err != nil {
		return runError(id, err)
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=\"%s-request-%d.json\"", id, seq))
	return c.Blob(http.StatusOK, "application/json", body)
}

// runError answers for a run's files that could not be read: 404 for a
// run or call that is not there, 500 with what was wrong otherwise.
func runError(id string, err error) error {
	var unreadable *runview.Unreadable
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed.")
	case errors.Is(err, runview.ErrNoCall):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.As(err, &unreadable):
		return echo.NewHTTPError(http.StatusNotFound, unreadable.Error())
	}
	return echo.NewHTTPError(http.StatusInternalServerError, fmt.Sprintf("run %s: %v", id, err))
}

// runDiffFile shows file number n of a run's diff: the piece a large diff's
// page loads when the file is opened (HTMX), or a page of its own.
func (s *Server) runDiffFile(c echo.Context) error {
	id := c.Param("id")
	n, err := strconv.Atoi(c.Param("n"))
	if !bundle.ValidID(id) || err != nil || n < 0 {
		return echo.NewHTTPError(http.StatusNotFound, "No such file of a diff.")
	}
	files, run, err := s.runDiff(c, id)
	if err != nil {
		return err
	}
	if n >= len(files) {
		return echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("Run %s's diff has %d files; there is no file %d.", id, len(files), n))
	}
	f, split := web.BuildFile(files[n], n), c.QueryParam("view") == "split"
	f.Review = web.ByParts(s.meta(c, "", web.NavRuns), run.Receipt) && s.runner != nil
	f.Draft, _ = s.draft(c, id)
	f.RunID = id
	if isHTMX(c) {
		return render(c, http.StatusOK, web.DiffFileBody(f, split))
	}
	return render(c, http.StatusOK, web.DiffFileView(web.DiffFilePage{Meta: s.meta(c, f.Path+" — run "+id, web.NavRuns), RunID: id, File: f, Split: split}))
}

// runDiffLines shows lines of file number n of a run's diff that the diff
// leaves out (?from=, ?to= old line numbers, ?shift= to the new ones,
// ?dir=up toward the hunk below): the rows a gap's button loads.
func (s *Server) runDiffLines(c echo.Context) error {
	id := c.Param("id")
	n, err := strconv.Atoi(c.Param("n"))
	if !bundle.ValidID(id) || err != nil || n < 0 {
		return echo.NewHTTPError(http.StatusNotFound, "No such file of a diff.")
	}
	var g web.Gap
	for name, v := range map[string]*int{"from": &g.From, "to": &g.To, "shift": &g.Shift} {
		if *v, err = strconv.Atoi(c.QueryParam(name)); err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%s=%q: want a line number", name, c.QueryParam(name)))
		}
	}
	f, old, err := s.runs.OldLines(c.Request().Context(), id, n)
	var unreadable *runview.Unreadable
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed.")
	case errors.Is(err, runview.ErrNoDiff):
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	case errors.As(err, &unreadable):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, unreadable.Error())
	case err != nil:
		return err
	}
	up, split := c.QueryParam("dir") == "up", c.QueryParam("view") == "split"
	df := web.DiffFile{Path: f.Path(), Index: n, RunID: id} // what the rows and their button need: no hunks
	rows, rest := web.Expand(df.Path, old, g, up)
	return render(c, http.StatusOK, web.GapRows(df, rows, rest, up, split))
}

// runDiff reads an indexed run's diff (runview.Service.Diff), its errors
// as HTTP errors.
func (s *Server) runDiff(c echo.Context, id string) ([]patch.File, *store.RunDetail, error) {
	files, detail, err := s.runs.Diff(c.Request().Context(), id)
	var unreadable *runview.Unreadable
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed.")
	case errors.Is(err, runview.ErrNoDiff):
		return nil, nil, echo.NewHTTPError(http.StatusNotFound, "Run "+id+" has no diff.")
	case errors.As(err, &unreadable):
		return nil, nil, echo.NewHTTPError(http.StatusUnprocessableEntity, unreadable.Error())
	}
	return files, detail, err
}

func (s *Server) listSessions(c echo.Context) error {
	ctx := c.Request().Context()
	page, err := s.store.ListSessions(ctx, c.QueryParam("after"), 50)
	if errors.Is(err, store.ErrBadCursor) {
		return echo.NewHTTPError(http.StatusBadRequest, "This page link is out of date or was changed by hand; start again from the first page.")
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.SessionsView(web.SessionsPage{Meta: s.meta(c, "Sessions", web.NavSessions), Page: page}))
}

func (s *Server) showSession(c echo.Context) error {
	return s.renderSession(c, c.Param("id"), web.LaunchValues{}, nil, http.StatusOK)
}

func (s *Server) renderSession(c echo.Context, id string, v web.LaunchValues, errs map[string]string, status int) error {
	ctx := c.Request().Context()
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No session has the id "+strconv.Quote(id)+".")
	}
	sess, err := s.store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No session "+id+" is indexed.")
	}
	if err != nil {
		return err
	}
	p := web.SessionPage{Meta: s.meta(c, "Session "+id, web.NavSessions), Session: sess, Values: v, Errors: errs, Pushed: bundle.PushedSession(sess.BundlePath)}
	p.Meta.CanRun = p.Meta.CanRun && s.queue != nil
	if p.Meta.CanRun {
		p.Roots = s.launcher.SourceRoots
	}
	p.Models, _ = s.models(true)
	if s.runner != nil {
		ids := make([]string, len(sess.Runs))
		for i, sr := range sess.Runs {
			ids[i] = sr.RunID
		}
		p.Requests = s.runner.Records().SessionRequests(ids)
	}
	return render(c, status, web.SessionView(p))
}

func (s *Server) listProblems(c echo.Context) error {
	ctx := c.Request().Context()
	probs, err := s.store.ListProblems(ctx)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ProblemsView(web.ProblemsPage{Meta: s.meta(c, "Index problems", web.NavProblems), Problems: probs}))
}

// runFile serves one file of a run's bundle as plain text. Only the bundle's
// own files are served, each opened inside the bundle folder (a symlink out
// of it is refused).
// runMbox offers an approved git run's change as one commit on top of its
// pinned commit, in the mbox format git am reads.
func (s *Server) runMbox(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) || s.runner == nil {
		return echo.NewHTTPError(http.StatusNotFound, "No such run.")
	}
	mbox, err := s.runner.Records().Mbox(c.Request().Context(), id)
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	c.Response().Header().Set("Content-Disposition", "attachment; filename=\""+id+".mbox\"")
	return c.Blob(http.StatusOK, "application/mbox", mbox)
}

func (s *Server) runFile(c echo.Context) error {
	id, name := c.Param("id"), c.Param("name")
	if !bundle.ValidID(id) || !slices.Contains(bundle.FileNames(), name) {
		return echo.NewHTTPError(http.StatusNotFound, "No such file.")
	}
	run, err := s.store.GetRun(c.Request().Context(), id)
	if err != nil {
		return err
	}
	dir, err := bundle.Readable(run.BundlePath, bundle.UnpackCache(s.cfg.DataDir))
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, name+" cannot be shown: "+err.Error())
	}
	f, err := bundle.Open(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return echo.NewHTTPError(http.StatusNotFound, "Run "+id+" has no "+name+".")
	}
	if err != nil {
		return echo.NewHTTPError(http.StatusForbidden, name+" cannot be shown: "+err.Error())
	}
	defer f.Close()
	c.Response().Header().Set("Content-Disposition", "inline; filename=\""+name+"\"")
	return c.Stream(http.StatusOK, "text/plain; charset=utf-8", f)
}
