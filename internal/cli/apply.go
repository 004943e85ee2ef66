package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/run"
)

// gateReviewer shows the diff and asks the approver whether to apply it.
func gateReviewer(env Env, ask agent.Approver, target string) gate.Reviewer {
	return gate.ReviewerFunc(func(ctx context.Context, p gate.Proposal) (gate.Verdict, error) {
		fmt.Fprintf(env.Stdout, "%s\n", p.Diff)
		d, err := ask.Approve(ctx, agent.ApprovalRequest{Tool: "apply", Args: fmt.Sprintf(`{"command": "apply %d file(s) to %s"}`, len(p.Changed), target)})
		if err != nil {
			return gate.Verdict{}, err
		}
		return gate.Verdict{Approved: d.Approved, By: d.By, Reason: d.Reason}, nil
	})
}

func reviewRun(ctx context.Context, r *run.Runner, dir string, rc *bundle.Receipt, reviewer gate.Reviewer) (*bundle.Review, error) {
	rv, err := gate.Review(ctx, dir, reviewer, gate.Options{Workspace: r.BaseRepo(dir, rc)})
	var ce *gate.ConflictError
	switch {
	case errors.Is(err, gate.ErrAlreadyReviewed):
		return nil, fmt.Errorf("%w; nothing was done", err)
	case errors.As(err, &ce):
		return nil, exitWith(ExitProblems, err)
	case err != nil:
		return nil, err
	}
	return rv, nil
}

// exitWith prints err and ends with code.
func exitWith(code int, err error) error { return printedError{code: code, err: err} }

type printedError struct {
	code int
	err  error
}

func (e printedError) Error() string { return e.err.Error() }
