package server

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/web"
)

// rulesFile is the approval rules of the data folder.
func (s *Server) rulesFile() *rules.File { return rules.At(s.cfg.DataDir) }

// listRules shows every rule, newest first.
func (s *Server) listRules(c echo.Context) error {
	return s.renderRules(c, "", http.StatusOK)
}

func (s *Server) renderRules(c echo.Context, msg string, status int) error {
	list, err := s.rulesFile().List()
	if err != nil {
		msg, list = err.Error(), nil
	}
	slices.Reverse(list)
	return render(c, status, web.RulesView(web.RulesPage{Meta: s.meta(c, "Approval rules", web.NavRules), Rules: list, Now: time.Now(), Error: msg}))
}

// revokeRule ends a rule at once; it is audited.
func (s *Server) revokeRule(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return echo.NewHTTPError(http.StatusNotFound, "Rules are numbered 1, 2, …; there is no rule "+strconv.Quote(c.Param("id"))+".")
	}
	who := s.actor(c, s.reviewerName(c))
	r, err := s.rulesFile().Revoke(id, who)
	if errors.Is(err, rules.ErrNoRule) {
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	if err != nil {
		return s.renderRules(c, "Nothing was revoked: "+err.Error(), http.StatusInternalServerError)
	}
	s.auditAs(c, who, "rule-revoke", "rule #"+strconv.FormatInt(id, 10), r.Describe())
	return c.Redirect(http.StatusSeeOther, "/rules")
}
