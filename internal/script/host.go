package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
)

// Host serves many scripts from one loopback listener, each under its own
// base URL (http://ADDR/s/N/v1). A suite's runs share one host: a run costs
// a map entry rather than a listener, and the client's connections are
// kept alive from one run to the next. Each script is still a whole
// OpenAI-compatible endpoint with its own step position.
type Host struct {
	base string
	srv  *http.Server
	done chan error

	mu      sync.Mutex
	next    int
	scripts map[string]*Server
	sdk     *model.SDK // one SDK client for every script's model client, in process
}

// NewHost listens on addr (e.g. "127.0.0.1:0") until Close.
func NewHost(addr string) (*Host, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve model scripts: %w", err)
	}
	h := &Host{base: "http://" + ln.Addr().String() + "/s/", done: make(chan error, 1), scripts: map[string]*Server{}}
	h.sdk = model.NewSDK(model.Endpoint{BaseURL: h.base, Transport: h.Transport()})
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

// Client serves s on the host and returns a model client that talks to it
// in process (see Transport), and a func that stops serving it.
func (h *Host) Client(s *Script, retry model.RetryPolicy, record model.Recorder) (*model.Client, func()) {
	url, _, remove := h.Add(s)
	return h.sdk.Client(model.Endpoint{BaseURL: url, Model: s.Model, Transport: h.Transport()}, retry, record), remove
}

// ServeHTTP routes /s/N/… to script N's endpoint.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/s/")
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

// Transport returns an http.RoundTripper that hands each request to the
// host's handler in this process, without a socket: the client and the
// scripted endpoint run the same code as over loopback (the SDK, the
// request and reply encodings, the step checks), minus the TCP stack. A
// suite's runs talk to their scripts this way.
func (h *Host) Transport() http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	w := &bufferedResponse{header: http.Header{}, code: http.StatusOK}
	t.h.ServeHTTP(w, req)
	req.Body.Close()
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)), StatusCode: w.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// bufferedResponse is an http.ResponseWriter that keeps the reply in
// memory (a scripted reply is small and complete at once).
type bufferedResponse struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
}

func (w *bufferedResponse) Write(p []byte) (int, error) {
	w.wrote = true
	return w.body.Write(p)
}

func (w *bufferedResponse) Flush() {}
