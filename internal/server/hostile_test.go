package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/server"
)

// samplesServer is a server over the sample bundles with cfg, signing CSRF
// tokens with testKey.
func samplesServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = testKey
	}
	s, _, _ := newServerWith(t, true, cfg)
	return s
}

// send serves one request built by the caller.
func send(s *server.Server, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	withSecret(s).ServeHTTP(rec, req)
	return rec
}

func formPost(target string, form url.Values, cookies ...*http.Cookie) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://localhost"+target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

// A model chooses its tool-call ids. One that looks like a path must not
// steer the Approve button to another run's review.
func TestApprovalURLsNeverHoldTheModelsCallID(t *testing.T) {
	const waiting, other = "20261201-101544-m2x7pb", "20261201-141005-s4d5tb"
	board := approval.NewBoard(time.Minute, nil)
	s := samplesServer(t, server.Config{Launcher: &launch.Launcher{Board: board}})
	hostile := "x/../../../" + other + "/review"
	got := make(chan agent.Decision, 1)
	go func() {
		d, _ := board.For(waiting).Approve(context.Background(), agent.ApprovalRequest{CallID: hostile, Tool: "run_command", Args: `{"command":"make"}`})
		got <- d
	}()
	for len(board.Pending(waiting)) == 0 {
		time.Sleep(time.Millisecond)
	}
	page := get(t, s, "/runs/"+waiting).Body.String()
	box := page[strings.Index(page, `id="approvals"`):]
	box = box[:strings.Index(box, "</section>")]
	actions := regexp.MustCompile(`(?:action|hx-post)="([^"]*)"`).FindAllStringSubmatch(box, -1)
	if len(actions) < 2 {
		t.Fatalf("no approval form on the page:\n%.2000s", box)
	}
	for _, a := range actions {
		if a[1] != "/runs/"+waiting+"/approvals/1" {
			t.Errorf("approval form posts to %q, want /runs/%s/approvals/1", a[1], waiting)
		}
	}
	if !strings.Contains(box, "x/../../../"+other) {
		t.Error("the call id is not shown as text")
	}
	// The hostile id as a path reaches no request and no other route.
	browser := &http.Cookie{Name: "proctor_csrf", Value: testCSRF}
	token := auth.CSRFToken(testKey, "browser:"+testCSRF)
	for _, target := range []string{"/runs/" + waiting + "/approvals/" + url.PathEscape(hostile), "/runs/" + waiting + "/approvals/0", "/runs/" + other + "/approvals/1"} {
		rec := send(s, formPost(target, url.Values{"csrf": {token}, "decision": {"approve"}, "reviewer": {"eve"}}, browser))
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusConflict {
			t.Errorf("POST %s: %d, want 404 or 409", target, rec.Code)
		}
	}
	rec := send(s, formPost("/runs/"+waiting+"/approvals/1", url.Values{"csrf": {token}, "decision": {"approve"}, "reviewer": {"ana"}}, browser))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("approve by number: %d %s", rec.Code, rec.Body.String())
	}
	if d := <-got; !d.Approved || d.By != "ana" {
		t.Fatalf("decision %+v", d)
	}
}

// A page on another port of this host can set cookies for it (cookies do
// not keep ports apart) and submit a form with the value it chose. Neither
// a planted token nor a form from another origin gets through.
func TestCSRFPlantedTokenAndForeignOriginAreRefused(t *testing.T) {
	planted := strings.Repeat("a", 64)
	plantedCookie := &http.Cookie{Name: "proctor_csrf", Value: planted}
	browser := &http.Cookie{Name: "proctor_csrf", Value: testCSRF}
	good := auth.CSRFToken(testKey, "browser:"+testCSRF)
	s := samplesServer(t, server.Config{})
	tests := []struct {
		name   string
		req    *http.Request
		origin string
		want   int
	}{
		{"planted cookie and the same value in the form", formPost("/signout", url.Values{"csrf": {planted}}, plantedCookie), "", http.StatusForbidden},
		{"its own token", formPost("/signout", url.Values{"csrf": {good}}, browser), "http://localhost", http.StatusSeeOther},
		{"its own token from another port", formPost("/signout", url.Values{"csrf": {good}}, browser), "http://localhost:9999", http.StatusForbidden},
		{"its own token, Origin null", formPost("/signout", url.Values{"csrf": {good}}, browser), "null", http.StatusForbidden},
		{"its own token, a program (no Origin)", formPost("/signout", url.Values{"csrf": {good}}, browser), "", http.StatusSeeOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.origin != "" {
				tc.req.Header.Set("Origin", tc.origin)
			}
			if rec := send(s, tc.req); rec.Code != tc.want {
				t.Fatalf("%d, want %d: %s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
	// A browser says where a request comes from in Sec-Fetch-Site too
	// (http.CrossOriginProtection reads it first): a cross-site request is
	// refused whatever its Origin says.
	for _, site := range []string{"cross-site", "same-site"} {
		req := formPost("/signout", url.Values{"csrf": {good}}, browser)
		req.Header.Set("Sec-Fetch-Site", site)
		if rec := send(s, req); rec.Code != http.StatusForbidden {
			t.Fatalf("Sec-Fetch-Site %s: %d, want 403", site, rec.Code)
		}
	}
	req := formPost("/signout", url.Values{"csrf": {good}}, browser)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if rec := send(s, req); rec.Code != http.StatusSeeOther {
		t.Fatalf("Sec-Fetch-Site same-origin: %d, want 303", rec.Code)
	}
	// A JSON call in single-user mode needs no token, but not from another origin.
	req = httptest.NewRequest(http.MethodPost, "http://localhost/api/v1/runs/20261201-141005-s4d5tb/stop", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://127.0.0.1:9999")
	if rec := send(s, req); rec.Code != http.StatusForbidden {
		t.Fatalf("JSON from another origin: %d, want 403", rec.Code)
	}
}

// With accounts, the token is bound to the signed-in session: a token that
// is good for the browser id, or planted with it, launches nothing.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	a := newAuthServer(t, server.Config{})
	session := a.session("ada")
	for name, token := range map[string]string{
		"planted value":            strings.Repeat("b", 64),
		"token of the browser id":  auth.CSRFToken(testKey, "browser:"+testCSRF),
		"token of another session": auth.CSRFToken(testKey, "session:"+auth.HashSecret(a.session("ada"))),
		"token under another key":  auth.CSRFToken([]byte("another key, 32 bytes long......"), "session:"+auth.HashSecret(session)),
	} {
		rec := a.do(http.MethodPost, "/demo", reqOpts{session: session, csrf: token})
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, rec.Code)
		}
	}
	if rec := a.do(http.MethodPost, "/signout", reqOpts{session: session, csrf: testCSRF}); rec.Code != http.StatusSeeOther {
		t.Errorf("the session's own token: %d, want 303", rec.Code)
	}
}

// A page on a name the attacker controls that re-resolves to 127.0.0.1 (DNS
// rebinding) sends its own name as Host.
func TestHostHeaderAllowList(t *testing.T) {
	s := samplesServer(t, server.Config{AllowedHosts: []string{"proctor.lan", "192.0.2.7"}})
	tests := []struct {
		host string
		want int
	}{
		{"localhost:7070", http.StatusOK},
		{"LOCALHOST", http.StatusOK},
		{"localhost.", http.StatusMisdirectedRequest}, // another name to a browser
		{"localhost.:7070", http.StatusMisdirectedRequest},
		{"proctor.lan.", http.StatusMisdirectedRequest},
		{"127.0.0.1:7070", http.StatusOK},
		{"[::1]:7070", http.StatusOK},
		{"proctor.lan:7070", http.StatusOK},
		{"192.0.2.7:7070", http.StatusOK},
		{"rebind.attacker.example:7070", http.StatusMisdirectedRequest},
		{"127.0.0.1.attacker.example", http.StatusMisdirectedRequest},
		{"", http.StatusMisdirectedRequest},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/runs", nil)
			req.Host = tc.host
			rec := send(s, req)
			if rec.Code != tc.want {
				t.Fatalf("Host %q: %d, want %d", tc.host, rec.Code, tc.want)
			}
			if tc.want != http.StatusOK && !strings.Contains(rec.Body.String(), "--allowed-host") {
				t.Fatalf("the refusal does not say what to do: %s", rec.Body.String())
			}
		})
	}
	// Refused before routing: a state change never runs.
	req := formPost("/demo", url.Values{})
	req.Host = "rebind.attacker.example"
	if rec := send(s, req); rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("POST /demo with a foreign Host: %d", rec.Code)
	}
}

func TestTLSCookiesAreSecureAndHSTSIsSent(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		s := samplesServer(t, server.Config{TLS: tlsOn})
		rec := get(t, s, "/runs")
		var csrf *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == "proctor_csrf" {
				csrf = c
			}
		}
		if csrf == nil || csrf.Secure != tlsOn || !csrf.HttpOnly {
			t.Errorf("TLS %v: CSRF cookie %+v", tlsOn, csrf)
		}
		if hsts := rec.Header().Get("Strict-Transport-Security"); (hsts != "") != tlsOn {
			t.Errorf("TLS %v: Strict-Transport-Security %q", tlsOn, hsts)
		}
	}
}
