package script

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Host serves many scripts from one loopback listener, each under its own
// base URL (http://ADDR/s/N/v1): every scripted run talks to its script
// over HTTP, as to a live provider. A suite's runs share one host, so a run
// costs a map entry rather than a listener and connections are kept alive
// from one run to the next. Each script is a whole OpenAI-compatible
// endpoint with its own step position.
type Host struct {
	base string
	root *Server // serves every path outside /s/ (Start); nil: none
	srv  *http.Server
	done chan error

	mu      sync.Mutex
	next    int
	scripts map[string]*Server
}

// NewHost listens on addr (e.g. "127.0.0.1:0") until Close.
func NewHost(addr string) (*Host, error) {
	h, err := newHost(addr, nil)
	if err != nil {
		return nil, fmt.Errorf("serve model scripts: %w", err)
	}
	return h, nil
}

func newHost(addr string, root *Server) (*Host, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := &Host{base: "http://" + ln.Addr().String() + "/s/", root: root, done: make(chan error, 1), scripts: map[string]*Server{}}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { h.done <- h.srv.Serve(ln) }()
	return h, nil
}

// Add serves s at a new base URL until remove is called.
func (h *Host) Add(s *Script) (baseURL string, server *Server, remove func()) {
	h.mu.Lock()
	h.next++
	key := strconv.Itoa(h.next)
	server = NewServer(s)
	h.scripts[key] = server
	h.mu.Unlock()
	return h.base + key + "/v1", server, func() {
		h.mu.Lock()
		delete(h.scripts, key)
		h.mu.Unlock()
	}
}

// ServeHTTP routes /s/N/… to script N's endpoint.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/s/")
	if !ok && h.root != nil {
		h.root.ServeHTTP(w, r)
		return
	}
	key, path, _ := strings.Cut(rest, "/")
	h.mu.Lock()
	s := h.scripts[key]
	h.mu.Unlock()
	if !ok || s == nil {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s %s: no script is served there (its run has ended)", r.Method, r.URL.Path))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + path
	s.ServeHTTP(w, r2)
}

// Close stops the host and every script on it.
func (h *Host) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	if serr := <-h.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
