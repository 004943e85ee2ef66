package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

func TestVerifyChecksAndVerifier(t *testing.T) {
	verifier := func(answer string) *run.ModelChoice {
		s, err := script.Parse("verifier.yaml", []byte("steps:\n  - expect: {last_contains: \"math.Round\"}\n    reply: {content: '"+answer+"'}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return &run.ModelChoice{Script: s}
	}
	tests := []struct {
		name     string
		checks   []string
		verifier *run.ModelChoice
		status   bundle.Status
		verdict  string
		parseOK  string // "", "true", "false"
		issue    string
	}{
		{"checks pass", []string{"grep -q math.Round money.go", "true"}, nil, bundle.StatusAwaitingReview, "pass", "", ""},
		{"a check fails", []string{"grep -q does-not-occur money.go"}, nil, bundle.StatusFailed, "fail", "", `check "grep -q does-not-occur money.go" failed`},
		{"verifier passes", nil, verifier(`{"verdict": "pass", "issues": [], "confidence": 0.9}`), bundle.StatusAwaitingReview, "pass", "true", ""},
		{"verifier fails", nil, verifier(`{"verdict": "fail", "issues": ["no test added"], "confidence": 0.7}`), bundle.StatusFailed, "fail", "true", "no test added"},
		{"verifier rambles", nil, verifier(`Looks good to me!`), bundle.StatusAwaitingReview, "unsure", "false", "not the JSON asked for: Looks good to me!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := demoSpec(t)
			spec.Checks, spec.Verifier = tc.checks, tc.verifier
			res, err := newRunner(t).Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			v := res.Receipt.Verify
			if res.Receipt.Status != tc.status || v == nil || v.Verdict != tc.verdict {
				t.Fatalf("status %s verify %+v failure %+v", res.Receipt.Status, v, res.Receipt.Failure)
			}
			got := ""
			if v.ParseOK != nil {
				got = map[bool]string{true: "true", false: "false"}[*v.ParseOK]
			}
			if got != tc.parseOK || !strings.Contains(strings.Join(v.Issues, "; "), tc.issue) {
				t.Fatalf("parse_ok %q issues %q", got, v.Issues)
			}
			if len(tc.checks) > 0 && len(v.Checks) != len(tc.checks) {
				t.Fatalf("checks %+v", v.Checks)
			}
		})
	}
}
