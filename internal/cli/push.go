package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

func runPush(ctx context.Context, env Env, args []string) error {
	fs := newFlags(env, "push", "[--token-env PROCTOR_TOKEN] URL PATH…", `
Send run bundles to a team's proctor host (URL, e.g. https://proctor.lan:7070):
each PATH is a pack (*.tar, as scenario run --pack writes), a run folder, or a
data folder (every pack and run folder under its runs/). Each is sent once — the
host keys it by the SHA-256 of its bytes, so a bundle pushed twice is stored
once — gzipped, and a push cut short goes on where it stopped. The host checks
every pushed file as it checks what it indexes, stores it under its data folder
and indexes it; a run it refuses is printed with the reason. The token (an
admin's, or one made with 'proctor token create --push') is read from the
variable --token-env names; a single-user host on this machine's loopback takes
the local secret serve keeps in its data folder (--data). See docs/ci.md.
Exit codes: 0 every bundle is on the host; 1 one could not be pushed, or the
host refused a run of it; 2 a wrong flag or PATH.`)
	tokenEnv := fs.String("token-env", "PROCTOR_TOKEN", "the `variable` that holds the API token (unset or empty: a single-user host on loopback, whose local secret is read from --data)")
	data := fs.String("data", "", "the data `folder` of a single-user proctor serve on this machine's loopback, whose local.secret the push sends (default $PROCTOR_DATA, else $XDG_DATA_HOME/proctor)")
	if err := parseFlags(fs, "push", args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("push", "name the host's URL and at least one PATH")
	}
	dir, err := dataDir(*data, env.Getenv)
	if err != nil {
		return err
	}
	p, err := newPusher(env, "push", fs.Arg(0), *tokenEnv, dir)
	if err != nil {
		return err
	}
	results, err := p.Push(ctx, fs.Args()[1:]...)
	if err != nil {
		return usagef("push", "%v", err)
	}
	if !reportPushes(env, results) {
		return exitError{ExitProblems}
	}
	return nil
}

// newPusher checks a host's URL and reads its token (hostToken).
func newPusher(env Env, cmd, host, tokenEnv, dataDir string) (*push.Pusher, error) {
	token, err := hostToken(env, cmd, host, tokenEnv, dataDir)
	if err != nil {
		return nil, err
	}
	return &push.Pusher{URL: host, Token: token, Client: &http.Client{Timeout: 10 * time.Minute}}, nil
}

// hostToken checks a host's URL and reads the token to send it from the
// variable tokenEnv, or — for a host on this machine's loopback when
// there is none — the local secret of the serve whose data folder is
// dataDir.
func hostToken(env Env, cmd, host, tokenEnv, dataDir string) (string, error) {
	u, err := url.Parse(host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usagef(cmd, "%q: give the host's http:// or https:// address", host)
	}
	token := ""
	if tokenEnv != "" {
		if !yamldoc.EnvName(tokenEnv) {
			return "", usagef(cmd, "--token-env %q: give the name of the variable that holds the token, not the token", tokenEnv)
		}
		token = env.Getenv(tokenEnv)
	}
	if token == "" && server.IsLoopbackHost(u.Hostname()) {
		if secret, err := auth.ReadLocalSecret(localSecretPath(dataDir)); err == nil {
			token = secret
		}
	}
	return token, nil
}

// reportPushes prints what became of each path, and reports whether every
// one is on the host with nothing refused.
func reportPushes(env Env, results []push.Result) bool {
	ok := true
	for _, r := range results {
		switch {
		case r.Err != nil:
			ok = false
			fmt.Fprintf(env.Stdout, "FAILED %s: %v\n", r.Path, r.Err)
			continue
		case r.Already:
			fmt.Fprintf(env.Stdout, "already on the host %s (%s)\n", r.Path, pushedCounts(r.Status))
		default:
			fmt.Fprintf(env.Stdout, "pushed %s (%s)\n", r.Path, pushedCounts(r.Status))
		}
		for _, p := range r.Status.Problems {
			ok = false
			fmt.Fprintf(env.Stdout, "  refused: %s\n", p)
		}
	}
	return ok
}

// pushedCounts says what a pushed pack holds: "3 runs", "2 sessions".
func pushedCounts(st push.Status) string {
	out := fmt.Sprintf("%d runs", st.Runs)
	if st.Sessions > 0 {
		if st.Runs == 0 {
			return fmt.Sprintf("%d sessions", st.Sessions)
		}
		out += fmt.Sprintf(", %d sessions", st.Sessions)
	}
	return out
}
