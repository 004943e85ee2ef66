package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/static"
	"github.com/proctor-dev/proctor/web"
)

// Config is what the server needs besides the store.
type Config struct {
	DataDir  string          // shown in the page footer and the empty state
	Logger   *slog.Logger    // request and error log; nil logs nothing
	Runner   *run.Runner     // runs, reviews; nil: the dashboard only reads
	Queue    *jobs.Queue     // launches runs; nil: no demo button
	Board    *approval.Board // approval requests of launched runs that wait for a person
	Reviewer string          // the reviewer name a review form starts with
	// SourceRoots are the folders (absolute) launched runs may work on.
	SourceRoots []string
	// Profiles reads models.yaml, fresh for every form, so edits apply.
	Profiles func() (*model.Profiles, error)
	Getenv   func(string) string // where provider keys come from; nil: the process environment
	// ScenarioRoots are the folders of scenarios suites may be launched from.
	ScenarioRoots []string
	// Background is the server's lifetime, for work that outlives a request
	// (a suite); nil: never cancelled.
	Background context.Context
}

// Server is the dashboard and API.
type Server struct {
	cacheMu    sync.Mutex
	suiteCache map[string]cachedCells
	doneLinger time.Duration // how long an event stream stays open after "done"
	store      *store.Store
	cfg        Config
	limits     bundle.Limits
	log        *slog.Logger
	echo       *echo.Echo
}

// New builds the server and its routes.
func New(st *store.Store, cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{store: st, cfg: cfg, limits: bundle.DefaultLimits(), log: log, doneLinger: time.Minute, suiteCache: map[string]cachedCells{}}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.recoverPanics, securityHeaders, s.logRequests, csrf)
	s.routes(e)
	s.echo = e
	return s
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Routes lists the registered routes as "METHOD path", for tests and docs.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

func (s *Server) routes(e *echo.Echo) {
	assets, _ := fs.Sub(static.FS, ".")
	e.GET("/static/*", echo.WrapHandler(cacheFor(time.Hour, http.StripPrefix("/static/", http.FileServer(http.FS(assets))))))
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/runs") })
	e.GET("/favicon.ico", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/static/favicon.svg") })
	e.GET("/healthz", s.healthz)
	e.GET("/runs", s.listRuns)
	e.GET("/runs/:id", s.showRun)
	e.GET("/sessions", s.listSessions)
	e.GET("/sessions/:id", s.showSession)
	e.POST("/sessions/:id/continue", s.continueSession)
	e.GET("/problems", s.listProblems)
	e.GET("/suites", s.listSuites)
	e.POST("/suites", s.launchSuite)
	e.GET("/suites/:id", s.showSuite)
	e.GET("/scenarios/:id", s.showScenario)
	e.POST("/demo", s.startDemo)
	e.GET("/launch", s.launchForm)
	e.POST("/launch", s.launchRun)
	e.POST("/runs/:id/review", s.reviewRun)
	e.POST("/runs/:id/stop", s.stopRun)
	e.POST("/runs/:id/approvals/:call", s.decideApproval)
	e.GET("/runs/:id/events", s.runEvents)
	e.GET("/runs/:id/files/:name", s.runFile)
	e.GET("/api/v1/runs", s.apiListRuns)
	e.GET("/api/v1/runs/:id", s.apiGetRun)
	e.POST("/api/v1/runs", s.apiLaunchRun)
	e.POST("/api/v1/suites", s.apiLaunchSuite)
	e.GET("/api/v1/suites/:id", s.apiGetSuite)
	e.POST("/api/v1/runs/:id/stop", s.apiStopRun)
	e.POST("/api/v1/runs/:id/review", s.apiReviewRun)
	e.GET("/api/v1/runs/:id/approvals", s.apiListApprovals)
	e.POST("/api/v1/runs/:id/approvals/:call", s.apiDecideApproval)
}

// Serve serves on ln until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shut down: %w", err)
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// CheckLoopback refuses a listen address that is not on the loopback
// interface: until accounts exist, proctor serves only the machine it runs on.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: want host:port, e.g. 127.0.0.1:7070: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil || !ip.IsLoopback() {
		shown := host
		if shown == "" {
			shown = "every interface"
		}
		return fmt.Errorf("--addr %q listens on %s, which is not loopback; proctor has no sign-in yet, so it serves only 127.0.0.1, ::1 or localhost (LAN sharing with accounts is planned)", addr, shown)
	}
	return nil
}

func (s *Server) meta(c echo.Context, title string, nav web.Nav) web.Meta {
	ctx := c.Request().Context()
	m := web.Meta{Title: title, Nav: nav, DataDir: s.cfg.DataDir, CSRF: csrfToken(c), CanRun: s.cfg.Queue != nil && s.cfg.Runner != nil}
	if n, err := s.store.BrokenBundles(ctx); err == nil {
		m.Problems = n
	}
	return m
}

func render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

func isHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Boosted") != "true"
}

// handleError renders errors as a page, or as JSON under /api/.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status := http.StatusInternalServerError
	msg := "Something went wrong on the server; the log has the details."
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he):
		status = he.Code
		msg = fmt.Sprint(he.Message)
	case errors.Is(err, store.ErrNotFound):
		status, msg = http.StatusNotFound, "Not found."
	}
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		_ = c.JSON(status, map[string]string{"error": msg})
		return
	}
	title := http.StatusText(status)
	_ = render(c, status, web.ErrorView(web.ErrorPage{Meta: s.meta(c, title, ""), Status: status, Message: msg}))
}

func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in handler", "path", c.Request().URL.Path, "panic", r)
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		s.log.Debug("request", "method", c.Request().Method, "path", c.Request().URL.Path,
			"status", c.Response().Status, "duration", time.Since(start))
		return nil
	}
}

// securityHeaders sets the headers every response carries: no inline script,
// no framing, no content sniffing, no referrer leaking run ids.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		return next(c)
	}
}

func cacheFor(d time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}
