package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/static"
	"github.com/proctor-dev/proctor/web"
)

// ExportRun reads run id and returns it as one self-contained HTML file to
// render (its summary, checks, transcript and diff; the stylesheet inline,
// no script, nothing loaded from anywhere): for a bug report or a pull
// request, read offline without the host. store.ErrNotFound when the run
// is not indexed; nothing is written before the run is read.
func ExportRun(ctx context.Context, runs *runview.Service, id string, now time.Time) (templ.Component, error) {
	if !bundle.ValidID(id) {
		return nil, fmt.Errorf("export run %q: not a run id: %w", id, store.ErrNotFound)
	}
	v, err := runs.Run(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export run %s: %w", id, err)
	}
	// The whole diff, however large: the file cannot load a file later.
	p := web.RunPage{View: v, Detached: true, Diff: web.BuildDiff(v.Files)}
	return web.ExportView(p, exportStyle(), now.UTC().Format("2006-01-02 15:04")), nil
}

// exportStyle is the stylesheet a self-contained page holds inline.
func exportStyle() string {
	css, _ := static.FS.ReadFile("style.css") // embedded: it is there
	return string(css)
}

// exportPolicy is the Content-Security-Policy of a served export: its own
// inline stylesheet, and nothing loaded, run, framed or sent anywhere.
const exportPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// exportRun serves run id as the file ExportRun writes, to download.
func (s *Server) exportRun(c echo.Context) error {
	id := c.Param("id")
	page, err := ExportRun(c.Request().Context(), s.runs, id, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, "No run "+strconv.Quote(id)+" is indexed.")
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Security-Policy", exportPolicy)
	c.Response().Header().Set(echo.HeaderContentDisposition, "attachment; filename="+strconv.Quote("proctor-run-"+id+".html"))
	return render(c, http.StatusOK, page)
}
