package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/web"
)

// runEvents streams a run's events as server-sent events, each an HTML
// timeline item, from the one after the last seen (Last-Event-ID or
// ?after=), "reload" when the pending approval requests or the status
// differ from the page's (?shown=, ?status=), then "done" when the run has
// ended. Reconnecting
// resumes with no duplicates and no gaps, because every event carries its
// seq as its id.
func (s *Server) runEvents(c echo.Context) error {
	id := c.Param("id")
	if !bundle.ValidID(id) {
		return echo.NewHTTPError(http.StatusNotFound, "No run has the id "+strconv.Quote(id)+".")
	}
	after, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
	if v := c.Request().Header.Get("Last-Event-ID"); v != "" {
		after, _ = strconv.ParseInt(v, 10, 64)
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ctx := c.Request().Context()
	err := s.runs.Follow(ctx, id, after, c.QueryParam("shown"), c.QueryParam("status"), func(u runview.Update) error {
		switch {
		case u.Event != nil:
			var html bytes.Buffer
			if err := web.TimelineItem(u.First, *u.Event).Render(ctx, &html); err != nil {
				return err
			}
			fmt.Fprintf(w, "id: %d\nevent: ev\ndata: %s\n\n", u.Event.Seq, strings.ReplaceAll(html.String(), "\n", ""))
		case u.Reload:
			fmt.Fprint(w, "event: reload\ndata: reload\n\n")
		case u.Done:
			fmt.Fprint(w, "event: done\ndata: done\n\n")
		default:
			fmt.Fprint(w, ": keep-alive\n\n")
		}
		w.Flush()
		return nil
	})
	if err == nil { // done: closing is left to the page, which reloads (a stream the server closed would make the browser reconnect)
		select {
		case <-ctx.Done():
		case <-time.After(s.doneLinger):
		}
	}
	return nil
}
