package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/source"
	"github.com/proctor-dev/proctor/internal/store"
)

func runRule(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor rule <verb> [flags]

  list   [--data DIR] [--all]            the approval rules in force (--all: revoked and expired ones too)
  add    --command WORDS [--exact] [--scope source|scenario|everywhere] [--target PATH|ID]
         [--for DURATION] [--operators] [--data DIR]
                                         allow run_command calls without asking: those starting with
                                         WORDS (whole words), or --exact that command; --scope source
                                         (default) needs --target, the source folder; scenario a
                                         scenario id; --operators lets it match commands with shell
                                         operators (; & | $ < > backticks), which it never does otherwise
  revoke ID [--data DIR]                 end rule ID at once

Rules are kept in <data>/rules.json and shared with 'proctor serve' (its Rules
page); each change is in the audit log. See docs/review.md.
`)
		if len(args) == 0 {
			return usagef("rule", "name a verb: list, add or revoke")
		}
		return nil
	}
	name := "rule " + args[0]
	fs := newFlags(env, name, "[flags]", "")
	data := fs.String("data", "", "data `folder`")
	all := fs.Bool("all", false, "list: revoked and expired rules too")
	command := fs.String("command", "", "add: the command, or its first `words`, the rule allows")
	exact := fs.Bool("exact", false, "add: allow exactly the command, not commands starting with it")
	scope := fs.String("scope", rules.ScopeSource, "add: where the rule applies: source, scenario or everywhere")
	target := fs.String("target", "", "add: the source `folder` (or repository URL), or the scenario id")
	forD := fs.Duration("for", 0, "add: how long the rule lasts (0: until revoked)")
	operators := fs.Bool("operators", false, "add: let the rule match commands with shell operators")
	switch args[0] {
	case "list", "add", "revoke":
	default:
		return usagef("rule", "unknown verb %q; want list, add or revoke", args[0])
	}
	if err := parseFlags(fs, name, args[1:]); err != nil {
		return err
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	file := rules.At(dir)
	switch args[0] {
	case "list":
		return listRules(env, file, *all)
	case "revoke":
		return revokeRule(ctx, env, name, fs.Args(), file, *data)
	}
	if fs.NArg() > 0 {
		return usagef(name, "unexpected argument %q (the command goes in --command)", fs.Arg(0))
	}
	r := rules.Rule{Tool: "run_command", Match: rules.MatchPrefix, Command: *command, Scope: *scope, Target: *target, Operators: *operators, CreatedBy: "cli:" + osUser()}
	if *exact {
		r.Match = rules.MatchExact
	}
	if r.Scope == rules.ScopeSource {
		r.Target = sourceTarget(r.Target)
	}
	if *forD < 0 {
		return usagef(name, "--for must not be negative")
	}
	if *forD > 0 {
		end := time.Now().Add(*forD).UTC()
		r.Expires = &end
	}
	r, err = file.Add(r)
	if err != nil {
		return usagef(name, "%v", err)
	}
	fmt.Fprintf(env.Stdout, "added rule #%d: %s\n", r.ID, r.Describe())
	return auditRule(ctx, env, *data, "rule-add", r)
}

// sourceTarget names a source rule's folder as runs on it record it (one
// not there yet by its absolute path); a repository URL is as it is.
func sourceTarget(target string) string {
	if target == "" || strings.Contains(target, "://") {
		return target
	}
	if real, err := source.Folder(target); err == nil {
		return real
	}
	abs, _ := filepath.Abs(target)
	return abs
}

// revokeRule is `proctor rule revoke ID`.
func revokeRule(ctx context.Context, env Env, name string, args []string, file *rules.File, data string) error {
	if len(args) != 1 {
		return usagef(name, "name one rule id")
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id < 1 {
		return usagef(name, "%q is not a rule id (1, 2, …; see proctor rule list)", args[0])
	}
	r, err := file.Revoke(id, "cli:"+osUser())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "revoked rule #%d: %s\n", r.ID, r.Describe())
	return auditRule(ctx, env, data, "rule-revoke", r)
}

func listRules(env Env, file *rules.File, all bool) error {
	list, err := file.List()
	if err != nil {
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tALLOWS\tMADE BY\tMADE (UTC)")
	shown := 0
	for _, r := range list {
		if !all && !r.Active(now) {
			continue
		}
		shown++
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.ID, r.State(now), r.Describe(), r.CreatedBy, r.Created.UTC().Format("2006-01-02 15:04"))
	}
	if shown == 0 {
		fmt.Fprintln(env.Stdout, "no rules in force; make one with: proctor rule add --command \"go test\" --target FOLDER")
		return nil
	}
	return tw.Flush()
}

// auditRule records a change of the rules in the data folder's audit log.
func auditRule(ctx context.Context, env Env, data, action string, r rules.Rule) error {
	st, err := openData(ctx, env, data)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Audit(ctx, store.AuditEntry{Actor: "cli:" + osUser(), Action: action, Object: "rule #" + strconv.FormatInt(r.ID, 10), Detail: r.Describe()})
}
