package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func runSession(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor session <verb> [flags]

  list   [--data DIR]                     the sessions, newest first
  show   [--data DIR] ID                  a session and its runs
  resume [--data DIR] --task TEXT [run flags] ID
                                          continue a session: same workspace, same conversation
  replay [--data DIR] ID                  run a session's runs again, offline, into a new session

A session is a conversation over one workspace; 'proctor run --session new' starts one.
`)
		if len(args) == 0 {
			return usagef("session", "name a verb: list, show, resume or replay")
		}
		return nil
	}
	switch args[0] {
	case "list":
		return sessionList(env, args[1:])
	case "show":
		return sessionShow(env, args[1:])
	case "resume":
		return sessionResume(ctx, env, args[1:])
	case "replay":
		return sessionReplay(ctx, env, args[1:])
	}
	return usagef("session", "unknown verb %q; want list, show, resume or replay", args[0])
}

func sessionList(env Env, args []string) error {
	fs := newFlags(env, "session list", "[--data DIR]", "List the sessions of the data folder, newest first.")
	data := fs.String("data", "", "data `folder`")
	if err := parseFlags(fs, "session list", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("session list", "takes no arguments")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	files, _ := filepath.Glob(filepath.Join(r.DataDir, "sessions", "*.json"))
	var sessions []*bundle.Session
	for _, f := range files {
		s, err := bundle.ReadSession(f, bundle.DefaultLimits())
		if err != nil {
			fmt.Fprintf(env.Stderr, "skipped: %v\n", err)
			continue
		}
		sessions = append(sessions, s)
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].UpdatedAt.After(sessions[j].UpdatedAt) })
	if len(sessions) == 0 {
		fmt.Fprintln(env.Stdout, "no sessions; start one with: proctor run --session new --dir PATH --task TEXT …")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tRUNS\tUPDATED (UTC)\tTITLE")
	for _, s := range sessions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.SessionID, len(s.Runs), s.UpdatedAt.Format("2006-01-02 15:04"), s.Title)
	}
	return tw.Flush()
}

func sessionShow(env Env, args []string) error {
	fs := newFlags(env, "session show", "[--data DIR] ID", "Show a session and the status of each of its runs.")
	data := fs.String("data", "", "data `folder`")
	if err := parseFlags(fs, "session show", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("session show", "name one session ID")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	s, err := r.Records().LoadSession(fs.Arg(0))
	if err != nil {
		return usagef("session show", "%v", err)
	}
	fmt.Fprintf(env.Stdout, "session %s: %s\nworkspace: %s\ncreated %s, updated %s\n\n", s.SessionID, s.Title, s.Workspace,
		s.CreatedAt.Format("2006-01-02 15:04"), s.UpdatedAt.Format("2006-01-02 15:04"))
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tRUN\tSTATUS\tTASK")
	for i, id := range s.Runs {
		status, task := "missing", ""
		if b, err := bundle.ReadRun(filepath.Join(r.DataDir, "runs", id), bundle.DefaultLimits()); err == nil {
			status, task = string(b.Receipt.Status), b.Receipt.Task
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, id, strings.ReplaceAll(status, "_", " "), bundle.Line(task, 70))
	}
	return tw.Flush()
}

func sessionResume(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "session resume", "--task TEXT (--model PROFILE | --script FILE) [run flags] ID", `
Continue a session: the agent works in the session's workspace and sees the
whole conversation so far, then the new --task message (an answer to its
question, or the next request).`)
	f := addRunFlags(fs)
	if err := parseFlags(fs, "session resume", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("session resume", "name one session ID")
	}
	req, err := f.request(env, "session resume")
	if err != nil {
		return err
	}
	req.Session = fs.Arg(0)
	r, err := newRunner(env, *f.data)
	if err != nil {
		return err
	}
	return buildAndRun(ctx, r, "session resume", req)
}

func sessionReplay(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "session replay", "[--data DIR] ID", `
Run a session's runs again, in order and offline, from their recorded
exchanges, into a new session. Prints each run as it goes.`)
	data := fs.String("data", "", "data `folder`")
	if err := parseFlags(fs, "session replay", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("session replay", "name one session ID")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	s, err := r.Records().LoadSession(fs.Arg(0))
	if err != nil {
		return usagef("session replay", "%v", err)
	}
	if len(s.Runs) == 0 {
		return usagef("session replay", "session %s has no runs", s.SessionID)
	}
	session := "new"
	worst := ExitOK
	for i, id := range s.Runs {
		spec, cleanup, err := r.ReplaySpec(ctx, id)
		if err != nil {
			return fmt.Errorf("replay run %d (%s): %w", i+1, id, err)
		}
		spec.Session = session
		if i > 0 {
			spec.SourceDir = "" // later runs continue the new session's workspace
		}
		res, err := r.Run(ctx, spec)
		cleanup()
		if err != nil {
			return err
		}
		if session == "new" {
			session = res.Receipt.SessionID
		}
		if code := res.ExitCode(); code > worst {
			worst = code
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(env.Stdout, "replayed %d runs into session %s\n", len(s.Runs), session)
	if worst != ExitOK {
		return exitError{worst}
	}
	return nil
}
