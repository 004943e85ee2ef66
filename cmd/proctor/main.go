// Command proctor is a self-hosted harness and review dashboard for AI coding
// agents. Run 'proctor --help' for its commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/proctor-dev/proctor/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
