package server

import "time"

// The JSON API's answers, one type each and all here: docs/api.md names
// their fields as `{"field", …}` (TestTheAPIsAnswersAreDocumented).

// apiErrorBody is every error: the message, and the problems by field of
// a request that was not valid.
type apiErrorBody struct {
	Error  string            `json:"error"`
	Fields map[string]string `json:"fields,omitempty"`
}

// runAccepted is a run queued (launched, continued, resumed).
type runAccepted struct {
	RunID string `json:"run_id"`
	URL   string `json:"url"`
	API   string `json:"api"`
}

func acceptedRun(id string) runAccepted {
	return runAccepted{RunID: id, URL: "/runs/" + id, API: "/api/v1/runs/" + id}
}

// runStopping is a stop asked of a run.
type runStopping struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"` // "stopping"
}

// approvalList is the gated calls a run waits on.
type approvalList struct {
	Approvals []approvalItem `json:"approvals"`
}

type approvalItem struct {
	ID      int64     `json:"id"`
	CallID  string    `json:"call_id"`
	Tool    string    `json:"tool"`
	Args    string    `json:"args"`
	Command string    `json:"command"`
	AskedAt time.Time `json:"asked_at"`
}

// approvalAnswered is an approval request answered.
type approvalAnswered struct {
	RunID    string `json:"run_id"`
	ID       string `json:"id"`
	Decision string `json:"decision"`
}

// health is /healthz's answer.
type health struct {
	Status string `json:"status"` // "ok" or "unavailable"
	Error  string `json:"error,omitempty"`
}

// suiteAccepted is a suite queued.
type suiteAccepted struct {
	Suite string `json:"suite"`
	URL   string `json:"url"`
	API   string `json:"api"`
}
