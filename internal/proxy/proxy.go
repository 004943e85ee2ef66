// Package proxy is the recording proxy an external agent talks to: a
// loopback OpenAI-compatible endpoint (chat completions, the Responses API,
// the models list) that forwards each call to the run's model — a scripted
// endpoint or a live provider — with the model's real key, which the agent
// never sees (it holds a placeholder key that is good for this proxy only).
// Every call is recorded, refused and failed ones included, and calls past
// the run's bounds are refused with an error that says which bound.
package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/pricing"
)

// Limits are the bounds the proxy holds the agent to; a zero field is no
// limit.
type Limits struct {
	MaxCalls      int     // model calls (both APIs) in one turn of the agent, the run's max_turns; NewTurn counts again
	MaxTotalCalls int     // model calls in the whole run, a scenario's max_messages
	MaxTokens     int64   // total tokens the replies reported, the run's max_tokens
	MaxCostUSD    float64 // what the replies cost, each call at the price of the model it names, the run's max_cost_usd
	// Prices price each call by the model it names (Model when it names
	// none); under MaxCostUSD a call naming a model without a price is
	// refused: what it costs could not be known.
	Prices pricing.Table
	Model  string
	// Models are the models a call may name (a live profile's model and
	// models); nil allows any (a scripted model costs nothing). A call
	// naming another is refused: an agent that names a pricier model than
	// its profile would spend what nobody chose.
	Models   []string
	Deadline time.Time // the run's wall clock
}

// Config is what a proxy forwards to and how it records.
type Config struct {
	Upstream model.Endpoint // base URL (ending in /v1) and key of the run's model
	Limits   Limits
	// Record receives every model call once it has ended, with its reply
	// decoded (nil when there is none). Calls may end concurrently.
	Record func(x model.Exchange, reply *model.Response)
	// Approve decides a gated tool call an agent asks proctor about
	// (POST /v1/proctor/approvals); nil denies every one (fail closed).
	Approve func(ctx context.Context, a Approval) Answer
	// Result takes how a command an agent ran ended, for an agent whose
	// tool results do not tell its model (POST /v1/proctor/results: the
	// plugin proctor gives opencode); nil ignores them.
	Result func(r Result)
	// Timeout bounds one forwarded call; 0 is 10 minutes.
	Timeout time.Duration
	Now     func() time.Time // nil: the wall clock
}

// Proxy is a running proxy on loopback.
type Proxy struct {
	URL string // base URL, ending in /v1
	Key string // the placeholder key the agent presents
	// Socket is the same proxy on a unix socket, in a folder only this
	// process's user may enter: a confined agent's init relays it to the
	// port of URL inside the agent's own network namespace.
	Socket string

	cfg    Config
	client *http.Client
	srv    *http.Server
	done   chan error // one error from each listener
	dir    string     // the socket's folder

	inflight sync.WaitGroup // model calls not yet recorded

	mu        sync.Mutex
	last      chan struct{} // closed once the latest call begun so far is recorded
	counted   chan struct{} // closed once the replies of every call begun so far are counted in usage
	calls     int           // in the run
	turnCalls int           // in this turn
	usage     model.Usage   // what the replies reported
	cost      float64       // what they cost, each at the price of the model its call named
	exceeded  string
	lastBody  [sha256.Size]byte // the last model call's body, and its attempt: a retry sends the same body again
	lastTry   int
}

// Approval is a tool call an agent asks proctor to decide before it runs
// it: the body of POST /v1/proctor/approvals.
type Approval struct {
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"` // the call's arguments, JSON text
}

// Result is how a command an agent ran ended: the body of POST
// /v1/proctor/results.
type Result struct {
	CallID string `json:"call_id"`
	Exit   *int   `json:"exit"`
}

// Answer is the answer to an Approval.
type Answer struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Reason   string `json:"reason"`
}

// MaxBody is the largest request or response body the proxy passes on and
// records.
const MaxBody = 64 << 20

// Start serves a proxy on a loopback port until Close.
func Start(cfg Config) (*Proxy, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Record == nil {
		cfg.Record = func(model.Exchange, *model.Response) {}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the model proxy: %w", err)
	}
	dir, err := os.MkdirTemp("", "proctor-proxy-")
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start the model proxy: %w", err)
	}
	socket := filepath.Join(dir, "proxy.sock")
	uln, err := net.Listen("unix", socket)
	if err == nil {
		// The folder (0700) keeps the host's other users out; the command's
		// id, which is not this process's when proctor runs as root, may
		// connect to the socket itself through its view.
		err = os.Chmod(socket, 0o666)
	}
	if err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start the model proxy: %w", err)
	}
	key := make([]byte, 16)
	rand.Read(key)
	p := &Proxy{URL: "http://" + ln.Addr().String() + "/v1", Key: "proctor-proxy-" + hex.EncodeToString(key), Socket: socket, cfg: cfg,
		client: &http.Client{Transport: http.DefaultTransport}, done: make(chan error, 2), dir: dir}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { p.done <- p.srv.Serve(ln) }()
	go func() { p.done <- p.srv.Serve(uln) }()
	return p, nil
}

// Close stops the proxy, waiting a little for calls in flight, then for
// their recording.
func (p *Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		p.srv.Close() // a call still streaming after 5 s is cut, and recorded as cut
	}
	p.Drain()
	defer os.RemoveAll(p.dir)
	for range 2 {
		if serr := <-p.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	return err
}

// NewTurn starts a turn of the agent (its next invocation): the calls of a
// turn are counted again, and Exceeded is cleared.
func (p *Proxy) NewTurn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turnCalls, p.exceeded = 0, ""
}

// Exceeded is the first bound the proxy refused a call for in this turn
// ("" for none), e.g. "max_turns=30 (model calls in a turn)".
func (p *Proxy) Exceeded() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exceeded
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		p.refuse(w, r, http.StatusUnauthorized, "invalid_api_key", "this is proctor's model proxy for one run: use the key proctor gave the agent (in OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY)")
		return
	}
	rt, ok := route(r.Method, r.URL)
	if !ok {
		p.refuse(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("%s %q is not served by proctor's model proxy: it serves %s — with no escapes or dot segments", r.Method, r.URL.EscapedPath(), served))
		return
	}
	switch {
	case rt.api != "" && !p.cfg.Upstream.Speaks(rt.api):
		p.refuse(w, r, http.StatusBadRequest, "wrong_api", fmt.Sprintf("the agent called the %s API, but the run's model (a profile of kind %s) speaks another: pick a model profile of the kind this agent speaks (docs/models.md)", rt.api, p.cfg.Upstream.Kind))
	case rt.api != "" && !rt.counts:
		// Counting tokens: passed on and recorded, not a model call.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			writeError(w, rt.api, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
			return
		}
		p.beside(w, r, rt, model.CallCountTokens, body)
	case rt.api != "":
		p.call(w, r, rt)
	case rt.path == "/proctor/approvals":
		p.approve(w, r)
	case rt.path == "/proctor/results":
		p.result(w, r)
	case rt.path == "/hello":
		w.WriteHeader(http.StatusOK) // a reachability check (Claude Code's HEAD /api/hello)
	default:
		p.beside(w, r, rt, model.CallModels, nil) // the models list: passed on and recorded, not a model call
	}
}

// served lists the routes the proxy serves, for an agent that asked for
// another.
const served = "POST /v1/chat/completions, POST /v1/responses, GET /v1/models, GET /v1/models/{id}, " +
	"POST /v1/messages, POST /v1/messages/count_tokens, HEAD /api/hello, " +
	"POST /v1beta/models/{id}:generateContent (:streamGenerateContent, :countTokens), POST /v1/proctor/approvals, POST /v1/proctor/results"

// authorized says whether r holds the proxy's key, in any of the ways the
// APIs carry one: a bearer token, x-api-key (Anthropic), x-goog-api-key or
// ?key= (Gemini).
func (p *Proxy) authorized(r *http.Request) bool {
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	for _, k := range []string{bearer, r.Header.Get("X-Api-Key"), r.Header.Get("X-Goog-Api-Key"), r.URL.Query().Get("key")} {
		if k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(p.Key)) == 1 {
			return true
		}
	}
	return false
}

// refuse answers a request the proxy does not serve (a wrong key, a route
// it has not) with status and msg, and records it as a call that failed:
// an agent that cannot reach its model says so in the run's exchanges,
// events and page, not only in its own log.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	p.ordered(func(record func(model.Exchange, *model.Response)) {
		start := p.cfg.Now()
		x := model.Exchange{Time: start.UTC(), API: model.APIOfPath(r.URL.Path), Attempt: 1}
		// The request as sent when it is JSON, else its method and path.
		if body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody)); err == nil && json.Valid(body) {
			x.Request = body
		} else {
			x.Request, _ = json.Marshal(map[string]string{"method": r.Method, "path": r.URL.EscapedPath()})
		}
		x.Response = writeError(w, model.APIOfPath(r.URL.Path), status, code, msg)
		x.Error = fmt.Sprintf("proctor's proxy refused %s %s: HTTP %d: %s", r.Method, r.URL.EscapedPath(), status, msg)
		x.Duration = p.cfg.Now().Sub(start)
		record(x, nil)
	})
}

// modelID is one segment of a model's id (an id may have several, as in
// openai/gpt-4o): never a dot segment, an escape or anything a provider's
// router would read as more than a name.
var modelID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// aRoute is a request the proxy serves: the path passed on (after the
// upstream's base URL), the API of a model call ("" for others), whether
// it counts as a model call (counting tokens does not), and the query
// passed on, which the proxy writes itself.
type aRoute struct {
	path   string
	api    string
	counts bool
	query  string
}

// route is the route of a request the proxy serves, and whether it is
// one: exactly a route it serves, written plainly — no escapes, dot
// segments or empty segments, which a provider behind the proxy could read
// as another route that the real key opens. Of the query only what the
// API needs is passed on (Gemini's alt=sse, Anthropic's beta=true), and
// never as the agent wrote it.
func route(method string, u *url.URL) (aRoute, bool) {
	raw := u.EscapedPath()
	if strings.Contains(raw, "%") || raw != u.Path {
		return aRoute{}, false
	}
	post, get := method == http.MethodPost, method == http.MethodGet
	switch u.Path {
	case "/v1/chat/completions", "/v1/responses":
		return aRoute{path: u.Path[3:], api: model.APIOfPath(u.Path), counts: true}, post
	case "/v1/messages":
		r := aRoute{path: "/messages", api: model.APIMessages, counts: true}
		if u.Query().Get("beta") == "true" {
			r.query = "beta=true"
		}
		return r, post
	case "/v1/messages/count_tokens":
		return aRoute{path: "/messages/count_tokens", api: model.APIMessages}, post
	case "/v1/proctor/approvals":
		return aRoute{path: "/proctor/approvals"}, post
	case "/v1/proctor/results":
		return aRoute{path: "/proctor/results"}, post
	case "/v1/models":
		return aRoute{path: "/models"}, get
	case "/api/hello", "/":
		return aRoute{path: "/hello"}, get || method == http.MethodHead
	}
	rest, ok := strings.CutPrefix(u.Path, "/v1beta/models/")
	if !ok {
		rest, ok = strings.CutPrefix(u.Path, "/v1/models/")
	}
	if !ok {
		return aRoute{}, false
	}
	segs := strings.Split(rest, "/")
	if len(segs) > 4 {
		return aRoute{}, false
	}
	for _, seg := range segs {
		if !modelID.MatchString(seg) || strings.Contains(seg, "..") {
			return aRoute{}, false
		}
	}
	path := "/models/" + rest
	if _, m, ok := model.GeminiPath(path); ok {
		r := aRoute{path: path, api: model.APIGemini, counts: m != "countTokens"}
		if m == "streamGenerateContent" && u.Query().Get("alt") == "sse" {
			r.query = "alt=sse"
		}
		return r, post
	}
	return aRoute{path: path}, get && strings.HasPrefix(u.Path, "/v1/")
}

// Drain waits until every model call that has begun is recorded: an agent
// may exit as soon as it has read its last reply, before the proxy has
// recorded it.
func (p *Proxy) Drain() { p.inflight.Wait() }

// call forwards one model call and records it.
func (p *Proxy) call(w http.ResponseWriter, r *http.Request, rt aRoute) {
	p.ordered(func(record func(model.Exchange, *model.Response)) { p.serveCall(w, r, rt, record) })
}

// ordered serves one call with serve, which gives record what is to be
// recorded, and records it in its turn.
func (p *Proxy) ordered(serve func(record func(model.Exchange, *model.Response))) {
	// Calls are recorded in the order they began, each once it has ended:
	// an agent may send its next call as soon as it has read a reply, before
	// that reply's call is recorded, and a reader needs a call's tool calls
	// before their results. The recording waits for the calls before it
	// (never the answer to the agent); Drain waits for every recording.
	p.inflight.Add(1)
	p.mu.Lock()
	prev, mine := p.last, make(chan struct{})
	p.last = mine
	p.mu.Unlock()
	var x model.Exchange
	var reply *model.Response
	recorded := false
	record := func(ex model.Exchange, r *model.Response) { x, reply, recorded = ex, r, true }
	defer func() {
		go func() {
			defer p.inflight.Done()
			defer close(mine)
			if prev != nil {
				<-prev
			}
			if recorded {
				p.cfg.Record(x, reply)
			}
		}()
	}()
	serve(record)
}

// serveCall forwards one model call, or refuses it, and gives record what
// is to be recorded.
func (p *Proxy) serveCall(w http.ResponseWriter, r *http.Request, rt aRoute, record func(model.Exchange, *model.Response)) {
	api := rt.api
	start := p.cfg.Now()
	x := model.Exchange{Time: start.UTC(), API: api, Attempt: 1}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		writeError(w, api, http.StatusBadRequest, "bad_request", "read request: "+err.Error())
		return
	}
	x.Request = body
	x.Attempt = p.attempt(r, body)
	// An agent may send its next call as soon as it has read a reply, before
	// the proxy has counted that reply's tokens: a bound on what the replies
	// spent waits for the calls before this one to be counted.
	p.mu.Lock()
	prev, mine := p.counted, make(chan struct{})
	p.counted = mine
	p.mu.Unlock()
	defer func() {
		go func() {
			if prev != nil {
				<-prev
			}
			close(mine)
		}()
	}()
	if lim := p.cfg.Limits; prev != nil && (lim.MaxTokens > 0 || lim.MaxCostUSD > 0) {
		<-prev
	}
	called := calledModel(rt, body)
	if called == "" {
		called = p.cfg.Limits.Model
	}
	price, bound := p.admit(start, called)
	if bound != "" {
		msg := fmt.Sprintf("proctor refused this model call: the run's bound %s is reached; the run is over", bound)
		if strings.HasPrefix(bound, "model ") {
			msg = "proctor refused this model call: " + bound
		}
		x.Response, x.Error = writeError(w, api, http.StatusBadRequest, "proctor_bound_exceeded", msg), msg
		x.Duration = p.cfg.Now().Sub(start)
		record(x, nil)
		return
	}
	var kept bytes.Buffer
	status, ctype, err := p.forward(w, r, rt, body, &kept)
	x.Duration = p.cfg.Now().Sub(start)
	var reply *model.Response
	switch {
	case err != nil:
		x.Error = err.Error()
	case status/100 != 2:
		x.Error = fmt.Sprintf("HTTP %d from the model", status)
		if json.Valid(kept.Bytes()) {
			x.Response = kept.Bytes()
			x.Error += ": " + errorMessage(kept.Bytes())
		}
	default:
		raw := kept.Bytes()
		if ctype == "text/event-stream" {
			if raw, err = model.FoldStream(api, raw); err != nil {
				x.Error = "the model's stream: " + err.Error()
				break
			}
		}
		if !json.Valid(raw) {
			x.Error = "the model's reply is not JSON"
			break
		}
		x.Response = raw
		if reply, err = model.DecodeReply(api, raw); err != nil {
			x.Error = err.Error()
			reply = nil
		} else {
			p.spent(reply.Usage, price)
		}
	}
	record(x, reply)
}

// attempt is which try of its call a model call is: what the official
// SDKs say (X-Stainless-Retry-Count), else one more than the call before
// it when it sends the same body again (an agent that retries without
// saying so), else 1.
func (p *Proxy) attempt(r *http.Request, body []byte) int {
	sum := sha256.Sum256(body)
	p.mu.Lock()
	defer p.mu.Unlock()
	try := 1
	if n, err := strconv.Atoi(r.Header.Get("X-Stainless-Retry-Count")); err == nil && n >= 0 {
		try = n + 1
	} else if sum == p.lastBody && p.lastTry > 0 {
		try = p.lastTry + 1
	}
	p.lastBody, p.lastTry = sum, try
	return try
}

// approve answers an agent that asks whether it may run a gated tool call,
// waiting for the run's approver (its policy, a scenario's rules, a person
// on the dashboard).
func (p *Proxy) approve(w http.ResponseWriter, r *http.Request) {
	var a Approval
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&a); err != nil || a.Tool == "" {
		writeError(w, model.APIChat, http.StatusBadRequest, "bad_request", `want {"call_id": "…", "tool": "run_command", "arguments": "{…}"}`)
		return
	}
	// The call asked about is in a reply the agent has read, which may not
	// be recorded yet: the approver sees it recorded.
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	if last != nil {
		select {
		case <-last:
		case <-r.Context().Done():
		}
	}
	d := Answer{By: "none", Reason: "no approver is configured, so gated tools are denied (fail closed)"}
	if p.cfg.Approve != nil {
		d = p.cfg.Approve(r.Context(), a)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(d)
}

// result takes how a command an agent ran ended.
func (p *Proxy) result(w http.ResponseWriter, r *http.Request) {
	var res Result
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&res); err != nil || res.CallID == "" || res.Exit == nil {
		writeError(w, model.APIChat, http.StatusBadRequest, "bad_request", `want {"call_id": "…", "exit": 0}`)
		return
	}
	if p.cfg.Result != nil {
		p.cfg.Result(res)
	}
	w.WriteHeader(http.StatusNoContent)
}

// admit counts a model call naming the model called, or names the bound
// it would pass; the price is the called model's, when the run is held to
// max_cost_usd.
func (p *Proxy) admit(now time.Time, called string) (pricing.Price, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lim := p.cfg.Limits
	var price pricing.Price
	priced := true
	if lim.MaxCostUSD > 0 {
		price, priced = lim.Prices.Lookup(called)
	}
	bound := ""
	switch {
	case lim.Models != nil && !slices.Contains(lim.Models, called):
		bound = fmt.Sprintf("model %q is not the run's: its model profile allows %s; add it to the profile's models in models.yaml to allow it", called, strings.Join(lim.Models, ", "))
	case !lim.Deadline.IsZero() && !now.Before(lim.Deadline):
		bound = "wall_clock_s (the run's time is up)"
	case lim.MaxTotalCalls > 0 && p.calls >= lim.MaxTotalCalls:
		bound = fmt.Sprintf("max_messages=%d (model calls in the conversation)", lim.MaxTotalCalls)
	case lim.MaxCalls > 0 && p.turnCalls >= lim.MaxCalls:
		bound = fmt.Sprintf("max_turns=%d (model calls in a turn)", lim.MaxCalls)
	case lim.MaxTokens > 0 && p.usage.TotalTokens >= lim.MaxTokens:
		bound = fmt.Sprintf("max_tokens=%d (%d tokens spent)", lim.MaxTokens, p.usage.TotalTokens)
	case !priced:
		bound = fmt.Sprintf("max_cost_usd=%g (model %q, which the call names, has no price, so what it costs cannot be known; give it one in a prices file)", lim.MaxCostUSD, called)
	case lim.MaxCostUSD > 0 && p.cost >= lim.MaxCostUSD:
		bound = fmt.Sprintf("max_cost_usd=%g (%s spent)", lim.MaxCostUSD, pricing.Format(p.cost, true))
	}
	if bound != "" {
		if p.exceeded == "" {
			p.exceeded = bound
		}
		return price, bound
	}
	p.calls++
	p.turnCalls++
	return price, ""
}

// calledModel is the model a model call names: in its body ("model"), or
// in its path (Gemini); "" when it names none.
func calledModel(rt aRoute, body []byte) string {
	if rt.api == model.APIGemini {
		m, _, _ := model.GeminiPath(rt.path)
		return m
	}
	var named struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &named)
	return named.Model
}

func (p *Proxy) spent(u model.Usage, price pricing.Price) {
	p.mu.Lock()
	p.usage.Add(u)
	p.cost += bounds.Cost(price, u)
	p.mu.Unlock()
}

// beside passes on a call an agent makes beside its model calls (counting
// tokens, listing models), and records it: every call the agent makes is in
// exchanges.jsonl, these marked as what they asked.
func (p *Proxy) beside(w http.ResponseWriter, r *http.Request, rt aRoute, call string, body []byte) {
	// Recorded in its turn among the model calls, and waited for by Drain.
	p.ordered(func(record func(model.Exchange, *model.Response)) { p.serveBeside(w, r, rt, call, body, record) })
}

func (p *Proxy) serveBeside(w http.ResponseWriter, r *http.Request, rt aRoute, call string, body []byte, record func(model.Exchange, *model.Response)) {
	start := p.cfg.Now()
	var keep bytes.Buffer
	x := model.Exchange{Time: start.UTC(), API: rt.api, Attempt: 1, Call: call, Request: body}
	if len(body) == 0 {
		x.Request = json.RawMessage(`{"method": ` + strconv.Quote(r.Method) + `, "path": ` + strconv.Quote(r.URL.Path) + `}`)
	}
	status, _, err := p.forward(w, r, rt, body, &keep)
	x.Duration = p.cfg.Now().Sub(start)
	switch {
	case err != nil:
		x.Error = err.Error()
	case status/100 != 2:
		x.Error = fmt.Sprintf("HTTP %d", status)
	}
	if json.Valid(keep.Bytes()) {
		x.Response = keep.Bytes()
	} else if keep.Len() > 0 {
		x.Response, _ = json.Marshal(keep.String())
	}
	record(x, nil)
}

// forward passes a request on to the upstream with its key and copies the
// answer back as it comes (an event stream chunk by chunk), keeping a copy
// of the body in keep when keep is not nil. It answers 502 itself when the
// upstream cannot be reached, and returns the upstream's status and media
// type, or the error.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, rt aRoute, body []byte, keep *bytes.Buffer) (int, string, error) {
	// Not ended by the agent hanging up: its reply is still read whole for
	// the record, within the timeout.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), p.cfg.Timeout)
	defer cancel()
	// The path is one that route let through, with the query it wrote.
	target := strings.TrimSuffix(p.cfg.Upstream.BaseURL, "/") + rt.path
	if rt.query != "" {
		target += "?" + rt.query
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, target, bytes.NewReader(body))
	if err != nil {
		return 0, "", fmt.Errorf("forward to %s: %w", p.cfg.Upstream.BaseURL, err)
	}
	for k, vs := range r.Header {
		if !dropped(k) {
			out.Header[k] = vs
		}
	}
	if key := p.cfg.Upstream.APIKey; key != "" {
		switch p.cfg.Upstream.Kind {
		case model.KindAnthropic:
			out.Header.Set("X-Api-Key", key)
		case model.KindGemini:
			out.Header.Set("X-Goog-Api-Key", key)
		default:
			out.Header.Set("Authorization", "Bearer "+key)
		}
	}
	if p.cfg.Upstream.Kind == model.KindAnthropic && out.Header.Get("Anthropic-Version") == "" {
		out.Header.Set("Anthropic-Version", "2023-06-01")
	}
	resp, err := p.client.Do(out)
	if err != nil {
		msg := fmt.Sprintf("the model at %s did not answer: %v", p.cfg.Upstream.BaseURL, err)
		if ctx.Err() != nil {
			msg = fmt.Sprintf("the model at %s did not answer within %s", p.cfg.Upstream.BaseURL, p.cfg.Timeout)
		}
		writeError(w, rt.api, http.StatusBadGateway, "upstream_unavailable", msg)
		return 0, "", errors.New(msg)
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if !dropped(k) && k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	var sink io.Writer = io.Discard
	if keep != nil {
		sink = &capped{buf: keep, left: MaxBody}
	}
	buf := make([]byte, 32<<10)
	gone := false // the agent stopped reading (it may exit once it has what it needs): the reply is still read whole, for the record
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			sink.Write(buf[:n])
			if !gone {
				_, werr := w.Write(buf[:n])
				gone = werr != nil
				if flusher != nil && !gone {
					flusher.Flush()
				}
			}
		}
		if rerr == io.EOF {
			return resp.StatusCode, mediaType(resp), nil
		}
		if rerr != nil {
			return resp.StatusCode, mediaType(resp), fmt.Errorf("the model's reply was cut: %w", rerr)
		}
	}
}

// dropped are the headers not passed on: the key, hop-by-hop headers and
// those the transport sets itself.
func dropped(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "X-Api-Key", "X-Goog-Api-Key", "Host", "Content-Length", "Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Accept-Encoding", "Content-Encoding", "Cookie", "Set-Cookie":
		return true
	}
	return false
}

func mediaType(r *http.Response) string {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// capped keeps at most left bytes.
type capped struct {
	buf  *bytes.Buffer
	left int
}

func (c *capped) Write(b []byte) (int, error) {
	n := min(len(b), c.left)
	c.buf.Write(b[:n])
	c.left -= n
	return len(b), nil
}

// errorMessage is the message of an OpenAI-style error body, or "".
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(body, &e)
	return e.Error.Message
}

// writeError answers an error in the API's shape, and returns its body.
// Only an unreachable model (502) is worth asking again: the others say so
// to the SDKs that honour x-should-retry.
func writeError(w http.ResponseWriter, api string, status int, code, msg string) []byte {
	body, _ := json.Marshal(model.ErrorBody(api, status, code, msg))
	w.Header().Set("Content-Type", "application/json")
	if status != http.StatusBadGateway {
		w.Header().Set("x-should-retry", "false")
	}
	w.WriteHeader(status)
	w.Write(body)
	return body
}
