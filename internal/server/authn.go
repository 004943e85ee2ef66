package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/web"
)

const (
	sessionCookie = "proctor_session"
	userKey       = "user"    // the signed-in store.User, when auth is on
	bearerKey     = "bearer"  // true when the request carried an API token (or the local secret in its header)
	authOnKey     = "auth-on" // true when accounts exist
	localKey      = "local"   // true when sign-in is off and the request carried the local secret
)

// LocalCookie is the cookie a browser keeps the local secret in.
const LocalCookie = "proctor_local"

// principal is the signed-in user of the request, if auth is on and someone
// signed in.
func principal(c echo.Context) (store.User, bool) {
	u, ok := c.Get(userKey).(store.User)
	return u, ok
}

func authOn(c echo.Context) bool { on, _ := c.Get(authOnKey).(bool); return on }

// role is what the request may do: when auth is off (single-user on
// loopback), everything if it carried the local secret; else the
// signed-in user's role; else nothing.
func role(c echo.Context) auth.Role {
	if !authOn(c) {
		if local, _ := c.Get(localKey).(bool); local {
			return auth.Admin
		}
		return ""
	}
	if u, ok := principal(c); ok {
		return auth.Role(u.Role)
	}
	return ""
}

// authenticate decides whether auth is on (any account exists, or the server
// was told to require it) and, if so, who the request comes from: a session
// cookie, or an API token in "Authorization: Bearer".
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		on := s.cfg.RequireAuth
		if !on {
			users, _, err := s.store.CountUsers(ctx)
			if err != nil {
				return fmt.Errorf("check for accounts: %w", err)
			}
			on = users > 0
		}
		c.Set(authOnKey, on)
		if !on {
			return s.checkLocal(c, next)
		}
		now := s.now()
		if h := c.Request().Header.Get(echo.HeaderAuthorization); h != "" {
			secret, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || !strings.HasPrefix(secret, auth.TokenPrefix) {
				return apiError(c, http.StatusUnauthorized, "Authorization: want \"Bearer ptk_…\", a token from 'proctor token create'", nil)
			}
			u, err := s.store.LookupAPIToken(ctx, auth.HashSecret(secret), now)
			if errors.Is(err, store.ErrNotFound) {
				return apiError(c, http.StatusUnauthorized, "the API token is unknown or revoked, or its user is disabled", nil)
			}
			if err != nil {
				return err
			}
			c.Set(userKey, u)
			c.Set(bearerKey, true)
			return next(c)
		}
		if ck, err := c.Cookie(sessionCookie); err == nil && strings.HasPrefix(ck.Value, auth.SessionPrefix) {
			ws, err := s.store.LookupWebSession(ctx, auth.HashSecret(ck.Value), now)
			switch {
			case err == nil:
				c.Set(userKey, ws.User)
			case errors.Is(err, store.ErrNotFound):
				s.clearSessionCookie(c)
			default:
				return err
			}
		}
		return next(c)
	}
}

// checkLocal marks a request that carries the local secret (sign-in is
// off): in its Authorization header, its cookie, or — a browser opening
// the address serve printed — in ?token=, which is moved into the cookie
// and out of the address (a page's address ends up in history and logs).
func (s *Server) checkLocal(c echo.Context, next echo.HandlerFunc) error {
	secret := s.cfg.LocalSecret
	is := func(v string) bool {
		return secret != "" && subtle.ConstantTimeCompare([]byte(v), []byte(secret)) == 1
	}
	r := c.Request()
	if h := r.Header.Get(echo.HeaderAuthorization); h != "" {
		if sent, ok := strings.CutPrefix(h, "Bearer "); ok && is(sent) {
			c.Set(localKey, true)
			c.Set(bearerKey, true)
		}
		return next(c)
	}
	if ck, err := c.Cookie(LocalCookie); err == nil && is(ck.Value) {
		c.Set(localKey, true)
	}
	if token := c.QueryParam("token"); token != "" && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/share/") && is(token) {
		c.SetCookie(&http.Cookie{Name: LocalCookie, Value: secret, Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true, Secure: s.cfg.TLS, SameSite: http.SameSiteLaxMode})
		q := r.URL.Query()
		q.Del("token")
		to := r.URL.Path
		if len(q) > 0 {
			to += "?" + q.Encode()
		}
		return c.Redirect(http.StatusSeeOther, to)
	}
	return next(c)
}

// localSecretNeeded is the answer to a request without the local secret.
func localSecretNeeded(c echo.Context) error {
	const msg = "This proctor dashboard needs its secret: open the address 'proctor serve' printed when it started (it ends in ?token=plk_…), " +
		"or send \"Authorization: Bearer plk_…\" with the secret from local.secret in serve's data folder (readable by its user only)."
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		return apiError(c, http.StatusUnauthorized, msg, nil)
	}
	return echo.NewHTTPError(http.StatusUnauthorized, msg)
}

// need is the middleware of a route that only a role allowing need may use.
func (s *Server) need(need auth.Role) echo.MiddlewareFunc {
	return func(h echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return s.allow(c, need, h) }
	}
}

// allow runs h when the request's role allows need, and otherwise sends
// the visitor to sign in or refuses.
func (s *Server) allow(c echo.Context, need auth.Role, h echo.HandlerFunc) error {
	if pushOnly(c) {
		return apiError(c, http.StatusForbidden, "this token may only push bundles (proctor push, /api/v1/push); use a token made without --push", nil)
	}
	have := role(c)
	if have.Allows(need) {
		return h(c)
	}
	if !authOn(c) {
		return localSecretNeeded(c)
	}
	if have == "" { // nobody signed in
		if strings.HasPrefix(c.Request().URL.Path, "/api/") {
			return apiError(c, http.StatusUnauthorized, "sign in first: send \"Authorization: Bearer ptk_…\" (see 'proctor token create')", nil)
		}
		next := c.Request().URL.RequestURI()
		if c.Request().Method != http.MethodGet {
			next = "/runs"
		}
		to := "/signin?next=" + url.QueryEscape(next)
		if c.Request().Header.Get("HX-Request") == "true" {
			c.Response().Header().Set("HX-Redirect", to)
			return c.NoContent(http.StatusUnauthorized)
		}
		if c.Request().Method != http.MethodGet {
			return echo.NewHTTPError(http.StatusUnauthorized, "Your session has ended. Sign in again, then repeat what you did.")
		}
		return c.Redirect(http.StatusSeeOther, to)
	}
	return echo.NewHTTPError(http.StatusForbidden, fmt.Sprintf("Your role (%s) cannot do this: it needs %s. An admin can change roles with 'proctor user role'.", have, need))
}

// decider is who a decision is recorded as: the signed-in user when auth is
// on (never a form field), else the name given.
func (s *Server) decider(c echo.Context, given string) string {
	if u, ok := principal(c); ok {
		return u.Name
	}
	return strings.TrimSpace(given)
}

// actor is who the audit log says did what the request does: the signed-in
// user; in single-user mode "local:" and the name the decision is recorded
// under (decided, when the request decides something), else the reviewer
// name this browser uses.
func (s *Server) actor(c echo.Context, decided string) string {
	if u, ok := principal(c); ok {
		return u.Name
	}
	if authOn(c) {
		return "anonymous" // not signed in: a failed or limited sign-in
	}
	if decided = strings.TrimSpace(decided); decided == "" {
		decided = s.reviewerName(c)
	}
	return "local:" + decided
}

// audit records what a signed-in person did; it never fails the request.
func (s *Server) audit(c echo.Context, action, object, detail string) {
	s.auditAs(c, s.actor(c, ""), action, object, detail)
}

// auditAs is audit for an actor the caller names.
func (s *Server) auditAs(c echo.Context, actor, action, object, detail string) {
	if err := s.store.Audit(context.WithoutCancel(c.Request().Context()), store.AuditEntry{Actor: actor, Action: action, Object: object, Detail: detail, Address: clientAddr(c)}); err != nil {
		s.log.Warn("audit", "action", action, "object", object, "err", err)
	}
}

// clientAddr is the peer's IP address. X-Forwarded-For is ignored: proctor is
// served directly, and a header would let anyone pick their own address.
func clientAddr(c echo.Context) string {
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		return c.Request().RemoteAddr
	}
	return host
}

func (s *Server) signinForm(c echo.Context) error {
	if !authOn(c) {
		return c.Redirect(http.StatusSeeOther, "/runs")
	}
	return render(c, http.StatusOK, web.SigninView(web.SigninPage{Meta: s.meta(c, "Sign in", ""), Next: safeNext(c.QueryParam("next"))}))
}

func (s *Server) signin(c echo.Context) error {
	if !authOn(c) {
		return c.Redirect(http.StatusSeeOther, "/runs")
	}
	var f struct {
		User     string `form:"user"`
		Password string `form:"password"`
		Next     string `form:"next"`
	}
	if err := c.Bind(&f); err != nil {
		return err
	}
	name, next := strings.TrimSpace(f.User), safeNext(f.Next)
	page := web.SigninPage{Meta: s.meta(c, "Sign in", ""), Next: next, User: name}
	sess, err := s.signins.SignIn(c.Request().Context(), name, f.Password, clientAddr(c))
	var limited *auth.Limited
	switch {
	case errors.As(err, &limited):
		s.audit(c, "signin-limited", name, "")
		c.Response().Header().Set("Retry-After", fmt.Sprint(int(limited.Wait.Seconds())+1))
		page.Error = fmt.Sprintf("Too many failed sign-ins. Try again in %s.", limited.Wait.Round(time.Second)+time.Second)
		return render(c, http.StatusTooManyRequests, web.SigninView(page))
	case errors.Is(err, auth.ErrWrongPassword):
		s.audit(c, "signin-failed", name, "")
		page.Error = "Wrong user name or password." // the same for an unknown user, a wrong password and a disabled account
		return render(c, http.StatusUnauthorized, web.SigninView(page))
	case err != nil:
		return err
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: sess.Secret, Path: "/", Expires: sess.Expires, HttpOnly: true, Secure: s.cfg.TLS, SameSite: http.SameSiteLaxMode})
	c.Set(userKey, sess.User)
	s.audit(c, "signin", sess.User.Name, "")
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) signout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil {
		if err := s.store.DeleteWebSession(c.Request().Context(), auth.HashSecret(ck.Value)); err != nil {
			return err
		}
	}
	if u, ok := principal(c); ok {
		s.audit(c, "signout", u.Name, "")
	}
	s.clearSessionCookie(c)
	return c.Redirect(http.StatusSeeOther, "/signin")
}

func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.cfg.TLS, SameSite: http.SameSiteLaxMode})
}

// safeNext keeps a post-sign-in redirect on this site: a path that starts
// with one '/' followed by a character that is not '/', '\\' or a control
// character, and holds no control character anywhere (browsers drop tabs
// and newlines, so "/\t/host" would become "//host"). Anything else goes to
// /runs.
func safeNext(next string) string {
	if len(next) < 2 || next[0] != '/' || next[1] == '/' || next[1] == '\\' {
		return "/runs"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "/runs"
		}
	}
	return next
}

func (s *Server) auditPage(c echo.Context) error {
	var before int64
	if b := c.QueryParam("before"); b != "" {
		if _, err := fmt.Sscan(b, &before); err != nil || before < 0 {
			return echo.NewHTTPError(http.StatusBadRequest, "before: want an entry number, got "+b)
		}
	}
	entries, next, err := s.store.ListAudit(c.Request().Context(), before, 100)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AuditView(web.AuditPage{Meta: s.meta(c, "Audit log", web.NavAudit), Entries: entries, Next: next}))
}
