package server

import (
	"context"
	"crypto/rand"
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
	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/live"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/review"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/share"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
	"github.com/proctor-dev/proctor/static"
	"github.com/proctor-dev/proctor/web"
)

// Config is what the server needs besides the store.
type Config struct {
	DataDir string       // shown in the page footer and the empty state
	Logger  *slog.Logger // request and error log; nil logs nothing
	// Launcher runs, reviews and launches (its Queue: nil, no launching;
	// its Board: approval requests of launched runs that wait for a
	// person). nil: the dashboard only reads.
	Launcher *launch.Launcher
	Reviewer string // the reviewer name a review form starts with
	// RequireAuth turns sign-in on even before any account exists (serving
	// beyond loopback); otherwise it is on exactly when accounts exist.
	RequireAuth bool
	// LocalSecret is what every request must carry while sign-in is off
	// (single-user, on loopback): loopback is not a login, every local
	// process and user reaches it. A browser brings it once in the address
	// (?token=…) and then keeps it in a cookie; a program sends it as
	// "Authorization: Bearer plk_…". "" refuses every such request.
	LocalSecret string
	TLS         bool // served over TLS: cookies are Secure, HSTS is sent
	// Key signs CSRF tokens; it should outlive the process (serve keeps it
	// in the data folder) so open forms survive a restart. nil: a random key
	// for this server's life.
	Key []byte
	// AllowedHosts are the host names (or addresses) requests may name in
	// their Host header besides localhost, 127.0.0.1 and ::1; any other Host
	// is refused before routing (DNS rebinding).
	AllowedHosts []string
	SessionTTL   time.Duration // how long a sign-in lasts; 0: 12 hours
	// SigninLimit and SigninWindow bound failed sign-ins per address, per
	// name from one address, and per name from addresses that failed; 0:
	// 10 per 15 minutes.
	SigninLimit  int
	SigninWindow time.Duration
	Now          func() time.Time // the clock for sessions and limits; nil: time.Now
	// MaxPushBytes bounds one pushed pack, MaxPushIncoming the bytes of
	// all unfinished pushes; 0 is push's default.
	MaxPushBytes, MaxPushIncoming int64
	// Live wakes a run page's event stream when the run has news (the
	// Runner's events and the Board's requests published to it); nil: the
	// stream reads the run's events once a second.
	Live *live.Broker
}

// Server is the dashboard and API.
type Server struct {
	cacheMu    sync.Mutex
	facets     cachedFacets // the runs list's filter choices (guarded by cacheMu)
	matrices   *suite.Matrices
	reviews    *review.Service
	runs       *runview.Service
	receiver   *push.Receiver // bundles pushed to this host
	shares     *share.Links   // read-only links to runs
	doneLinger time.Duration  // how long an event stream stays open after "done"
	store      *store.Store
	cfg        Config
	launcher   *launch.Launcher // nil: the server cannot launch runs
	runner     *run.Runner      // nil: the dashboard only reads
	queue      *jobs.Queue      // nil: no launching
	board      *approval.Board  // nil: no requests wait for a person
	limits     bundle.Limits
	log        *slog.Logger
	echo       *echo.Echo
	signins    *auth.Signins
	now        func() time.Time
	key        []byte          // signs CSRF tokens
	hosts      map[string]bool // Host names requests may use
	origins    *http.CrossOriginProtection
}

// New builds the server and its routes.
func New(st *store.Store, cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	limits := bundle.DefaultLimits()
	s := &Server{store: st, cfg: cfg, limits: limits, log: log, doneLinger: time.Minute, matrices: suite.NewMatrices(st),
		origins: http.NewCrossOriginProtection(), receiver: &push.Receiver{DataDir: cfg.DataDir, Store: st, MaxBytes: cfg.MaxPushBytes, MaxIncoming: cfg.MaxPushIncoming}}
	s.receiver.Sweep() // unfinished pushes abandoned before this start
	s.shares = &share.Links{Store: st, Now: func() time.Time { return s.now() }}
	if l := cfg.Launcher; l != nil {
		s.launcher, s.runner, s.queue, s.board = l, l.Runner, l.Queue, l.Board
	}
	s.reviews = &review.Service{Runner: s.runner, Store: st, Board: s.board, DataDir: cfg.DataDir, Limits: limits, Log: log}
	s.runs = &runview.Service{Store: st, Queue: s.queue, Board: s.board, Live: cfg.Live, DataDir: cfg.DataDir, Limits: limits}
	if s.runner != nil {
		s.runs.PushedTrees = s.runner.PushedTrees
	}
	s.key = cfg.Key
	if len(s.key) == 0 {
		s.key = make([]byte, auth.KeySize)
		rand.Read(s.key)
	}
	s.hosts = allowedHosts(cfg.AllowedHosts)
	s.now = cfg.Now
	if s.now == nil {
		s.now = time.Now
	}
	limit, window := cfg.SigninLimit, cfg.SigninWindow
	if limit <= 0 {
		limit = 10
	}
	if window <= 0 {
		window = 15 * time.Minute
	}
	ttl := cfg.SessionTTL
	if ttl <= 0 {
		ttl = 12 * time.Hour
	}
	s.signins = &auth.Signins{Store: st, Limiter: auth.NewLimiter(limit, window, s.now), TTL: ttl, Now: s.now}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Pre(s.checkHost)
	e.Use(s.recoverPanics, s.securityHeaders, s.logRequests, s.authenticate, s.csrf)
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
	view, review, admin := s.need(auth.Viewer), s.need(auth.Reviewer), s.need(auth.Admin)

	// Public.
	e.GET("/static/*", echo.WrapHandler(cacheFor(time.Hour, http.StripPrefix("/static/", http.FileServer(http.FS(assets))))))
	e.GET("/favicon.ico", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/static/favicon.svg") })
	e.GET("/healthz", s.healthz)
	e.GET("/signin", s.signinForm)
	e.POST("/signin", s.signin)
	e.POST("/signout", s.signout)
	e.GET("/share/:token", s.openShare) // a read-only link: its secret is the credential

	// Viewers read.
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/runs") }, view)
	e.GET("/runs", s.listRuns, view)
	e.GET("/runs/:id", s.showRun, view)
	e.GET("/runs/:id/events", s.runEvents, view)
	e.GET("/runs/:id/files/:name", s.runFile, view)
	e.GET("/runs/:id/patch.mbox", s.runMbox, view)
	e.GET("/runs/:id/export.html", s.exportRun, view)
	e.GET("/runs/:id/diff/:n", s.runDiffFile, view)
	e.GET("/runs/:id/diff/:n/lines", s.runDiffLines, view)
	e.GET("/runs/:id/:part", s.runEarlier, view) // transcript or timeline: the part before a loader
	e.GET("/runs/:id/calls", s.runCalls, view)
	e.GET("/runs/:id/calls/:seq/request", s.runRequest, view)
	e.GET("/sessions", s.listSessions, view)
	e.GET("/sessions/:id", s.showSession, view)
	e.GET("/problems", s.listProblems, view)
	e.GET("/rules", s.listRules, view)
	e.GET("/suites", s.listSuites, view)
	e.GET("/suites/:id", s.showSuite, view)
	e.GET("/scenarios/:id", s.showScenario, view)
	e.GET("/compare", s.showCompare, view)
	e.GET("/compare/runs", s.showRunPair, view)
	e.GET("/api/v1/compare", s.apiCompare, view)
	e.GET("/api/v1/push/:digest", s.pushStatus, s.mayPush)
	e.PUT("/api/v1/push/:digest", s.pushReceive, s.mayPush)
	e.GET("/api/v1/runs", s.apiListRuns, view)
	e.GET("/api/v1/runs/:id", s.apiGetRun, view)
	e.GET("/api/v1/runs/:id/decision", s.apiRunDecision, view)
	e.GET("/api/v1/suites/:id", s.apiGetSuite, view)
	e.GET("/api/v1/runs/:id/approvals", s.apiListApprovals, view)

	// Reviewers decide.
	e.POST("/runs/:id/review", s.reviewRun, review)
	e.POST("/runs/:id/draft", s.saveDraftForm, review)
	e.POST("/runs/:id/approvals/:n", s.decideApproval, review)
	e.POST("/runs/:id/requests/:r/comments/:n/replies", s.replyToComment, review)
	e.POST("/runs/:id/requests/:r/comments/:n/resolve", s.resolveComment, review)
	e.POST("/api/v1/runs/:id/review", s.apiReviewRun, review)
	e.POST("/api/v1/runs/:id/approvals/:n", s.apiDecideApproval, review)
	e.POST("/rules/:id/revoke", s.revokeRule, review)
	e.POST("/suites/:id/baseline", s.setBaseline, review)
	e.POST("/runs/:id/share", s.shareRun, review)
	e.POST("/suites/:id/share", s.shareSuite, review)
	e.GET("/shares", s.listShares, review)
	e.POST("/shares/:id/revoke", s.revokeShare, review)

	e.GET("/audit", s.auditPage, admin)
	if !s.launches() {
		return // a server that launches nothing has none of the routes that launch
	}
	e.POST("/runs/:id/scenario", s.makeScenario, review)
	e.POST("/api/v1/runs/:id/changes", s.apiRequestChanges, review)

	// Admins launch and stop; each is recorded in the audit log.
	e.GET("/launch", s.launchForm, admin)
	e.POST("/launch", s.audited("launch", s.launchRun), admin)
	e.POST("/demo", s.audited("demo", s.startDemo), admin)
	e.POST("/suites", s.audited("suites", s.launchSuite), admin)
	e.POST("/runs/:id/stop", s.audited("runs stop", s.stopRun), admin)
	e.POST("/runs/:id/resume", s.audited("runs resume", s.resumeRun), admin)
	e.POST("/runs/:id/session", s.continueAsSession, admin)
	e.POST("/sessions/:id/continue", s.audited("sessions continue", s.continueSession), admin)
	e.POST("/api/v1/runs", s.audited("runs", s.apiLaunchRun), admin)
	e.POST("/api/v1/suites", s.audited("suites", s.apiLaunchSuite), admin)
	e.POST("/api/v1/runs/:id/stop", s.audited("runs stop", s.apiStopRun), admin)
	e.POST("/api/v1/runs/:id/resume", s.audited("runs resume", s.apiResumeRun), admin)
}

// launches says whether this server launches runs: it has a launcher
// with a runner and a queue, and so the routes that launch and stop.
func (s *Server) launches() bool { return s.launcher != nil && s.runner != nil && s.queue != nil }

// audited records a successful launch or stop in the audit log as action,
// with the run or suite it acted on (its id, or where the answer sends the
// browser).
func (s *Server) audited(action string, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := h(c)
		if err != nil || c.Response().Status >= 400 {
			return err
		}
		object := c.Param("id")
		if object == "" {
			object = c.Response().Header().Get(echo.HeaderLocation)
		}
		if object == "" {
			object = c.Response().Header().Get("HX-Redirect")
		}
		s.audit(c, action, object, "")
		return nil
	}
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

// IsLoopback reports whether a listen address serves only this machine
// (127.0.0.0/8, ::1 or localhost). An address that is not host:port is an
// error.
func IsLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--addr %q: want host:port, e.g. 127.0.0.1:7070: %w", addr, err)
	}
	return IsLoopbackHost(host), nil
}

// IsLoopbackHost reports whether a host name or address is this machine's
// loopback.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (s *Server) meta(c echo.Context, title string, nav web.Nav) web.Meta {
	ctx := c.Request().Context()
	r := role(c)
	m := web.Meta{Title: title, Nav: nav, DataDir: s.cfg.DataDir, CSRF: csrfToken(c),
		Launches: s.queue != nil && s.runner != nil, CanReview: r.Allows(auth.Reviewer), IsAdmin: r.Allows(auth.Admin)}
	m.CanRun = m.Launches && m.IsAdmin
	if u, ok := principal(c); ok {
		m.User, m.Role = u.Name, u.Role
	} else if authOn(c) || r == "" {
		m.CanRun, m.CanReview, m.IsAdmin, m.Anonymous, m.DataDir = false, false, false, true, ""
		return m
	}
	if n, err := s.store.BrokenBundles(ctx); err == nil {
		m.Problems = n
	}
	if m.Launches {
		if err := s.runner.SandboxProblem(ctx); err != nil {
			m.Sandbox = err.Error()
		}
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
		_ = c.JSON(status, apiErrorBody{Error: msg})
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
// no framing, no content sniffing, no referrer leaking run ids; under TLS,
// HSTS.
func (s *Server) securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		if s.cfg.TLS {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
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

// ResumeQueued launches again the runs that were queued when the server
// stopped, in the order they were queued. It returns how many.
func (s *Server) ResumeQueued() (int, error) {
	if s.launcher == nil {
		return 0, nil
	}
	return s.launcher.Resume()
}
