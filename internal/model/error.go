package model

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Domain names who is at fault for a failure (see DESIGN.md).
type Domain string

// Failure domains a model call can end in.
const (
	DomainModel    Domain = "model"    // the provider: connectivity, rate limit, bad response
	DomainScenario Domain = "scenario" // a model script did not match the request
	DomainAgent    Domain = "agent"
)

// Error codes.
const (
	CodeRateLimited    = "rate_limited"
	CodeProviderError  = "provider_error"
	CodeTimeout        = "timeout"
	CodeUnreachable    = "unreachable"
	CodeAuth           = "auth_failed"
	CodeBadRequest     = "bad_request"
	CodeNotFound       = "not_found"
	CodeBadResponse    = "bad_response"
	CodeStreamCut      = "stream_cut" // a streamed reply ended before its finish_reason
	CodeScriptMismatch = "script_mismatch"
	CodeScriptEnded    = "script_ended"
)

// Error is a failed model call with its failure domain, a stable code, and
// whether trying again may help.
type Error struct {
	Domain    Domain
	Code      string
	Message   string
	Retryable bool
	Status    int // HTTP status, 0 when there was no response
	Attempts  int
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s: %s", e.Domain, e.Code, e.Message)
	if e.Attempts > 1 {
		msg += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return msg
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrorBody is an error answer in the shape the API's clients read, with
// code (a stable name such as script_mismatch) in it: OpenAI's
// {"error": {message, type, code}}, Anthropic's {"type": "error", "error":
// {type, message}}, Google's {"error": {code: status, message, status}}.
func ErrorBody(api string, status int, code, msg string) map[string]any {
	switch api {
	case APIMessages:
		return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg, "code": code}}
	case APIGemini:
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": googleStatus(status), "reason": code}}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": code, "param": nil}}
}

// googleStatus is the canonical status Google's APIs pair with an HTTP
// status.
func googleStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 502, 503:
		return "UNAVAILABLE"
	}
	return "UNKNOWN"
}

// ScriptFailure is the scenario-domain error an error body of any API
// carries when a scripted model refused a request (script_mismatch,
// script_ended), or nil for any other body.
func ScriptFailure(body []byte) *Error {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Reason  string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return nil
	}
	code, _ := e.Error.Code.(string)
	if e.Error.Reason != "" {
		code = e.Error.Reason
	}
	if code != CodeScriptMismatch && code != CodeScriptEnded {
		return nil
	}
	return &Error{Domain: DomainScenario, Code: code, Message: e.Error.Message, Status: 409}
}
