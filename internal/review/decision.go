package review

import (
	"fmt"
	"strings"
)

// Action is what a review or approval form (its decision field) or the
// JSON API's decision asks for: one vocabulary for the pages that send it
// and the handlers that read it.
type Action string

// The decisions.
const (
	Approve     Action = "approve"      // apply the diff; let the command run
	Reject      Action = "reject"       // the diff is not applied
	Partial     Action = "partial"      // apply the parts accepted
	Changes     Action = "changes"      // ask the agent for changes
	Deny        Action = "deny"         // the command does not run
	ApproveRule Action = "approve-rule" // let it run, and make a standing rule
)

// MaxName is the longest name a decision is recorded under.
const MaxName = 80

// CheckName is the problem with the name a person decides under, nil when
// there is none: it is given, and at most MaxName characters.
func CheckName(name string) error {
	if name = strings.TrimSpace(name); name == "" || len(name) > MaxName {
		return &Invalid{"reviewer", fmt.Sprintf("give your name (at most %d characters), so the decision says who made it", MaxName)}
	}
	return nil
}
