package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
)

// errNoAnswer is a prompt that got no answer (end of input): nothing is
// decided.
var errNoAnswer = errors.New("no answer (end of input)")

// terminalReviewer shows the diff and asks at the terminal whether to apply
// it: y or yes applies, anything else rejects, no answer decides nothing.
func terminalReviewer(in io.Reader, out io.Writer, who, target string) gate.Reviewer {
	return gate.ReviewerFunc(func(ctx context.Context, p gate.Proposal) (gate.Verdict, error) {
		fmt.Fprintf(out, "%s\nApply %d file(s) to %s? [y/N] ", p.Diff, len(p.Changed), target)
		type answer struct {
			line string
			err  error
		}
		ch := make(chan answer, 1)
		go func() {
			line, err := bufio.NewReader(in).ReadString('\n')
			ch <- answer{line, err}
		}()
		var a answer
		select {
		case <-ctx.Done():
			return gate.Verdict{}, ctx.Err()
		case a = <-ch:
		}
		if a.err != nil && (!errors.Is(a.err, io.EOF) || strings.TrimSpace(a.line) == "") {
			if errors.Is(a.err, io.EOF) {
				return gate.Verdict{}, errNoAnswer
			}
			return gate.Verdict{}, fmt.Errorf("read the answer: %w", a.err)
		}
		switch strings.ToLower(strings.TrimSpace(a.line)) {
		case "y", "yes":
			return gate.Verdict{Approved: true, By: who, Reason: "approved at the terminal"}, nil
		}
		return gate.Verdict{By: who, Reason: "rejected at the terminal"}, nil
	})
}

// reviewRun reviews the run in dir through the gate; the audit entry is
// written as the CLI user.
func reviewRun(ctx context.Context, r *run.Runner, dir string, rc *bundle.Receipt, reviewer gate.Reviewer, force bool) (*bundle.Review, error) {
	record := func(ctx context.Context, d gate.Decided) error {
		st, err := store.Open(ctx, dbPath(r.DataDir))
		if err != nil {
			return err
		}
		defer st.Close()
		return st.Audit(ctx, store.AuditEntry{Actor: d.Actor, Action: d.Action(), Object: d.RunID, Detail: d.AuditDetail(), Op: d.Op})
	}
	opt, err := r.ReviewOptions(dir, rc)
	if err != nil {
		return nil, err
	}
	opt.Force, opt.Actor, opt.Record = force, "cli:"+osUser(), record
	rv, err := gate.Review(ctx, dir, reviewer, opt)
	var ce *gate.ConflictError
	var na *gate.NotAppliableError
	var oo *gate.OutOfOrderError
	switch {
	case errors.Is(err, gate.ErrAlreadyReviewed):
		return nil, fmt.Errorf("%w; nothing was done", err)
	case errors.As(err, &ce):
		return nil, exitWith(ExitProblems, err)
	case errors.As(err, &na), errors.As(err, &oo), errors.Is(err, gate.ErrNoDecision), errors.Is(err, gate.ErrBusy):
		return nil, exitWith(ExitUsage, err)
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
