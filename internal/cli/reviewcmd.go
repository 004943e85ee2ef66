package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/run"
)

// runReview asks for changes of a run at a terminal: the summary and the
// line comments become the agent's next message, run at once as the next
// run of the run's session.
func runReview(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "review", "--request-changes TEXT [--comment PATH:LINES:TEXT …] (--model PROFILE | --script FILE) [run flags] RUN_ID", `
Ask for changes of a run that awaits review: the summary (--request-changes)
and each --comment (on LINES of the diff: 12 is the new file's line 12, L7
the old file's line 7 (a deleted line), 10-14 or L7-9 a range of one hunk;
PATH:0:TEXT for a file) are sent to the agent as its next message, on the same workspace, as
the next run of the run's session (a run outside a session becomes one).
The run itself still awaits review: a session's runs are applied in order.
See docs/review.md.`)
	var comments stringList
	summary := fs.String("request-changes", "", "what to change, in a few words (the summary)")
	fs.Var(&comments, "comment", "a comment on lines: `PATH:LINES:TEXT`, LINES 12, L7, 10-14 or 0 (repeatable)")
	f := addRunFlags(fs)
	if err := parseFlags(fs, "review", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("review", "name one RUN_ID")
	}
	if *summary == "" && len(comments) == 0 {
		return usagef("review", "say what to change: --request-changes TEXT and/or --comment PATH:LINES:TEXT")
	}
	cr := bundle.ChangeRequest{By: osUser(), At: time.Now().UTC(), Summary: *summary}
	for _, c := range comments {
		path, rest, ok1 := strings.Cut(c, ":")
		lines, text, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || path == "" {
			return usagef("review", "--comment %q: want PATH:LINES:TEXT (LINES 12, L7, 10-14, or 0 for the file)", c)
		}
		cm := bundle.Comment{Path: path, Text: text}
		if lines != "0" {
			span, err := patch.ParseSpan(lines)
			if err != nil {
				return usagef("review", "--comment %q: %v", c, err)
			}
			cm = records.OnSpan(cm, span)
		}
		cr.Comments = append(cr.Comments, cm)
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
