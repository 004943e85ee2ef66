package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/run"
)

// runReview asks for changes of a run at a terminal: the summary and the
// line comments become the agent's next message, run at once as the next
// run of the run's session.
func runReview(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "review", "--request-changes TEXT [--comment PATH:LINE:TEXT …] (--model PROFILE | --script FILE) [run flags] RUN_ID", `
Ask for changes of a run that awaits review: the summary (--request-changes)
and each --comment (on a line of the new side of the diff; PATH:0:TEXT for a
file) are sent to the agent as its next message, on the same workspace, as
the next run of the run's session (a run outside a session becomes one).
The run itself still awaits review: a session's runs are applied in order.
See docs/review.md.`)
	var comments stringList
	summary := fs.String("request-changes", "", "what to change, in a few words (the summary)")
	fs.Var(&comments, "comment", "a comment on a line: `PATH:LINE:TEXT` (repeatable)")
	f := addRunFlags(fs)
	if err := parseFlags(fs, "review", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("review", "name one RUN_ID")
	}
	if *summary == "" && len(comments) == 0 {
		return usagef("review", "say what to change: --request-changes TEXT and/or --comment PATH:LINE:TEXT")
	}
	cr := bundle.ChangeRequest{By: osUser(), At: time.Now().UTC(), Summary: *summary}
	for _, c := range comments {
		path, rest, ok1 := strings.Cut(c, ":")
		line, text, ok2 := strings.Cut(rest, ":")
		n, err := strconv.Atoi(line)
		if !ok1 || !ok2 || err != nil || n < 0 || path == "" {
			return usagef("review", "--comment %q: want PATH:LINE:TEXT (LINE 0 for the file)", c)
		}
		cr.Comments = append(cr.Comments, bundle.Comment{Path: path, Line: n, Text: text})
	}
	req, err := f.request(env, "review")
	if err != nil {
		return err
	}
	r, err := newRunner(env, *f.data)
	if err != nil {
		return err
	}
	runID := fs.Arg(0)
	session, message, err := r.Records().RequestChanges(runID, cr)
	if err != nil {
		return usagef("review", "%v", err)
	}
	req.ID, req.Session, req.Task, req.Addresses = run.NewRunID(time.Now()), session, message, runID
	if err := r.Records().LinkRequest(runID, req.ID); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "asked for changes of run %s; session %s goes on with run %s\n", runID, session, req.ID)
	return buildAndRun(ctx, r, "review", req)
}
