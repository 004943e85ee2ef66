package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// allowedHosts is the set of Host names requests may use: the loopback
// names, always, and the ones the server was given.
func allowedHosts(extra []string) map[string]bool {
	hosts := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, h := range extra {
		hosts[strings.TrimSuffix(hostName(h), ".")] = true
	}
	return hosts
}

// hostName is the name part of a Host header, lower case, without port or
// brackets. A trailing dot is kept: "localhost." is another name, which a
// browser keeps apart from "localhost", and is not answered.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// checkHost refuses, before any routing, a request whose Host is not one
// this server answers to. A page on a name the attacker controls that
// re-resolves to this machine (DNS rebinding) sends its own name as Host, so
// it never reaches a handler.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.hosts[hostName(c.Request().Host)] {
			return c.String(http.StatusMisdirectedRequest, "proctor does not answer to the host name "+strconv.Quote(c.Request().Host)+
				". Open it as localhost or 127.0.0.1, or start it with --allowed-host NAME to accept that name.\n")
		}
		return next(c)
	}
}
