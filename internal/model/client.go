package model

import (
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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
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

// Client is an OpenAI-compatible chat completions client.
type Client struct {
	endpoint Endpoint
	sdk      openai.Client
	retry    RetryPolicy
	record   Recorder
	sleep    func(context.Context, time.Duration) error
}

// NewClient returns a client for endpoint. record may be nil.
func NewClient(endpoint Endpoint, retry RetryPolicy, record Recorder) *Client {
	if record == nil {
		record = func(Exchange) {}
	}
	sdk := openai.NewClient(
		option.WithBaseURL(strings.TrimSuffix(endpoint.BaseURL, "/")+"/"),
		option.WithAPIKey(apiKey(endpoint)),
		option.WithMaxRetries(0), // retries are ours, so every attempt is recorded
		// The SDK's own default clones the transport for each client, so
		// every run would keep its own idle connections open; all clients
		// share the standard library's.
		option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport}),
	)
	return &Client{endpoint: endpoint, sdk: sdk, retry: retry, record: record, sleep: sleepCtx}
}

func apiKey(endpoint Endpoint) string {
	if endpoint.APIKey == "" {
		return "none" // local servers accept any key; the SDK wants one
	}
	return endpoint.APIKey
}

// Model is the model name the client asks for.
func (c *Client) Model() string { return c.endpoint.Model }

// Complete sends the request, retrying what is worth retrying, and returns
// the reply or an *Error.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	attempts := max(c.retry.MaxAttempts, 1)
	var last *Error
	for attempt := 1; attempt <= attempts; attempt++ {
		resp, err := c.attempt(ctx, params, req.Stream, attempt)
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

func (c *Client) attempt(ctx context.Context, params openai.ChatCompletionNewParams, stream bool, n int) (*Response, error) {
	actx := ctx
	if c.retry.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.retry.AttemptTimeout)
		defer cancel()
	}
	start := time.Now()
	// What went on the wire is what is recorded: the middleware keeps the
	// request's bytes as the SDK sent them.
	var sent []byte
	keep := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if r.GetBody != nil {
			if b, err := r.GetBody(); err == nil {
				sent, _ = io.ReadAll(b)
				b.Close()
			}
		}
		return next(r)
	})
	var raw []byte
	var resp *Response
	var err error
	if stream {
		resp, raw, err = c.streamed(actx, params, keep)
	} else {
		var cc *openai.ChatCompletion
		if cc, err = c.sdk.Chat.Completions.New(actx, params, keep); err == nil {
			raw = []byte(cc.RawJSON())
			resp, err = fromCompletion(cc)
		}
	}
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		err = &Error{Domain: DomainModel, Code: CodeTimeout, Retryable: true,
			Message: fmt.Sprintf("%s did not answer within %s", c.endpoint.BaseURL, c.retry.AttemptTimeout)}
	}
	if len(sent) == 0 { // not sent at all
		sent, _ = json.Marshal(params)
	}
	ex := Exchange{Time: start.UTC(), Duration: time.Since(start), Attempt: n, Request: sent}
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

// params is req as the SDK's typed request.
func (c *Client) params(req Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: c.endpoint.Model}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments}}})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, fmt.Errorf("encode chat request: message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &fn.Parameters); err != nil {
				return p, fmt.Errorf("encode chat request: the parameters of tool %s are not a JSON object: %w", t.Name, err)
			}
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.Stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p, nil
}

// fromCompletion checks a reply for what the loop needs and names what is
// missing.
func fromCompletion(cc *openai.ChatCompletion) (*Response, error) {
	bad := func(format string, args ...any) error {
		return &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf(format, args...)}
	}
	if len(cc.Choices) == 0 {
		return nil, bad("the reply has no choices")
	}
	ch := cc.Choices[0]
	msg := Message{Role: RoleAssistant, Content: ch.Message.Content}
	for i, tc := range ch.Message.ToolCalls {
		if strings.TrimSpace(tc.ID) == "" {
			return nil, bad("tool call %d (%s) has no id", i+1, tc.Function.Name)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	u := Usage{PromptTokens: cc.Usage.PromptTokens, CompletionTokens: cc.Usage.CompletionTokens, TotalTokens: cc.Usage.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return &Response{Message: msg, FinishReason: ch.FinishReason, Model: cc.Model, Usage: u}, nil
}

// streamed sends a streaming request and folds the chunks into one reply.
// The raw record is the folded reply as a chat completion object.
func (c *Client) streamed(ctx context.Context, params openai.ChatCompletionNewParams, keep option.RequestOption) (*Response, []byte, error) {
	var httpResp *http.Response
	stream := c.sdk.Chat.Completions.NewStreaming(ctx, params, keep, option.WithResponseInto(&httpResp))
	defer stream.Close()
	var content strings.Builder
	var calls []ToolCall
	var usage Usage
	finish, modelName, chunks := "", "", 0
	for stream.Next() {
		chunk := stream.Current()
		chunks++
		modelName = chunk.Model
		if chunk.JSON.Usage.Valid() {
			usage = Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens, TotalTokens: chunk.Usage.TotalTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			content.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				i := int(tc.Index)
				if i < 0 || i > 128 {
					return nil, nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("streamed tool call index %d is out of range", tc.Index)}
				}
				for len(calls) <= i {
					calls = append(calls, ToolCall{})
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				calls[i].Name += tc.Function.Name
				calls[i].Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		var streamErr *ssestream.StreamError
		if errors.As(err, &streamErr) { // an error event in the stream: the provider failed mid-reply
			return nil, nil, &Error{Domain: DomainModel, Code: CodeProviderError, Retryable: true, Message: fmt.Sprintf("%s failed in the middle of its reply: %v", c.endpoint.BaseURL, err)}
		}
		return nil, nil, err
	}
	if ct := contentType(httpResp); ct != "text/event-stream" {
		return nil, nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("%s answered a streaming request with %q, not an event stream; set stream: false in the profile if it cannot stream", c.endpoint.BaseURL, ct)}
	}
	switch {
	case chunks == 0:
		return nil, nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: fmt.Sprintf("%s ended the stream without sending any reply", c.endpoint.BaseURL)}
	case finish == "":
		return nil, nil, &Error{Domain: DomainModel, Code: CodeStreamCut, Retryable: true, Message: fmt.Sprintf("%s: the stream was cut after %d chunk(s), before the reply ended (no finish_reason)", c.endpoint.BaseURL, chunks)}
	}
	folded := wireResponse{Model: modelName, Object: "chat.completion", Choices: []wireChoice{{
		FinishReason: finish,
		Message:      wireMessage{Role: RoleAssistant, Content: wireContent(content.String()), ToolCalls: toWireCalls(calls)},
	}}, Usage: &usage}
	raw, _ := json.Marshal(folded)
	resp, err := DecodeResponse(raw)
	return resp, raw, err
}

func contentType(r *http.Response) string {
	if r == nil {
		return ""
	}
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// classify turns SDK and transport errors into *Error.
func (c *Client) classify(err error) error {
	if e, ok := AsError(err); ok {
		return e
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := strings.TrimSpace(apiErr.Message)
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		e := &Error{Domain: DomainModel, Status: apiErr.StatusCode, Message: fmt.Sprintf("%s answered %d: %s", c.endpoint.BaseURL, apiErr.StatusCode, msg)}
		switch {
		case apiErr.Code == CodeScriptMismatch || apiErr.Code == CodeScriptEnded:
			e.Domain, e.Code, e.Message = DomainScenario, apiErr.Code, msg
		case apiErr.StatusCode == http.StatusTooManyRequests:
			e.Code, e.Retryable = CodeRateLimited, true
		case apiErr.StatusCode >= 500:
			e.Code, e.Retryable = CodeProviderError, true
		case apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden:
			e.Code = CodeAuth
			e.Message += "; check the key in the profile's api_key_env variable"
		case apiErr.StatusCode == http.StatusNotFound:
			e.Code = CodeNotFound
			e.Message += fmt.Sprintf("; check base_url and that model %q exists there", c.endpoint.Model)
		case apiErr.StatusCode == http.StatusRequestTimeout:
			e.Code, e.Retryable = CodeTimeout, true
		default:
			e.Code = CodeBadRequest
		}
		if e.Retryable && apiErr.Response != nil {
			if wait := parseRetryAfter(apiErr.Response.Header.Get("Retry-After")); wait > 0 {
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
