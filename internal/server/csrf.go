package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

const (
	csrfCookie = "proctor_csrf"
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf"
	csrfKey    = "csrf"
)

// csrf gives every browser a random token in a cookie and requires it back,
// in the X-CSRF-Token header (HTMX sends it on every request) or the csrf
// form field, on every request that changes state. A page on another site
// cannot read the cookie, so it cannot forge the token.
func csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		token := ""
		if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 64 {
			token = ck.Value
		} else {
			b := make([]byte, 32)
			rand.Read(b)
			token = hex.EncodeToString(b)
			c.SetCookie(&http.Cookie{Name: csrfCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		c.Set(csrfKey, token)
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		// A request with an API token carries no ambient credential a
		// page on another site could borrow: it needs no CSRF token.
		if bearer, _ := c.Get(bearerKey).(bool); bearer {
			return next(c)
		}
		// Single-user JSON API calls need no token either: a page on
		// another site cannot send a JSON body without a CORS preflight,
		// which this server never grants. Once sign-in is on, a JSON call
		// riding on a session cookie must send the token like a form.
		if !authOn(c) && strings.HasPrefix(c.Request().URL.Path, "/api/") && strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON) {
			return next(c)
		}
		sent := c.Request().Header.Get(csrfHeader)
		if sent == "" {
			sent = c.FormValue(csrfField)
		}
		if subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 {
			return echo.NewHTTPError(http.StatusForbidden, "This form is out of date or came from another site (the CSRF token does not match). Reload the page and try again.")
		}
		return next(c)
	}
}

func csrfToken(c echo.Context) string {
	t, _ := c.Get(csrfKey).(string)
	return t
}
