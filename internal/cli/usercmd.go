package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/store"
)

func runUser(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor user <verb> [--data DIR] ...

  add     NAME --role viewer|reviewer|admin   add an account; the password is read from the terminal or stdin
  list                                        the accounts, their roles and state
  passwd  NAME                                set a new password (signs the user out everywhere)
  role    NAME --role ROLE                    change a role
  disable NAME                                stop NAME signing in or using tokens (signs them out)
  enable  NAME                                undo disable
  remove  NAME                                delete the account with its sessions and tokens

Roles: a viewer reads; a reviewer also approves and rejects diffs and approval
requests; an admin also launches and stops runs and manages users. Passwords
are never taken from the command line: type them at the prompt, or pipe them
on stdin (one line). 'proctor serve' on a non-loopback address needs an admin.
`)
		if len(args) == 0 {
			return usagef("user", "name a verb: add, list, passwd, role, disable, enable or remove")
		}
		return nil
	}
	verb := args[0]
	switch verb {
	case "add", "list", "passwd", "role", "disable", "enable", "remove":
	default:
		return usagef("user", "unknown verb %q; want add, list, passwd, role, disable, enable or remove", verb)
	}
	name := "user " + verb
	fs := newFlags(env, name, "[--data DIR] NAME", "See 'proctor user --help'.")
	data := fs.String("data", "", "data `folder`")
	var role *string
	if verb == "add" || verb == "role" {
		role = fs.String("role", "", "viewer, reviewer or admin")
	}
	if err := parseFlags(fs, name, args[1:]); err != nil {
		return err
	}
	rest := fs.Args()
	if verb == "list" {
		if len(rest) > 0 {
			return usagef(name, "takes no arguments")
		}
	} else if len(rest) != 1 {
		return usagef(name, "name one user")
	}
	var r auth.Role
	if role != nil {
		var err error
		if r, err = auth.ParseRole(*role); err != nil {
			return usagef(name, "--role: %v", err)
		}
	}
	st, err := openData(ctx, env, *data)
	if err != nil {
		return err
	}
	defer st.Close()
	actor := "cli:" + osUser()
	if verb == "list" {
		return userList(ctx, env, st)
	}
	user := rest[0]
	if err := auth.ValidName(user); err != nil {
		return usagef(name, "%v", err)
	}
	return changeUser(ctx, env, st, verb, user, r, actor)
}

func noUser(err error, user string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user %s; 'proctor user list' shows the accounts", user)
	}
	return err
}

// lastAdminGuard refuses to remove, disable or demote the last enabled admin
// while other accounts exist: nobody could manage them any more.
func lastAdminGuard(ctx context.Context, st *store.Store, user, what string) error {
	u, err := st.GetUser(ctx, user)
	if err != nil || u.Role != string(auth.Admin) || u.Disabled {
		return nil
	}
	users, admins, err := st.CountUsers(ctx)
	if err != nil {
		return err
	}
	if admins == 1 && users > 1 {
		return fmt.Errorf("%s is the last enabled admin; add another admin first ('proctor user add NAME --role admin') before you %s %s", user, what, user)
	}
	return nil
}

func userList(ctx context.Context, env Env, st *store.Store) error {
	users, err := st.ListUsers(ctx)
	if err != nil {
		return err
	}
	if len(users) == 0 {
		fmt.Fprintln(env.Stdout, "no accounts: the dashboard runs single-user on loopback; add one with: proctor user add NAME --role admin")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tSTATE\tCREATED (UTC)")
	for _, u := range users {
		state := "enabled"
		if u.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, u.Role, state, u.CreatedAt.Format("2006-01-02 15:04"))
	}
	return tw.Flush()
}

// readNewPassword reads a password: at a terminal, twice without echo; from
// a pipe, its first line.
func readNewPassword(env Env, user string) (string, error) {
	var pw string
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		read := func(prompt string) (string, error) {
			fmt.Fprint(env.Stderr, prompt)
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(env.Stderr)
			return string(b), err
		}
		first, err := read("Password for " + user + ": ")
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		again, err := read("Again: ")
		if err != nil {
			return "", fmt.Errorf("read password: %w", err)
		}
		if first != again {
			return "", errors.New("the two passwords differ; nothing was changed")
		}
		pw = first
	} else {
		if env.Stdin == nil {
			return "", errors.New("read password: no stdin; type it at a terminal or pipe it on stdin")
		}
		line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read password from stdin: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if err := auth.CheckPassword(pw); err != nil {
		return "", fmt.Errorf("password for %s: %v; nothing was changed", user, err)
	}
	return pw, nil
}

func runToken(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(env.Stdout, `Usage: proctor token <verb> [--data DIR] ...

  create --user NAME --name LABEL [--push]
                                    make an API token for NAME; it is printed once and stored hashed;
                                    --push: a token that may only push bundles (proctor push), for CI
  list   [--user NAME]              the tokens (never their values) and when each was last used
  revoke --user NAME --name LABEL   delete a token

A token acts for its user with the user's role on /api/v1:
  curl -H "Authorization: Bearer ptk_..." http://HOST:7070/api/v1/runs
`)
		if len(args) == 0 {
			return usagef("token", "name a verb: create, list or revoke")
		}
		return nil
	}
	verb := args[0]
	switch verb {
	case "create", "list", "revoke":
	default:
		return usagef("token", "unknown verb %q; want create, list or revoke", verb)
	}
	name := "token " + verb
	fs := newFlags(env, name, "[--data DIR] [--user NAME] [--name LABEL]", "See 'proctor token --help'.")
	data := fs.String("data", "", "data `folder`")
	user := fs.String("user", "", "the `user` the token acts for")
	label := fs.String("name", "", "a `label` for the token, unique per user (e.g. ci)")
	pushOnly := fs.Bool("push", false, "create: a token that may only push bundles to /api/v1/push, whatever its user's role")
	if err := parseFlags(fs, name, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(name, "takes no arguments, got %q", fs.Arg(0))
	}
	if verb != "list" && (*user == "" || *label == "") {
		return usagef(name, "needs --user NAME and --name LABEL")
	}
	if *label != "" {
		if err := auth.ValidName(*label); err != nil {
			return usagef(name, "--name: %v", strings.Replace(err.Error(), "user name", "token name", 1))
		}
	}
	st, err := openData(ctx, env, *data)
	if err != nil {
		return err
	}
	defer st.Close()
	actor := "cli:" + osUser()
	switch verb {
	case "create":
		scope := ""
		if *pushOnly {
			scope = store.TokenPush
		}
		return tokenCreate(ctx, env, st, actor, *user, *label, scope)
	case "revoke":
		if err := st.RevokeAPIToken(ctx, *user, *label); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%s has no token named %s; 'proctor token list' shows them", *user, *label)
			}
			return err
		}
		fmt.Fprintf(env.Stdout, "revoked %s of %s\n", *label, *user)
		return st.Audit(ctx, store.AuditEntry{Actor: actor, Action: "token-revoke", Object: *user, Detail: *label})
	}
	return tokenList(ctx, env, st, *user)
}

// tokenCreate makes a token for user, prints it once, and audits it.
func tokenCreate(ctx context.Context, env Env, st *store.Store, actor, user, label, scope string) error {
	secret, err := auth.NewSecret(auth.TokenPrefix)
	if err != nil {
		return err
	}
	if err := st.AddAPIToken(ctx, user, label, auth.HashSecret(secret), scope); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return noUser(err, user)
		}
		if errors.Is(err, store.ErrTokenExists) {
			return fmt.Errorf("%s already has a token named %s; revoke it first or pick another --name", user, label)
		}
		return err
	}
	what := "token"
	if scope == store.TokenPush {
		what = "push-only token"
	}
	fmt.Fprintf(env.Stderr, "%s %s for %s — shown this once; store it now:\n", what, label, user)
	fmt.Fprintln(env.Stdout, secret)
	return st.Audit(ctx, store.AuditEntry{Actor: actor, Action: "token-create", Object: user, Detail: label + map[bool]string{true: " (push only)", false: ""}[scope == store.TokenPush]})
}

// tokenList prints the tokens (of user, or everyone's), never their values.
func tokenList(ctx context.Context, env Env, st *store.Store, user string) error {
	toks, err := st.ListAPITokens(ctx, user)
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		fmt.Fprintln(env.Stdout, "no tokens; make one with: proctor token create --user NAME --name LABEL")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tNAME\tMAY\tCREATED (UTC)\tLAST USED (UTC)")
	for _, t := range toks {
		used := "never"
		if !t.LastUsed.IsZero() {
			used = t.LastUsed.Format("2006-01-02 15:04")
		}
		may := "the user's role"
		if t.Scope == store.TokenPush {
			may = "push only"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.User, t.Name, may, t.CreatedAt.Format("2006-01-02 15:04"), used)
	}
	return tw.Flush()
}

// openData opens the data folder's database, creating the folder if needed.
func openData(ctx context.Context, env Env, data string) (*store.Store, error) {
	dir, err := dataDir(data, env.Getenv)
	if err != nil {
		return nil, err
	}
	if err := ensureDataDir(dir); err != nil {
		return nil, err
	}
	return store.Open(ctx, dbPath(dir))
}

// changeUser does verb (add, remove, passwd, role, disable, enable) to the
// account user, and records it in the audit log as actor.
func changeUser(ctx context.Context, env Env, st *store.Store, verb, user string, r auth.Role, actor string) error {
	switch verb {
	case "add":
		pw, err := readNewPassword(env, user)
		if err != nil {
			return err
		}
		hash, err := auth.HashPassword(pw, auth.DefaultParams())
		if err != nil {
			return err
		}
		if err := st.AddUser(ctx, store.User{Name: user, Role: string(r), PasswordHash: hash}); err != nil {
			if errors.Is(err, store.ErrUserExists) {
				return fmt.Errorf("user %s already exists; use 'proctor user passwd %s' or 'proctor user role %s --role %s'", user, user, user, r)
			}
			return err
		}
		fmt.Fprintf(env.Stdout, "added %s (%s)\n", user, r)
		return st.Audit(ctx, store.AuditEntry{Actor: actor, Action: "user-add", Object: user, Detail: "role " + string(r)})
	case "remove":
		if err := lastAdminGuard(ctx, st, user, "remove"); err != nil {
			return err
		}
		if err := st.RemoveUser(ctx, user); err != nil {
			return noUser(err, user)
		}
		fmt.Fprintf(env.Stdout, "removed %s\n", user)
		return st.Audit(ctx, store.AuditEntry{Actor: actor, Action: "user-remove", Object: user})
	}
	u, err := st.GetUser(ctx, user)
	if err != nil {
		return noUser(err, user)
	}
	detail := ""
	switch verb {
	case "passwd":
		pw, err := readNewPassword(env, user)
		if err != nil {
			return err
		}
		if u.PasswordHash, err = auth.HashPassword(pw, auth.DefaultParams()); err != nil {
			return err
		}
	case "role":
		if u.Role == string(auth.Admin) && r != auth.Admin {
			if err := lastAdminGuard(ctx, st, user, "demote"); err != nil {
				return err
			}
		}
		detail = u.Role + " → " + string(r)
		u.Role = string(r)
	case "disable":
		if err := lastAdminGuard(ctx, st, user, "disable"); err != nil {
			return err
		}
		u.Disabled = true
	case "enable":
		u.Disabled = false
	}
	if err := st.UpdateUser(ctx, u); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: done (%s)\n", user, verb)
	return st.Audit(ctx, store.AuditEntry{Actor: actor, Action: "user-" + verb, Object: user, Detail: detail})
}
