package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/static"
	"github.com/proctor-dev/proctor/web"
)

// ExportRun writes run id as one self-contained HTML file (its summary,
// checks, transcript and diff; the stylesheet inline, no script, nothing
// loaded from anywhere): for a bug report or a pull request, read offline
// without the host. runs reads the run; store.ErrNotFound when it is not
// indexed.
func ExportRun(ctx context.Context, runs *runview.Service, id string, now time.Time, w io.Writer) error {
	if !bundle.ValidID(id) {
		return fmt.Errorf("export run %q: not a run id: %w", id, store.ErrNotFound)
	}
	v, err := runs.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("export run %s: %w", id, err)
	}
	css, err := static.FS.ReadFile("style.css")
	if err != nil {
		return fmt.Errorf("export run %s: %w", id, err)
	}
	p := web.RunPage{View: v}
	if web.Inline(v.Files) {
		p.Diff = web.BuildDiff(v.Files)
	} else {
		p.Diff, p.DiffLazy = web.ListDiff(v.Files), true
	}
	return web.ExportView(p, string(css), now.UTC().Format("2006-01-02 15:04")).Render(ctx, w)
}

// exportPolicy is the Content-Security-Policy of a served export: its own
// inline stylesheet, and nothing loaded, run, framed or sent anywhere.
const exportPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// exportRun serves run id as the file ExportRun writes, to download.
func (s *Server) exportRun(c echo.Context) error {
	id := c.Param("id")
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().Header().Set("Content-Security-Policy", exportPolicy)
	c.Response().Header().Set(echo.HeaderContentDisposition, "attachment; filename="+strconv.Quote("proctor-run-"+id+".html"))
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run has the id "+strconv.Quote(id)+".")
	}
	if _, err := s.store.GetRun(c.Request().Context(), id); errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No run "+id+" is indexed.")
	}
	return ExportRun(c.Request().Context(), s.runs, id, s.now(), c.Response())
}
