package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// compareFlags are the flags of a comparison, shared by compare and
// scenario run --baseline.
type compareFlags struct {
	failOn, format, out, url string
}

func (f *compareFlags) add(fs interface {
	StringVar(*string, string, string, string)
}, prefix string) {
	fs.StringVar(&f.failOn, "fail-on", "none", "exit 1 when the comparison shows: `regression` (a scenario regressed), flaky (…or became flaky), any (…or the head does not pass every repeat of every scenario), none")
	fs.StringVar(&f.format, prefix+"format", "text", "how the comparison is written: text, json, junit or markdown (for a pull request's comment)")
	fs.StringVar(&f.out, prefix+"out", "", "write the comparison to `file` (default: standard output)")
	fs.StringVar(&f.url, "url", "", "markdown: the dashboard's `address`, to link each run to its page")
}

// check checks the flags' values, naming the flag.
func (f *compareFlags) check(cmd, prefix string) (suite.CompareOutput, error) {
	on, err := suite.ParseFailOn(f.failOn)
	if err != nil {
		return suite.CompareOutput{}, usagef(cmd, "--fail-on: %v", err)
	}
	if !strings.Contains(" "+strings.Join(suite.CompareFormats(), " ")+" ", " "+f.format+" ") {
		return suite.CompareOutput{}, usagef(cmd, "--%sformat: want one of %s; got %q", prefix, strings.Join(suite.CompareFormats(), ", "), f.format)
	}
	if f.url != "" && !strings.HasPrefix(f.url, "http://") && !strings.HasPrefix(f.url, "https://") {
		return suite.CompareOutput{}, usagef(cmd, "--url %q: give the dashboard's http:// or https:// address", f.url)
	}
	return suite.CompareOutput{Format: f.format, FailOn: on, URL: f.url}, nil
}

func runCompare(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "compare", "[flags] BASE HEAD", `
Compare suite HEAD with suite BASE (each a suite id, or the name of a
baseline: 'proctor baseline'): per scenario, regressed, newly flaky, still
failing, removed, no verdict yet, fixed, added or unchanged, with pass rates
and their 95% intervals, pass^k, and the tokens, cost and wall time of each.
Rows are scenarios by agent and model when both suites ran the same agents and
models, else scenarios. See docs/compare.md.
Exit codes: 0 the --fail-on condition does not hold; 1 it holds; 2 a wrong
flag, or a suite that is not indexed.`)
	data := fs.String("data", "", "data `folder` (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	var cf compareFlags
	cf.add(fs, "")
	if err := parseFlags(fs, "compare", args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("compare", "name two suites, BASE and HEAD; got %d argument(s)", fs.NArg())
	}
	out, err := cf.check("compare", "")
	if err != nil {
		return err
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	base, _, err := suite.ResolveSuite(dir, fs.Arg(0))
	if err != nil {
		return usagef("compare", "BASE: %v", err)
	}
	head, _, err := suite.ResolveSuite(dir, fs.Arg(1))
	if err != nil {
		return usagef("compare", "HEAD: %v", err)
	}
	return compareSuites(ctx, env, "compare", dir, base, head, out, cf.out)
}

// compareSuites compares head with base in data folder dir's index and
// writes the comparison to file (or standard output); an error with exit
// code 1 when out's condition holds.
func compareSuites(ctx context.Context, env Env, cmd, dir, base, head string, out suite.CompareOutput, file string) error {
	if _, err := os.Stat(dbPath(dir)); err != nil {
		return usagef(cmd, "data folder %s has no index (%v): run the suites there, or 'proctor index' their bundles", dir, errors.Unwrap(err))
	}
	st, err := openIndex(ctx, env.Getenv, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := suite.Compare(ctx, st, suite.CompareRequest{Base: base, Head: head})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return usagef(cmd, "%v; 'proctor index DIR' indexes a suite's bundles, and the Suites page lists the indexed suites", err)
	case errors.Is(err, suite.ErrSameSuite):
		return usagef(cmd, "%v", err)
	case err != nil:
		return err
	}
	write := func(w io.Writer) error { return c.Write(w, out) }
	if file == "" {
		err = write(env.Stdout)
	} else {
		err = osfile.WriteFile(file, 0o644, true, write)
	}
	if err != nil {
		return fmt.Errorf("write the comparison: %w", err)
	}
	if file != "" || out.Format != "text" {
		fmt.Fprintln(env.Stderr, c.Verdict(out.FailOn)) // the verdict where a person reads it
	}
	if c.Fails(out.FailOn) {
		return exitError{ExitProblems}
	}
	return nil
}

func runBaseline(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor baseline <verb> [flags]

  list  [--data DIR]              the baselines: each name and the suite it names
  set   NAME SUITE [--data DIR]   make SUITE the baseline called NAME (replacing the suite it named)
  rm    NAME [--data DIR]         remove the baseline called NAME

A baseline names the suite later suites of the same scenarios are compared
with: 'proctor compare NAME HEAD', or 'proctor scenario run … --baseline NAME
--fail-on regression' in CI. Baselines are kept in <data>/baselines.json; the
dashboard's suite page sets them too. See docs/compare.md.
`)
		if len(args) == 0 {
			return usagef("baseline", "name a verb: list, set or rm")
		}
		return nil
	}
	verb := args[0]
	want := map[string]int{"list": 0, "set": 2, "rm": 1}
	n, ok := want[verb]
	if !ok {
		return usagef("baseline", "unknown verb %q; want list, set or rm", verb)
	}
	name := "baseline " + verb
	fs := newFlags(env, name, "[flags]", "")
	data := fs.String("data", "", "data `folder`")
	if err := parseFlags(fs, name, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != n {
		return usagef(name, "takes %d argument(s), got %d", n, fs.NArg())
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	switch verb {
	case "set":
		if err := ensureDataDir(dir); err != nil {
			return err
		}
		if err := suite.SetBaseline(ctx, dir, fs.Arg(0), fs.Arg(1), "cli:"+osUser()); err != nil {
			return usagef(name, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "baseline %s is suite %s\n", fs.Arg(0), fs.Arg(1))
	case "rm":
		ok, err := suite.RemoveBaseline(ctx, dir, fs.Arg(0))
		if err != nil {
			return err
		}
		if !ok {
			return usagef(name, "no baseline is called %q ('proctor baseline list' lists them)", fs.Arg(0))
		}
		fmt.Fprintf(env.Stdout, "baseline %s removed\n", fs.Arg(0))
	default:
		all, err := suite.Baselines(dir)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			fmt.Fprintln(env.Stdout, "no baselines; set one with: proctor baseline set NAME SUITE")
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSUITE\tSET BY\tSET AT (UTC)")
		for _, b := range all {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Name, b.Suite, b.SetBy, b.SetAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	}
	return nil
}
