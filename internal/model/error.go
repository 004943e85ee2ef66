package model

import (
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
