package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/server"
)

func runScript(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor script <verb> [flags]

  serve FILE [--addr 127.0.0.1:0]     serve a model script in the OpenAI, Anthropic and Gemini APIs
  lint FILE…                          check model scripts; every problem as file:line: field: problem
  export [--data DIR] [-o FILE] RUN_ID turn a recorded run into a model script

The model script format is described in docs/models.md.
`)
		if len(args) == 0 {
			return usagef("script", "name a verb: serve, lint or export")
		}
		return nil
	}
	switch args[0] {
	case "serve":
		return scriptServe(ctx, env, args[1:])
	case "lint":
		return scriptLint(env, args[1:])
	case "export":
		return scriptExport(env, args[1:])
	}
	return usagef("script", "unknown verb %q; want serve, lint or export", args[0])
}

func scriptServe(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "script serve", "[--addr 127.0.0.1:0] FILE", `
Serve a model script on loopback until stopped, in each of the four model
APIs, streamed and not, for any program or SDK that speaks one:
  OpenAI Chat Completions   POST /v1/chat/completions
  OpenAI Responses          POST /v1/responses
  Anthropic Messages        POST /v1/messages (and /v1/messages/count_tokens)
  Google Gemini             POST /v1beta/models/MODEL:generateContent
                            (:streamGenerateContent, :countTokens)
and GET /v1/models, /v1/models/ID. Point the program's base URL at the
address printed (OpenAI's and Anthropic's SDKs: http://ADDR/v1 and
http://ADDR; Gemini's: http://ADDR). Requests that do not match their
step are answered 409 with code script_mismatch and a message naming the
step (docs/models.md).`)
	addr := fs.String("addr", "127.0.0.1:0", "`host:port` to listen on (loopback only)")
	if err := parseFlags(fs, "script serve", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("script serve", "name one script FILE")
	}
	if ok, err := server.IsLoopback(*addr); err != nil || !ok {
		return usagef("script serve", "--addr %q is not a loopback address (want e.g. 127.0.0.1:8080)", *addr)
	}
	s, err := script.Load(fs.Arg(0))
	if err != nil {
		return usagef("script serve", "%v", err)
	}
	ep, err := script.Start(s, *addr)
	if err != nil {
		return err
	}
	defer ep.Close()
	fmt.Fprintf(env.Stdout, "serving %s (%d steps, model %q) at %s — Ctrl-C stops it\n", fs.Arg(0), len(s.Steps), s.Model, ep.URL)
	<-ctx.Done()
	fmt.Fprintf(env.Stdout, "answered %d of %d steps\n", ep.Server.Served(), len(s.Steps))
	return nil
}

func scriptLint(env Env, args []string) error {
	fs := newFlags(env, "script lint", "FILE…", "Check model scripts. Exit 1 when any has a problem.")
	if err := parseFlags(fs, "script lint", args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("script lint", "name at least one script FILE")
	}
	bad := false
	for _, path := range fs.Args() {
		s, err := script.Load(path)
		if err != nil {
			bad = true
			fmt.Fprintln(env.Stdout, err)
			continue
		}
		calls := 0
		for _, st := range s.Steps {
			calls += len(st.Reply.ToolCalls)
		}
		fmt.Fprintf(env.Stdout, "%s: ok, %d steps, %d tool calls, model %q\n", path, len(s.Steps), calls, s.Model)
	}
	if bad {
		return exitError{ExitProblems}
	}
	return nil
}

func scriptExport(env Env, args []string) error {
	fs := newFlags(env, "script export", "[--data DIR] [-o FILE] RUN_ID", `
Turn a recorded run's exchanges into a model script that replays it: one
step per answered model call, tool call ids kept.`)
	data := fs.String("data", "", "data `folder`")
	out := fs.String("o", "", "write the script to `file` instead of stdout")
	if err := parseFlags(fs, "script export", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("script export", "name one RUN_ID")
	}
	r, err := newRunner(env, *data)
	if err != nil {
		return err
	}
	yaml, err := r.Records().ExportScript(fs.Arg(0))
	if err != nil {
		return usagef("script export", "%v", err)
	}
	if *out == "" {
		_, err = env.Stdout.Write(yaml)
		return err
	}
	return os.WriteFile(*out, yaml, 0o644)
}
