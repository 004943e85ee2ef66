package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/review"
)

// approvalForm is an approval box's form: approve or deny, or approve and
// make a rule (what it matches, where and for how long).
type approvalForm struct {
	Reviewer    string        `form:"reviewer"`
	Decision    review.Action `form:"decision"` // approve, deny or approve-rule
	Reason      string        `form:"reason"`
	RuleMatch   string        `form:"rule_match"`
	RuleCommand string        `form:"rule_command"`
	RuleScope   string        `form:"rule_scope"`
	RuleFor     string        `form:"rule_for"`
}

// decideApproval answers a gated tool call a running run waits on.
func (s *Server) decideApproval(c echo.Context) error {
	id := c.Param("id")
	var f approvalForm
	if err := c.Bind(&f); err != nil {
		return err
	}
	who := s.decider(c, f.Reviewer)
	if who == "" {
		who = s.reviewerName(c)
	}
	num, _ := strconv.ParseInt(c.Param("n"), 10, 64)
	if f.Decision == review.ApproveRule {
		_, err := s.reviews.ApproveByRule(c.Request().Context(), id, num, s.who(c, who),
			review.RuleRequest{Match: f.RuleMatch, Command: f.RuleCommand, Scope: f.RuleScope, For: f.RuleFor})
		var invalid *review.Invalid
		switch {
		case errors.Is(err, review.ErrNotWaiting):
			return s.renderRun(c, id, "That request is no longer waiting: it was answered already, or timed out. No rule was made.", conflictStatus(c))
		case errors.As(err, &invalid):
			return s.renderRun(c, id, "No rule was made and the request still waits: "+invalid.Problem+".", shownErrors)
		case err != nil:
			return reviewError(err)
		}
	} else if err := s.answer(c, id, num, f.Decision, who, f.Reason); err != nil {
		if errors.Is(err, review.ErrNotWaiting) {
			return s.renderRun(c, id, "That request is no longer waiting: it was answered already, or timed out.", conflictStatus(c))
		}
		return err
	}
	// The page shows the request answered at once (it is off the board);
	// the run's own record of the decision comes through its event stream.
	if isHTMX(c) {
		return s.renderRun(c, id, "", http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+id)
}

// answer approves or denies request num that run id waits on.
func (s *Server) answer(c echo.Context, id string, num int64, decision review.Action, who, reason string) error {
	if decision != review.Approve && decision != review.Deny {
		return echo.NewHTTPError(http.StatusBadRequest, "decision: want approve or deny")
	}
	err := s.reviews.Answer(c.Request().Context(), id, num, s.who(c, who), decision == review.Approve, reason)
	if errors.Is(err, review.ErrNotWaiting) {
		return err
	}
	if err != nil {
		return reviewError(err)
	}
	return nil
}
