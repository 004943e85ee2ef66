package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/auth"
)

const (
	csrfCookie = "proctor_csrf" // the browser's random id, not the token
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf"
	csrfKey    = "csrf"
)

// csrf refuses state-changing requests that another site could have made
// the browser send. Two checks, both needed:
//   - The browser must say the request comes from a page of this server
//     (http.CrossOriginProtection: Sec-Fetch-Site, else Origin against the
//     Host); a page on another port of the same host is another origin. A
//     request that says neither comes from a program, not a page, and still
//     needs its token.
//   - The token, in the X-CSRF-Token header (HTMX sends it on every
//     request) or the csrf form field, must be the HMAC under the server key
//     of the signed-in session, or, before sign-in and in single-user mode,
//     of the browser's random id cookie. A planted cookie does not help:
//     without the key nobody can make the token that matches it.
func (s *Server) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		binding := ""
		if ck, err := c.Cookie(sessionCookie); err == nil && hasPrincipal(c) {
			binding = "session:" + auth.HashSecret(ck.Value)
		} else if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 64 {
			binding = "browser:" + ck.Value
		} else {
			b := make([]byte, 32)
			rand.Read(b)
			id := hex.EncodeToString(b)
			c.SetCookie(&http.Cookie{Name: csrfCookie, Value: id, Path: "/", HttpOnly: true, Secure: s.cfg.TLS, SameSite: http.SameSiteStrictMode})
			binding = "browser:" + id
		}
		c.Set(csrfKey, auth.CSRFToken(s.key, binding))
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		// Without sign-in and without the local secret a request may do
		// nothing: the route refuses it (401) and says what it lacks.
		if !authOn(c) && role(c) == "" {
			return next(c)
		}
		// A request with an API token carries no ambient credential a
		// page on another site could borrow: it needs no CSRF token.
		if bearer, _ := c.Get(bearerKey).(bool); bearer {
			return next(c)
		}
		if s.origins.Check(c.Request()) != nil {
			return echo.NewHTTPError(http.StatusForbidden, "This request came from another site or port (its Origin is not this server), so it was refused. Open proctor's own page and try again.")
		}
		// Single-user JSON API calls need no token either: a page on
		// another site cannot send a JSON body without a CORS preflight,
		// which this server never grants. Once sign-in is on, a JSON call
		// riding on a session cookie must send the token like a form.
		// Nor PUT: no page can send one to another origin without a
		// preflight either (a push from 'proctor push').
		if !authOn(c) && strings.HasPrefix(c.Request().URL.Path, "/api/") && (c.Request().Method == http.MethodPut ||
			strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON)) {
			return next(c)
		}
		sent := c.Request().Header.Get(csrfHeader)
		if sent == "" {
			sent = c.FormValue(csrfField)
		}
		if !auth.CheckCSRFToken(s.key, binding, sent) {
			return echo.NewHTTPError(http.StatusForbidden, "This form is out of date or came from another site (the CSRF token does not match). Reload the page and try again.")
		}
		return next(c)
	}
}

func hasPrincipal(c echo.Context) bool { _, ok := principal(c); return ok }

func csrfToken(c echo.Context) string {
	t, _ := c.Get(csrfKey).(string)
	return t
}
