package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/proctor-dev/proctor/internal/derive"
)

// scenarioFrom makes a regression scenario of a recorded run.
func scenarioFrom(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "scenario from", "RUN_ID|SESSION_ID --out DIR [--data DIR] [--max-bytes N]", `
Make a regression scenario of a recorded run (of a session: one multi-turn
scenario of its runs, a reviewer's Request changes its next turn): its source at the base
commit as fixture/ (files that look secret left out and listed), its task,
criteria, bounds and approvals as scenario.yaml, its model's recorded
replies as model.yaml (each tool call an intent where it is one, so it
plays under any agent), and checks from what it did: its check commands,
the paths it changed, and each changed file as the reviewer applied it
(expected/, compared byte for byte). The folder's name is the scenario's
id; it must not exist yet. docs/scenarios.md explains the folder.`)
	data := fs.String("data", "", "data `folder`")
	out := fs.String("out", "", "the scenario `folder` to make (its name is the scenario's id)")
	maxBytes := fs.Int64("max-bytes", derive.DefaultMaxBytes, "the fixture's files together, at most `N` bytes")
	if err := parseFlags(fs, "scenario from", args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return usagef("scenario from", "name one RUN_ID or SESSION_ID")
	case *out == "":
		return usagef("scenario from", "--out DIR: name the scenario folder to make")
	case *maxBytes <= 0:
		return usagef("scenario from", "--max-bytes %d: want a positive number of bytes", *maxBytes)
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	// A session's runs make one multi-turn scenario; a run, a scenario of
	// its own.
	recs := r.Records()
	ids := []string{fs.Arg(0)}
	if s, err := recs.LoadSession(fs.Arg(0)); err == nil {
		ids = s.Runs
	}
	var runs []derive.Run
	for _, id := range ids {
		b, dir, err := recs.Read(id)
		if err != nil {
			return usagef("scenario from", "%v", err)
		}
		runs = append(runs, derive.Run{Dir: dir, Workspace: recs.BaseRepo(id, &b.Receipt)})
	}
	made, err := derive.FromRuns(ctx, runs, *out, derive.Options{MaxBytes: *maxBytes, Redact: r.Redactor(os.Getenv)})
	if err != nil {
		return err
	}
	from := "run " + made.FromRun
	if made.Session != "" {
		from = fmt.Sprintf("session %s (%d runs)", made.Session, len(runs))
	}
	fmt.Fprintf(env.Stdout, "made scenario %s in %s from %s: %d fixture files, %d turns, %d model steps, %d checks (%d files compared as applied)\n",
		made.ID, made.Dir, from, made.Fixture, made.Turns, made.Steps, made.Checks, made.Expected)
	if len(made.LeftOut) > 0 {
		fmt.Fprintf(env.Stdout, "left out:\n  %s\n", strings.Join(made.LeftOut, "\n  "))
	}
	for _, n := range made.Notes {
		fmt.Fprintf(env.Stdout, "note: %s\n", n)
	}
	fmt.Fprintf(env.Stdout, "run it: proctor scenario run %s\n", made.Dir)
	return nil
}
