package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
)

// verifyDemoRun checks the demo's run: its receipt, bundle, events,
// exchanges, diff, the untouched source, the index, and an approval that
// applies once.
func verifyDemoRun(ctx context.Context, check func(ok bool, what string, detail ...any), scratch, src string, r *run.Runner, res *run.Result) {
	rc := res.Receipt
	check(rc.Status == bundle.StatusAwaitingReview, "the run finished and waits for review", "status ", rc.Status, failureText(rc.Failure))
	check(rc.Usage.ModelCalls == 5 && rc.Usage.TotalTokens == 5972, "5 model calls over HTTP to the scripted model, 5972 tokens counted", rc.Usage)
	b, err := bundle.ReadRun(res.Dir, bundle.DefaultLimits())
	check(err == nil && len(b.Problems) == 0, "the bundle reads back valid (run.json, events, exchanges, transcript, diff)", err, b.Problems)
	events, probs, _ := bundle.ReadEvents(res.Dir, bundle.DefaultLimits())
	counts := map[string]int{}
	for _, e := range events {
		counts[e.Type]++
	}
	check(len(probs) == 0 && counts[bundle.EventToolCall] == 6 && counts[bundle.EventApprovalDecided] == 1, "events: 6 tool calls, 1 approval decided by the policy", counts)
	var xs []bundle.Exchange
	if log, _, _ := bundle.ReadExchanges(res.Dir, bundle.DefaultLimits()); log != nil {
		xs = log.Exchanges
	}
	check(len(xs) == 5, "exchanges.jsonl records 5 requests and responses", len(xs))
	diff, _ := os.ReadFile(filepath.Join(res.Dir, bundle.DiffFile))
	check(strings.Contains(string(diff), "+\treturn int64(math.Round(euros * 100))") && strings.Join(rc.Changed, ",") == "money.go,money_test.go",
		"the diff changes money.go to round with math.Round, and adds a test to money_test.go", rc.Changed)
	orig, _ := os.ReadFile(filepath.Join(src, "money.go"))
	check(!strings.Contains(string(orig), "math.Round"), "the source folder was not touched by the run")

	st, err := store.Open(ctx, filepath.Join(scratch, "data", "proctor.db"))
	if err == nil {
		_, err = index.New(st).Index(ctx, res.Dir)
		if err == nil {
			_, err = st.GetRun(ctx, res.RunID)
		}
		st.Close()
	}
	check(err == nil, "the bundle is indexed and found by id", err)

	reviewing, err := r.Records().Review(res.RunID)
	check(err == nil && reviewing.Options.Tree == src, "the review writes the run's own source folder", err)
	rv, err := gate.Review(ctx, res.Dir, gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "selftest", Reason: "selftest approves"}, nil
	}), reviewing.Options)
	after, _ := os.ReadFile(filepath.Join(src, "money.go"))
	check(err == nil && rv.Applied && strings.Contains(string(after), "math.Round"), "approving applies the diff to the source copy", err)
	_, err = gate.Review(ctx, res.Dir, nil, gate.Options{})
	check(errors.Is(err, gate.ErrAlreadyReviewed), "a second review is refused (exactly once)", err)
}

func runSelftest(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "selftest", "[--keep]", `
Run the built-in demo end to end — the real agent loop, model client and a
scripted model served over HTTP on loopback; no key, no network — then check
the receipt, the events, the exchanges, the transcript and the diff, index
the bundle, and approve the diff into a scratch copy of the demo project.
Prints each thing it verified. Exit 1 when any check fails.`)
	keep := fs.Bool("keep", false, "keep the scratch folder and print its path")
	if err := parseFlags(fs, "selftest", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("selftest", "takes no arguments")
	}
	scratch, err := os.MkdirTemp("", "proctor-selftest-*")
	if err != nil {
		return err
	}
	if *keep {
		defer fmt.Fprintf(env.Stdout, "scratch folder kept: %s\n", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	failed := 0
	check := func(ok bool, what string, detail ...any) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(env.Stdout, "%s %s", mark, what)
		if !ok && len(detail) > 0 {
			fmt.Fprintf(env.Stdout, ": %v", fmt.Sprint(detail...))
		}
		fmt.Fprintln(env.Stdout)
	}

	src := filepath.Join(scratch, "invoice")
	if err := demo.WriteFixture(src); err != nil {
		return err
	}
	s, err := demo.Script()
	if err != nil {
		return err
	}
	var progress strings.Builder
	r := &run.Runner{DataDir: filepath.Join(scratch, "data"), Progress: &progress, Environ: os.Environ()}
	res, err := r.Run(ctx, run.Spec{SourceDir: src, Task: demo.Task, Criteria: demo.Criteria,
		Model: run.ModelChoice{Script: s}, Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: demo.AllowedCommands}})
	if err != nil {
		return err
	}
	verifyDemoRun(ctx, check, scratch, src, r, res)

	if failed > 0 {
		fmt.Fprintf(env.Stdout, "\nselftest: %d check(s) failed; the run's progress was:\n%s", failed, progress.String())
		return exitError{ExitProblems}
	}
	fmt.Fprintln(env.Stdout, "selftest: all checks passed")
	return nil
}

func failureText(f *bundle.Failure) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf(" (%s: %s: %s)", f.Domain, f.Code, f.Message)
}
