package server_test

import (
	"net/http"
	"net/http/cookiejar"

	"github.com/proctor-dev/proctor/internal/server"
)

func newJar() *cookiejar.Jar {
	j, _ := cookiejar.New(nil)
	return j
}

// testSecret is the local secret of the single-user servers of these tests.
const testSecret = "plk_test-local-secret-of-the-server-tests-0123456789"

// withSecret serves s as it answers a browser that opened the address
// serve printed: every request carries the local secret's cookie (one that
// carries a credential of its own keeps it). A test of the secret itself
// uses s.Handler().
func withSecret(s *server.Server) http.Handler {
	h := s.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie(server.LocalCookie); err != nil && r.Header.Get("Authorization") == "" {
			r.AddCookie(&http.Cookie{Name: server.LocalCookie, Value: testSecret})
		}
		h.ServeHTTP(w, r)
	})
}
