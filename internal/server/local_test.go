package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/server"
)

// A single-user dashboard on loopback answers nobody without its secret:
// loopback is not a login, every local process and user reaches it. Every
// route but the public ones refuses a request without it (401), from
// whatever address, with a wrong one, and with none configured; the
// secret works as a cookie, as a bearer token, and in the address serve
// prints, which sets the cookie and leaves the address.
func TestTheLoopbackDashboardNeedsItsSecret(t *testing.T) {
	const run = "20261201-093012-k3f9qa"
	data, noneData := t.TempDir(), t.TempDir()
	s, _, st := newServerWith(t, true, server.Config{Key: testKey, DataDir: data, Launcher: launching(t, data)})
	none := server.New(st, server.Config{Key: testKey, DataDir: noneData, Launcher: launching(t, noneData)}) // no secret: nothing opens it
	routes := routeTable(run)
	for _, r := range s.Routes() {
		if _, ok := routes[r]; !ok {
			t.Errorf("route %s has no entry in routeTable; add one", r)
		}
	}
	send := func(h http.Handler, method, target, addr string, set func(*http.Request)) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://localhost"+target, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if strings.HasSuffix(target, "/events") { // an event stream stays open: hang up soon
			ctx, cancel := context.WithTimeout(req.Context(), 300*time.Millisecond)
			defer cancel()
			req = req.WithContext(ctx)
		}
		req.RemoteAddr = addr
		if set != nil {
			set(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for key, rt := range routes {
		method := strings.Fields(key)[0]
		t.Run(key, func(t *testing.T) {
			for name, try := range map[string]struct {
				h   http.Handler
				set func(*http.Request)
			}{
				"no secret":             {s.Handler(), nil},
				"a wrong cookie":        {s.Handler(), func(r *http.Request) { r.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: testSecret + "x"}) }},
				"a wrong bearer":        {s.Handler(), func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.ToUpper(testSecret)) }},
				"a server with none":    {none.Handler(), func(r *http.Request) { r.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: ""}) }},
				"a token not in the UI": {s.Handler(), func(r *http.Request) { r.Header.Set("Authorization", "Bearer ptk_"+testSecret) }},
			} {
				for _, addr := range []string{"127.0.0.1:50000", "192.0.2.9:50000"} {
					rec := send(try.h, method, rt.target, addr, try.set)
					if refused := rec.Code == http.StatusUnauthorized; refused != (rt.need != "") {
						t.Errorf("%s from %s: %d, want 401 exactly when the route is not public", name, addr, rec.Code)
					}
					if rt.need != "" && !strings.Contains(rec.Body.String(), "needs its secret") {
						t.Errorf("%s from %s: the refusal does not say what to do: %.200s", name, addr, rec.Body.String())
					}
				}
			}
			for name, set := range map[string]func(*http.Request){
				"the cookie": func(r *http.Request) { r.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: testSecret}) },
				"the bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testSecret) },
			} {
				if rec := send(s.Handler(), method, rt.target, "127.0.0.1:50000", set); rec.Code == http.StatusUnauthorized {
					t.Errorf("with %s: 401 %.200s", name, rec.Body.String())
				}
			}
		})
	}
	// The address serve prints: the secret goes into the cookie and out of
	// the address, and the page then opens with the cookie.
	rec := send(s.Handler(), http.MethodGet, "/runs?status=failed&token="+testSecret, "127.0.0.1:50000", nil)
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != "/runs?status=failed" || strings.Contains(loc, "plk_") {
		t.Fatalf("the printed address: %d to %q", rec.Code, loc)
	}
	var cookie *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == server.LocalCookie {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != testSecret || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("the cookie the printed address sets: %+v", cookie)
	}
	if rec := send(s.Handler(), http.MethodGet, "/runs?status=failed", "127.0.0.1:50000", func(r *http.Request) { r.AddCookie(cookie) }); rec.Code != http.StatusOK {
		t.Fatalf("the page with the cookie: %d", rec.Code)
	}
	if rec := send(s.Handler(), http.MethodGet, "/runs?token=plk_wrong", "127.0.0.1:50000", nil); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) > 1 {
		t.Fatalf("a wrong secret in the address: %d %v", rec.Code, rec.Result().Cookies())
	}
}

// Once an account exists sign-in decides: the local secret opens nothing.
func TestTheLocalSecretOpensNothingOnceAccountsExist(t *testing.T) {
	a := newAuthServer(t, server.Config{})
	for _, set := range []func(*http.Request){
		func(r *http.Request) { r.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: testSecret}) },
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testSecret) },
	} {
		req := httptest.NewRequest(http.MethodGet, "http://localhost/api/v1/runs", nil)
		set(req)
		rec := httptest.NewRecorder()
		a.s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("%d, want 401", rec.Code)
		}
	}
}
