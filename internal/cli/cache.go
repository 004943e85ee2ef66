package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/proctor-dev/proctor/internal/source"
)

func runCache(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor cache <verb> [flags]

  list  [--data DIR]                        the git mirrors runs on repositories share, most recently used first
  prune [--data DIR] [--older-than 720h]    remove the mirrors not used within that time (--older-than 0: all)

A run on a repository (proctor run --repo) fetches its commit into the
repository's mirror once; later runs fill their workspace from it.
`)
		if len(args) == 0 {
			return usagef("cache", "name a verb: list or prune")
		}
		return nil
	}
	name := "cache " + args[0]
	fs := newFlags(env, name, "[--data DIR]", "")
	data := fs.String("data", "", "data `folder`")
	older := fs.Duration("older-than", 30*24*time.Hour, "prune: remove mirrors not used within this `duration` (0: all)")
	switch args[0] {
	case "list", "prune":
	default:
		return usagef("cache", "unknown verb %q; want list or prune", args[0])
	}
	if err := parseFlags(fs, name, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(name, "takes no arguments")
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	cache := source.DataCache(dir)
	if args[0] == "prune" {
		if *older < 0 {
			return usagef(name, "--older-than must not be negative")
		}
		gone, err := cache.Prune(time.Now().Add(-*older))
		for _, m := range gone {
			fmt.Fprintf(env.Stdout, "removed %s (%s, last used %s)\n", m.URL, bytesText(m.Bytes), m.LastUsed.Format(time.RFC3339))
		}
		fmt.Fprintf(env.Stdout, "%d mirror(s) removed\n", len(gone))
		return err
	}
	ms, err := cache.List()
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		fmt.Fprintf(env.Stdout, "no git mirrors in %s\n", cache.Dir)
	}
	for _, m := range ms {
		fmt.Fprintf(env.Stdout, "%-60s %10s  last used %s\n", m.URL, bytesText(m.Bytes), m.LastUsed.Format(time.RFC3339))
	}
	return nil
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
