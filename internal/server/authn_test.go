package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
)

// testCSRF is the browser id cookie every request carries; as a reqOpts.csrf
// it stands for the valid token of the request's session or browser.
const testCSRF = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// testKey is the key the test servers sign CSRF tokens with.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// authServer is a server with sign-in on: accounts vic (viewer), rev
// (reviewer) and ada (admin), each with the password "<name>-password".
type authServer struct {
	t   testing.TB
	s   *server.Server
	st  *store.Store
	now time.Time
}

func newAuthServer(t testing.TB, cfg server.Config) *authServer {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	for name, role := range map[string]auth.Role{"vic": auth.Viewer, "rev": auth.Reviewer, "ada": auth.Admin} {
		h, err := auth.HashPassword(name+"-password", auth.Params{Time: 1, Memory: 64, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AddUser(ctx, store.User{Name: name, Role: string(role), PasswordHash: h}); err != nil {
			t.Fatal(err)
		}
	}
	a := &authServer{t: t, st: st, now: time.Now()}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return a.now }
	}
	if cfg.Key == nil {
		cfg.Key = testKey
	}
	if cfg.LocalSecret == "" {
		cfg.LocalSecret = testSecret
	}
	a.s = server.New(st, cfg)
	return a
}

// session signs user in directly through the store and returns the cookie
// value.
func (a *authServer) session(user string) string {
	a.t.Helper()
	secret, err := auth.NewSecret(auth.SessionPrefix)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.st.AddWebSession(context.Background(), auth.HashSecret(secret), user, "192.0.2.1", a.now.Add(time.Hour)); err != nil {
		a.t.Fatal(err)
	}
	return secret
}

// token is the valid CSRF token of a request with this session cookie (or
// none): bound to the session while it is valid, else to the browser id.
func (a *authServer) token(session string) string {
	if session != "" {
		if _, err := a.st.LookupWebSession(context.Background(), auth.HashSecret(session), a.now); err == nil {
			return auth.CSRFToken(testKey, "session:"+auth.HashSecret(session))
		}
	}
	return auth.CSRFToken(testKey, "browser:"+testCSRF)
}

type reqOpts struct {
	session string // cookie value
	csrf    string // header value; the cookie always holds testCSRF
	bearer  string
	json    bool
	body    string
	addr    string
}

func (a *authServer) do(method, target string, o reqOpts) *httptest.ResponseRecorder {
	body := o.body
	if body == "" && method == http.MethodPost {
		body = "decision=approve&reviewer=x"
		if o.json {
			body = `{"decision":"approve"}`
		}
	}
	req := httptest.NewRequest(method, "http://localhost"+target, strings.NewReader(body))
	if strings.HasSuffix(target, "/events") { // an event stream stays open: hang up soon
		ctx, cancel := context.WithTimeout(req.Context(), 300*time.Millisecond)
		defer cancel()
		req = req.WithContext(ctx)
	}
	if method == http.MethodPost {
		if o.json {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	req.AddCookie(&http.Cookie{Name: "proctor_csrf", Value: testCSRF})
	if o.session != "" {
		req.AddCookie(&http.Cookie{Name: "proctor_session", Value: o.session})
	}
	if o.csrf == testCSRF {
		o.csrf = a.token(o.session)
	}
	if o.csrf != "" {
		req.Header.Set("X-CSRF-Token", o.csrf)
	}
	if o.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+o.bearer)
	}
	if o.addr != "" {
		req.RemoteAddr = o.addr
	}
	rec := httptest.NewRecorder()
	withSecret(a.s).ServeHTTP(rec, req)
	return rec
}

// routeCase is a route of the router as the access tests request it.
type routeCase struct {
	target string
	need   string // "" public, else viewer, reviewer, admin
	anon   int    // for public routes: the status without a session
}

// routeTable is every route, with a target that names run.
func routeTable(run string) map[string]routeCase {
	return map[string]routeCase{
		"GET /static/*":                    {"/static/style.css", "", 200},
		"GET /favicon.ico":                 {"/favicon.ico", "", 301},
		"GET /healthz":                     {"/healthz", "", 200},
		"GET /signin":                      {"/signin", "", 200},
		"POST /signin":                     {"/signin", "", 401},
		"POST /signout":                    {"/signout", "", 303},
		"GET /share/:token":                {"/share/psl_nope", "", 404},
		"GET /":                            {"/", "viewer", 0},
		"GET /runs":                        {"/runs", "viewer", 0},
		"GET /runs/:id":                    {"/runs/" + run, "viewer", 0},
		"GET /runs/:id/events":             {"/runs/" + run + "/events", "viewer", 0},
		"GET /runs/:id/files/:name":        {"/runs/" + run + "/files/diff.patch", "viewer", 0},
		"GET /runs/:id/patch.mbox":         {"/runs/" + run + "/patch.mbox", "viewer", 404},
		"GET /runs/:id/export.html":        {"/runs/" + run + "/export.html", "viewer", 0},
		"GET /runs/:id/diff/:n":            {"/runs/" + run + "/diff/0", "viewer", 0},
		"GET /runs/:id/diff/:n/lines":      {"/runs/" + run + "/diff/0/lines?from=1&to=0&shift=0", "viewer", 0},
		"GET /runs/:id/:part":              {"/runs/" + run + "/transcript?upto=0", "viewer", 0},
		"GET /runs/:id/calls":              {"/runs/" + run + "/calls", "viewer", 0},
		"GET /runs/:id/calls/:seq/request": {"/runs/" + run + "/calls/1/request", "viewer", 0},
		"GET /sessions":                    {"/sessions", "viewer", 0},
		"GET /sessions/:id":                {"/sessions/s1", "viewer", 0},
		"GET /problems":                    {"/problems", "viewer", 0},
		"GET /rules":                       {"/rules", "viewer", 0},
		"POST /rules/:id/revoke":           {"/rules/1/revoke", "reviewer", 0},
		"GET /suites":                      {"/suites", "viewer", 0},
		"GET /suites/:id":                  {"/suites/s1", "viewer", 0},
		"GET /scenarios/:id":               {"/scenarios/x", "viewer", 0},
		"GET /compare":                     {"/compare", "viewer", 0},
		"GET /compare/runs":                {"/compare/runs?a=" + run + "&b=" + run, "viewer", 0},
		"GET /api/v1/compare":              {"/api/v1/compare?base=a&head=b", "viewer", 0},
		"GET /api/v1/push/:digest":         {"/api/v1/push/" + strings.Repeat("0", 64), "admin", 0},
		"PUT /api/v1/push/:digest":         {"/api/v1/push/" + strings.Repeat("0", 64), "admin", 0},
		"POST /suites/:id/baseline":        {"/suites/s1/baseline", "reviewer", 0},
		"POST /runs/:id/share":             {"/runs/" + run + "/share", "reviewer", 0},
		"POST /suites/:id/share":           {"/suites/s1/share", "reviewer", 0},
		"GET /shares":                      {"/shares", "reviewer", 0},
		"POST /shares/:id/revoke":          {"/shares/1/revoke", "reviewer", 0},
		"POST /runs/:id/review":            {"/runs/" + run + "/review", "reviewer", 0},
		"POST /runs/:id/draft":             {"/runs/" + run + "/draft", "reviewer", 0},
		"POST /runs/:id/approvals/:n":      {"/runs/" + run + "/approvals/1", "reviewer", 0},
		"POST /runs/:id/requests/:r/comments/:n/replies": {"/runs/" + run + "/requests/0/comments/0/replies", "reviewer", 0},
		"POST /runs/:id/requests/:r/comments/:n/resolve": {"/runs/" + run + "/requests/0/comments/0/resolve", "reviewer", 0},
		"GET /launch":                        {"/launch", "admin", 0},
		"POST /launch":                       {"/launch", "admin", 0},
		"POST /demo":                         {"/demo", "admin", 0},
		"POST /suites":                       {"/suites", "admin", 0},
		"POST /runs/:id/stop":                {"/runs/" + run + "/stop", "admin", 0},
		"POST /runs/:id/resume":              {"/runs/" + run + "/resume", "admin", 0},
		"POST /runs/:id/session":             {"/runs/" + run + "/session", "admin", 0},
		"POST /runs/:id/scenario":            {"/runs/" + run + "/scenario", "reviewer", 0},
		"POST /sessions/:id/continue":        {"/sessions/s1/continue", "admin", 0},
		"GET /audit":                         {"/audit", "admin", 0},
		"GET /api/v1/runs":                   {"/api/v1/runs", "viewer", 0},
		"GET /api/v1/runs/:id":               {"/api/v1/runs/" + run, "viewer", 0},
		"GET /api/v1/runs/:id/decision":      {"/api/v1/runs/" + run + "/decision", "viewer", 0},
		"GET /api/v1/suites/:id":             {"/api/v1/suites/s1", "viewer", 0},
		"GET /api/v1/runs/:id/approvals":     {"/api/v1/runs/" + run + "/approvals", "viewer", 0},
		"POST /api/v1/runs/:id/review":       {"/api/v1/runs/" + run + "/review", "reviewer", 0},
		"POST /api/v1/runs/:id/approvals/:n": {"/api/v1/runs/" + run + "/approvals/1", "reviewer", 0},
		"POST /api/v1/runs":                  {"/api/v1/runs", "admin", 0},
		"POST /api/v1/suites":                {"/api/v1/suites", "admin", 0},
		"POST /api/v1/runs/:id/stop":         {"/api/v1/runs/" + run + "/stop", "admin", 0},
		"POST /api/v1/runs/:id/resume":       {"/api/v1/runs/" + run + "/resume", "admin", 0},
		"POST /api/v1/runs/:id/changes":      {"/api/v1/runs/" + run + "/changes", "reviewer", 0},
	}
}

// TestRouteAccess requests every route of the router without a session, as
// a viewer, a reviewer and an admin, and with a missing or forged CSRF
// token, and asserts what each gets. A route with no entry here fails.
func TestRouteAccess(t *testing.T) {
	data := t.TempDir()
	a := newAuthServer(t, server.Config{DataDir: data, Launcher: launching(t, data)})
	const run = "20261201-093012-k3f9qa"
	routes := routeTable(run)
	for _, r := range a.s.Routes() {
		if _, ok := routes[r]; !ok {
			t.Errorf("route %s has no entry in TestRouteAccess; add one", r)
		}
	}
	// A server that launches nothing has none of the routes that launch.
	launchRoutes := []string{"GET /launch", "POST /launch", "POST /demo", "POST /suites", "POST /runs/:id/stop", "POST /runs/:id/resume", "POST /runs/:id/session",
		"POST /runs/:id/scenario", "POST /sessions/:id/continue", "POST /api/v1/runs", "POST /api/v1/suites", "POST /api/v1/runs/:id/stop", "POST /api/v1/runs/:id/resume", "POST /api/v1/runs/:id/changes"}
	plain := newAuthServer(t, server.Config{}).s.Routes()
	for _, r := range launchRoutes {
		if slices.Contains(plain, r) || !slices.Contains(a.s.Routes(), r) {
			t.Errorf("%s: on the server that launches nothing %v, on the one that launches %v", r, slices.Contains(plain, r), slices.Contains(a.s.Routes(), r))
		}
	}
	denied := func(code int) bool { return code == 401 || code == 403 }
	for key, rt := range routes {
		method := strings.Fields(key)[0]
		api := strings.HasPrefix(rt.target, "/api/")
		t.Run(key, func(t *testing.T) {
			// Without a session.
			rec := a.do(method, rt.target, reqOpts{csrf: testCSRF, json: api})
			switch {
			case rt.need == "":
				if rec.Code != rt.anon {
					t.Errorf("anonymous: %d, want %d", rec.Code, rt.anon)
				}
			case api:
				if rec.Code != 401 {
					t.Errorf("anonymous API call: %d, want 401", rec.Code)
				}
			case method == http.MethodGet:
				if loc := rec.Header().Get("Location"); rec.Code != 303 || !strings.HasPrefix(loc, "/signin?next=") {
					t.Errorf("anonymous page: %d to %q, want 303 to /signin?next=…", rec.Code, loc)
				}
			default:
				if rec.Code != 401 {
					t.Errorf("anonymous POST: %d, want 401", rec.Code)
				}
			}
			if rt.need == "" {
				return
			}
			// Each role, with a valid CSRF token.
			// Who may, written out (not computed with auth.Role.Allows,
			// the code under test).
			may := map[string][]string{"viewer": {"viewer", "reviewer", "admin"}, "reviewer": {"reviewer", "admin"}, "admin": {"admin"}}[rt.need]
			for _, who := range []struct{ user, role string }{{"vic", "viewer"}, {"rev", "reviewer"}, {"ada", "admin"}} {
				rec := a.do(method, rt.target, reqOpts{session: a.session(who.user), csrf: testCSRF, json: api})
				allowed := slices.Contains(may, who.role)
				if allowed && denied(rec.Code) {
					t.Errorf("%s: %d, want it allowed; body %.200s", who.role, rec.Code, rec.Body.String())
				}
				if !allowed && rec.Code != 403 {
					t.Errorf("%s: %d, want 403", who.role, rec.Code)
				}
			}
			if method != http.MethodPost {
				return
			}
			// State changes need the CSRF token, even from an admin.
			for name, token := range map[string]string{"missing": "", "forged": strings.Repeat("f", 64)} {
				rec := a.do(method, rt.target, reqOpts{session: a.session("ada"), csrf: token, json: api})
				if rec.Code != 403 || !strings.Contains(rec.Body.String(), "CSRF") {
					t.Errorf("%s CSRF token: %d %.200s, want 403 naming CSRF", name, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

func TestAPITokens(t *testing.T) {
	a := newAuthServer(t, server.Config{})
	secret, _ := auth.NewSecret(auth.TokenPrefix)
	if err := a.st.AddAPIToken(context.Background(), "vic", "ci", auth.HashSecret(secret), ""); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, target, bearer string
		status                 int
	}{
		{"GET", "/api/v1/runs", secret, 200},
		{"GET", "/api/v1/runs", "ptk_wrong", 401},
		{"GET", "/api/v1/runs", "not-a-token", 401},
		{"POST", "/api/v1/runs/20261201-093012-k3f9qa/review", secret, 403}, // a viewer's token cannot review
	}
	for _, tt := range tests {
		rec := a.do(tt.method, tt.target, reqOpts{bearer: tt.bearer, json: true})
		if rec.Code != tt.status {
			t.Errorf("%s %s with %q: %d, want %d (%s)", tt.method, tt.target, tt.bearer, rec.Code, tt.status, rec.Body.String())
		}
	}
}

func TestSigninFlow(t *testing.T) {
	a := newAuthServer(t, server.Config{TLS: true})
	form := func(user, pw, next string) string {
		return url.Values{"user": {user}, "password": {pw}, "next": {next}, "csrf": {a.token("")}}.Encode()
	}
	// The same answer for an unknown user, a wrong password.
	unknown := a.do("POST", "/signin", reqOpts{body: form("nobody", "whatever-pw", "")})
	wrong := a.do("POST", "/signin", reqOpts{body: form("rev", "not-the-password", "")})
	if unknown.Code != 401 || wrong.Code != 401 || !strings.Contains(unknown.Body.String(), "Wrong user name or password.") || !strings.Contains(wrong.Body.String(), "Wrong user name or password.") {
		t.Fatalf("unknown: %d, wrong: %d; want 401 and one message", unknown.Code, wrong.Code)
	}
	// A good sign-in sets a Secure, HttpOnly, SameSite cookie and goes to next.
	ok := a.do("POST", "/signin", reqOpts{body: form("rev", "rev-password", "/runs?status=failed")})
	if ok.Code != 303 || ok.Header().Get("Location") != "/runs?status=failed" {
		t.Fatalf("sign-in: %d to %q", ok.Code, ok.Header().Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range ok.Result().Cookies() {
		if c.Name == "proctor_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode || !strings.HasPrefix(cookie.Value, "pst_") {
		t.Fatalf("session cookie = %+v", cookie)
	}
	// An offsite next is ignored.
	for _, next := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example", "/\t/evil.example/x", "/\n/evil.example", "/", "runs", "/runs\x7f"} {
		rec := a.do("POST", "/signin", reqOpts{body: form("rev", "rev-password", next)})
		if loc := rec.Header().Get("Location"); loc != "/runs" {
			t.Errorf("next %q: went to %q, want /runs", next, loc)
		}
	}
	page := a.do("GET", "/runs", reqOpts{session: cookie.Value})
	if page.Code != 200 || !strings.Contains(page.Body.String(), `id="whoami">rev<`) {
		t.Fatalf("runs page as rev: %d", page.Code)
	}
	// Expired: back to sign-in.
	a.now = a.now.Add(13 * time.Hour)
	if rec := a.do("GET", "/runs", reqOpts{session: cookie.Value}); rec.Code != 303 {
		t.Errorf("expired session: %d, want 303 to sign-in", rec.Code)
	}
	a.now = a.now.Add(-13 * time.Hour)
	// Sign out ends the session on the server.
	if rec := a.do("POST", "/signout", reqOpts{session: cookie.Value, csrf: testCSRF}); rec.Code != 303 {
		t.Fatalf("sign out: %d", rec.Code)
	}
	if rec := a.do("GET", "/runs", reqOpts{session: cookie.Value}); rec.Code != 303 {
		t.Errorf("after sign-out: %d, want 303", rec.Code)
	}
	// The audit log has the sign-ins, the failures and the sign-out.
	entries, _, _ := a.st.ListAudit(context.Background(), 0, 100)
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+":"+e.Object)
	}
	want := "signout:rev"
	if len(got) == 0 || got[0] != want || !strings.Contains(strings.Join(got, ","), "signin-failed:nobody") {
		t.Errorf("audit = %v", got)
	}
	// One person is named one way: a sign-in is by the user who signed in
	// (it was by "local"), a failed one by nobody known.
	for _, e := range entries {
		switch {
		case (e.Action == "signin" || e.Action == "signout") && e.Actor != e.Object:
			t.Errorf("%s of %s by %q, want by %s", e.Action, e.Object, e.Actor, e.Object)
		case e.Action == "signin-failed" && e.Actor != "anonymous":
			t.Errorf("a failed sign-in as %s by %q, want anonymous", e.Object, e.Actor)
		}
	}
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (Linux routes all of 127.0.0.0/8 to lo), so one test can play
// several machines.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

// TestSigninRateLimit is a bounded load test on loopback: 200 wrong
// passwords from one address, 8 at a time, hit the limit, and never lock out
// a correct sign-in from another address.
func TestSigninRateLimit(t *testing.T) {
	a := newAuthServer(t, server.Config{SigninLimit: 5, SigninWindow: time.Minute})
	ts := httptest.NewServer(withSecret(a.s))
	defer ts.Close()
	signin := func(c *http.Client, pw string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/signin", strings.NewReader(url.Values{"user": {"ada"}, "password": {pw}, "csrf": {a.token("")}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "proctor_csrf", Value: testCSRF})
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	attacker := clientFrom("127.0.0.2")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				code, retry := signin(attacker, fmt.Sprintf("guess-%03d", i))
				if code == http.StatusTooManyRequests && retry == "" {
					t.Error("429 without Retry-After")
				}
				mu.Lock()
				counts[code]++
				mu.Unlock()
			}
		}()
	}
	for i := range 200 {
		work <- i
	}
	close(work)
	wg.Wait()
	// Each attempt is counted as it is let through, so concurrency cannot
	// sneak in more guesses than the limit.
	if counts[401] != 5 || counts[429] != 195 {
		t.Errorf("answers to 200 wrong passwords: %v; want 5 refused (401), 195 limited (429)", counts)
	}
	// Even the right password is refused from the flooding address…
	if code, _ := signin(attacker, "ada-password"); code != http.StatusTooManyRequests {
		t.Errorf("right password from the flooding address: %d, want 429", code)
	}
	// …but not from another one.
	if code, _ := signin(clientFrom("127.0.0.3"), "ada-password"); code != http.StatusSeeOther {
		t.Errorf("right password from another address: %d, want 303", code)
	}
	// After the window the flooding address may try again.
	a.now = a.now.Add(time.Minute)
	if code, _ := signin(attacker, "ada-password"); code != http.StatusSeeOther {
		t.Errorf("after the window: %d, want 303", code)
	}
}

// BenchmarkSignedInRequest measures what sign-in adds to a request: the
// problems page signed in (an account count and a session lookup per
// request), as a ratio to the same page in single-user mode measured in the
// same run.
func BenchmarkSignedInRequest(b *testing.B) {
	single, _ := newServer(b, false)
	a := newAuthServer(b, server.Config{})
	cookie := a.session("vic")
	n := max(b.N, 500)
	measure := func(h http.Handler, withCookie bool) time.Duration {
		t0 := time.Now()
		for range n {
			req := httptest.NewRequest(http.MethodGet, "http://localhost/problems", nil)
			if withCookie {
				req.AddCookie(&http.Cookie{Name: "proctor_session", Value: cookie})
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d", rec.Code)
			}
		}
		return time.Since(t0) / time.Duration(n)
	}
	measure(withSecret(single), false) // warm both
	measure(withSecret(a.s), true)
	base := measure(withSecret(single), false)
	signed := measure(withSecret(a.s), true)
	b.ReportMetric(float64(base.Microseconds()), "µs/single-user")
	b.ReportMetric(float64(signed.Microseconds()), "µs/signed-in")
	b.ReportMetric(float64(signed)/float64(base), "ratio")
}

// The sign-in page once showed anonymous visitors the nav, the problem count
// and the data folder's path.
func TestSigninPageShowsAnonymousVisitorsNothingElse(t *testing.T) {
	a := newAuthServer(t, server.Config{DataDir: "/srv/proctor-data"})
	page := a.do("GET", "/signin", reqOpts{}).Body.String()
	for _, leak := range []string{`aria-label="Main"`, "/srv/proctor-data", "Index problems", "/api/v1/runs"} {
		if strings.Contains(page, leak) {
			t.Errorf("the sign-in page shows %q", leak)
		}
	}
	signedIn := a.do("GET", "/runs", reqOpts{session: a.session("ada")}).Body.String()
	if !strings.Contains(signedIn, `aria-label="Main"`) || !strings.Contains(signedIn, `href="/audit"`) {
		t.Error("a signed-in admin does not get the nav with Audit")
	}
}
