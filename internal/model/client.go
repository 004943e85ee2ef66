package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RetryPolicy bounds how a call is retried: on 429, 5xx, timeouts,
// connection failures, cut streams and mid-stream errors only, at most
// MaxAttempts times in all, waiting a random time up to an exponentially
// growing cap (full jitter) between attempts — or, when the answer says
// Retry-After, that long (up to MaxRetryAfter; a longer wait fails the call
// at once as rate_limited, naming the wait asked for).
type RetryPolicy struct {
	MaxAttempts    int
	BaseDelay      time.Duration
	MaxDelay       time.Duration
	AttemptTimeout time.Duration // a provider that hangs longer than this is a timeout
}

// MaxRetryAfter is the longest Retry-After a call waits for.
const MaxRetryAfter = 120 * time.Second

// DefaultRetryPolicy suits live providers.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 20 * time.Second, AttemptTimeout: 120 * time.Second}
}

// Endpoint is where a client sends its requests.
type Endpoint struct {
	BaseURL string // e.g. https://api.openai.com/v1
	Model   string
	APIKey  string // the key itself, read from the environment; never stored
	// Kind is the provider's kind (KindOpenAI, KindAnthropic, KindGemini):
	// which APIs it speaks and how it takes its key. "" is a scripted
	// model, which speaks every API.
	Kind string
}

// The kinds of provider a profile names.
const (
	KindOpenAI    = "openai"    // chat completions and the Responses API; Authorization: Bearer
	KindAnthropic = "anthropic" // the Messages API; x-api-key
	KindGemini    = "gemini"    // the Gemini API; x-goog-api-key
)

// Kinds are the kinds of provider, the default first.
var Kinds = []string{KindOpenAI, KindAnthropic, KindGemini}

// Speaks says whether the endpoint answers calls of the API.
func (e Endpoint) Speaks(api string) bool {
	switch e.Kind {
	case "":
		return true
	case KindAnthropic:
		return api == APIMessages
	case KindGemini:
		return api == APIGemini
	}
	return api == APIChat || api == APIResponses || api == ""
}

// Client is an OpenAI-compatible chat completions client, speaking the
// wire format itself (no SDK: the binary stays small, and what is recorded
// is exactly what went on the wire).
type Client struct {
	endpoint Endpoint
	http     *http.Client
	retry    RetryPolicy
	record   Recorder
	sleep    func(context.Context, time.Duration) error
}

// NewClient returns a client for endpoint. record may be nil.
func NewClient(endpoint Endpoint, retry RetryPolicy, record Recorder) *Client {
	if record == nil {
		record = func(Exchange) {}
	}
	// Every client shares the standard library's transport (and its idle
	// connections); retries are the client's own, so each is recorded.
	return &Client{endpoint: endpoint, http: &http.Client{Transport: http.DefaultTransport}, retry: retry, record: record, sleep: sleepCtx}
}

func apiKey(endpoint Endpoint) string {
	if endpoint.APIKey == "" {
		return "none" // local servers accept any key; some want one
	}
	return endpoint.APIKey
}

// Model is the model name the client asks for.
func (c *Client) Model() string { return c.endpoint.Model }

// Complete sends the request, retrying what is worth retrying, and returns
// the reply or an *Error.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	body, err := chatRequestBody(c.endpoint.Model, req)
	if err != nil {
		return nil, err
	}
	attempts := max(c.retry.MaxAttempts, 1)
	var last *Error
	for attempt := 1; attempt <= attempts; attempt++ {
		resp, err := c.attempt(ctx, body, req.Stream, attempt)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		last, _ = AsError(err)
		if last == nil {
			return nil, err
		}
		last.Attempts = attempt
		if !last.Retryable || attempt == attempts {
			break
		}
		var ra retryAfter
		if errors.As(err, &ra) && ra.wait > MaxRetryAfter {
			last.Retryable = false
			last.Message += fmt.Sprintf("; it asked to wait %s before trying again (Retry-After), longer than proctor waits (%s): try later, or lower --parallel", ra.wait.Round(time.Second), MaxRetryAfter)
			break
		}
		if err := c.sleep(ctx, c.backoff(attempt, err)); err != nil {
			return nil, err
		}
	}
	return nil, last
}

func (c *Client) backoff(attempt int, err error) time.Duration {
	limit := c.retry.BaseDelay << (attempt - 1)
	if limit > c.retry.MaxDelay || limit <= 0 {
		limit = c.retry.MaxDelay
	}
	var ra retryAfter
	if errors.As(err, &ra) && ra.wait > 0 {
		return ra.wait
	}
	if limit <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(limit) + 1))
}

// retryAfter is a retryable error whose response said how long to wait.
type retryAfter struct {
	err  *Error
	wait time.Duration
}

func (r retryAfter) Error() string { return r.err.Error() }
func (r retryAfter) Unwrap() error { return r.err }

func (c *Client) attempt(ctx context.Context, body []byte, stream bool, n int) (*Response, error) {
	actx := ctx
	if c.retry.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.retry.AttemptTimeout)
		defer cancel()
	}
	start := time.Now()
	raw, resp, err := c.send(actx, body, stream)
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		err = &Error{Domain: DomainModel, Code: CodeTimeout, Retryable: true,
			Message: fmt.Sprintf("%s did not answer within %s", c.endpoint.BaseURL, c.retry.AttemptTimeout)}
	}
	ex := Exchange{Time: start.UTC(), Duration: time.Since(start), Attempt: n, Request: body}
	if len(raw) > 0 && json.Valid(raw) {
		ex.Response = raw
	}
	if err != nil {
		err = c.classify(err)
		ex.Error = err.Error()
	}
	c.record(ex)
	return resp, err
}

// maxReplyBytes bounds a reply's body, and maxErrorBytes an error's.
const (
	maxReplyBytes = 64 << 20
	maxErrorBytes = 1 << 20
)

// statusError is an answer other than 2xx: its status, the API's error
// message and code when its body says them, and its headers.
type statusError struct {
	status        int
	message, code string
	header        http.Header
}

func (e *statusError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

// send posts body to the endpoint's chat completions and reads the reply
// (streamed or not): the reply as recorded (a stream folded into one
// object) and as read.
func (c *Client) send(ctx context.Context, body []byte, stream bool) ([]byte, *Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.endpoint.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+apiKey(c.endpoint))
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return nil, nil, err
	}
	defer hresp.Body.Close()
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBytes))
		var apiErr struct {
			Error struct {
				Message string          `json:"message"`
				Code    json.RawMessage `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &apiErr)
		code := ""
		if json.Unmarshal(apiErr.Error.Code, &code) != nil {
			code = strings.Trim(string(apiErr.Error.Code), `"`)
		}
		return nil, nil, &statusError{status: hresp.StatusCode, message: apiErr.Error.Message, code: code, header: hresp.Header}
	}
	if stream {
		return c.streamed(hresp)
	}
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxReplyBytes))
	if err != nil {
		return nil, nil, err
	}
	resp, err := DecodeResponse(raw)
	return raw, resp, err
}

// streamed reads a streamed reply, folding its chunks into one reply. The
// raw record is the folded reply as a chat completion object.
func (c *Client) streamed(hresp *http.Response) ([]byte, *Response, error) {
	if ct := contentType(hresp); ct != "text/event-stream" {
		return nil, nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("%s answered a streaming request with %q, not an event stream; set stream: false in the profile if it cannot stream", c.endpoint.BaseURL, ct)}
	}
	var fold chatFold
	if err := readEvents(hresp.Body, fold.add); err != nil {
		var inStream errInStream
		if errors.As(err, &inStream) { // an error event in the stream: the provider failed mid-reply
			return nil, nil, &Error{Domain: DomainModel, Code: CodeProviderError, Retryable: true, Message: fmt.Sprintf("%s failed in the middle of its reply: %v", c.endpoint.BaseURL, err)}
		}
		return nil, nil, err
	}
	switch {
	case fold.chunks == 0:
		return nil, nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("%s ended the stream without sending any reply", c.endpoint.BaseURL)}
	case fold.finish == "":
		return nil, nil, &Error{Domain: DomainModel, Code: CodeStreamCut, Retryable: true, Message: fmt.Sprintf("%s: the stream was cut after %d chunk(s), before the reply ended (no finish_reason)", c.endpoint.BaseURL, fold.chunks)}
	}
	raw, err := fold.reply()
	if err != nil {
		return nil, nil, err
	}
	resp, err := DecodeResponse(raw)
	return raw, resp, err
}

func contentType(r *http.Response) string {
	if r == nil {
		return ""
	}
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// classify turns answers and transport errors into *Error.
func (c *Client) classify(err error) error {
	if e, ok := AsError(err); ok {
		return e
	}
	var apiErr *statusError
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(apiErr.message)
		if msg == "" {
			msg = http.StatusText(apiErr.status)
		}
		e := &Error{Domain: DomainModel, Status: apiErr.status, Message: fmt.Sprintf("%s answered %d: %s", c.endpoint.BaseURL, apiErr.status, msg)}
		switch {
		case apiErr.code == CodeScriptMismatch || apiErr.code == CodeScriptEnded:
			e.Domain, e.Code, e.Message = DomainScenario, apiErr.code, msg
		case apiErr.status == http.StatusTooManyRequests:
			e.Code, e.Retryable = CodeRateLimited, true
		case apiErr.status >= 500:
			e.Code, e.Retryable = CodeProviderError, true
		case apiErr.status == http.StatusUnauthorized || apiErr.status == http.StatusForbidden:
			e.Code = CodeAuth
			e.Message += "; check the key in the profile's api_key_env variable"
		case apiErr.status == http.StatusNotFound:
			e.Code = CodeNotFound
			e.Message += fmt.Sprintf("; check base_url and that model %q exists there", c.endpoint.Model)
		case apiErr.status == http.StatusRequestTimeout:
			e.Code, e.Retryable = CodeTimeout, true
		default:
			e.Code = CodeBadRequest
		}
		if e.Retryable {
			if wait := parseRetryAfter(apiErr.header.Get("Retry-After")); wait > 0 {
				return retryAfter{err: e, wait: wait}
			}
		}
		return e
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return &Error{Domain: DomainModel, Code: CodeTimeout, Retryable: true, Message: fmt.Sprintf("%s timed out: %v", c.endpoint.BaseURL, err)}
	case errors.Is(err, context.Canceled):
		return err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Domain: DomainModel, Code: CodeUnreachable, Retryable: true, Message: fmt.Sprintf("cannot reach %s: %v", c.endpoint.BaseURL, err)}
	}
	return &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("%s: %v", c.endpoint.BaseURL, err)}
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
