package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// ApprovalRequest asks whether a gated tool call may run.
type ApprovalRequest struct {
	CallID string
	Tool   string
	Args   string // the call's JSON arguments
}

// Command is the command of a run_command request, or "".
func (r ApprovalRequest) Command() string {
	var a struct {
		Command string `json:"command"`
	}
	json.Unmarshal([]byte(r.Args), &a)
	return a.Command
}

// Decision answers an ApprovalRequest.
type Decision struct {
	Approved bool
	By       string // who decided: "policy", a user name, "terminal"
	Reason   string
}

// Approver decides on gated tool calls. Approve may block until a decision
// arrives from elsewhere (a terminal, a browser); it must return when ctx
// ends.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// Policy approves run_command calls whose command starts with one of the
// allowed prefixes (at a word boundary) and denies everything else.
type Policy struct {
	Allow []string
}

// HasShellOperators reports whether a command has a shell operator (; & |
// ` $ < > or a newline): a policy or rule that allows a command by its
// first words never allows one with these, unless it says so.
func HasShellOperators(cmd string) bool { return strings.ContainsAny(cmd, ";&|`$<>\n") }

// StartsWithWords reports whether a command is prefix, or starts with
// prefix and a space: its first words are prefix's ("go test" starts
// "go test ./...", not "go tests").
func StartsWithWords(cmd, prefix string) bool {
	return prefix != "" && (cmd == prefix || strings.HasPrefix(cmd, prefix+" "))
}

// Approve implements Approver.
func (p Policy) Approve(_ context.Context, req ApprovalRequest) (Decision, error) {
	cmd := strings.TrimSpace(req.Command())
	if req.Tool == "run_command" && cmd != "" && !HasShellOperators(cmd) {
		for _, prefix := range p.Allow {
			prefix = strings.TrimSpace(prefix)
			if StartsWithWords(cmd, prefix) {
				return Decision{Approved: true, By: "policy", Reason: fmt.Sprintf("allowed prefix %q", prefix)}, nil
			}
		}
	}
	reason := "not on the allow-list (default deny)"
	if HasShellOperators(cmd) {
		reason = "shell operators are never allowed by the policy (default deny)"
	}
	return Decision{Approved: false, By: "policy", Reason: reason}, nil
}

// Terminal asks a person at a terminal, one question at a time.
type Terminal struct {
	In  io.Reader
	Out io.Writer
	Who string // the name written on decisions

	mu     sync.Mutex
	reader *bufio.Reader
}

// Approve implements Approver: it prints the call and reads y or n.
func (t *Terminal) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reader == nil {
		t.reader = bufio.NewReader(t.In)
	}
	what := req.Args
	if c := req.Command(); c != "" {
		what = c
	}
	fmt.Fprintf(t.Out, "\nThe agent wants to run %s: %s\nAllow? [y/N] ", req.Tool, what)
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := t.reader.ReadString('\n')
		ch <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	case a := <-ch:
		if a.err != nil && !errors.Is(a.err, io.EOF) {
			return Decision{}, fmt.Errorf("read the answer: %w", a.err)
		}
		ok := strings.EqualFold(strings.TrimSpace(a.line), "y") || strings.EqualFold(strings.TrimSpace(a.line), "yes")
		reason := "denied at the terminal"
		if ok {
			reason = "approved at the terminal"
		} else if a.err != nil {
			reason = "no answer (end of input): denied"
		}
		return Decision{Approved: ok, By: t.Who, Reason: reason}, nil
	}
}

// Recorded answers each call with the decision recorded for its id, and
// denies calls it has no record of. Replays use it to decide as the
// recorded run did.
type Recorded map[string]Decision

// Approve implements Approver.
func (r Recorded) Approve(_ context.Context, req ApprovalRequest) (Decision, error) {
	if d, ok := r[req.CallID]; ok {
		return d, nil
	}
	return Decision{By: "replay", Reason: "the recorded run has no decision for this call (default deny)"}, nil
}

// Allower allows some calls without asking anyone (standing rules); it
// never denies.
type Allower interface {
	Allow(req ApprovalRequest) (Decision, bool)
}

// Chain approves what the policy allows, then what the rules allow, and
// asks next about the rest; with no next approver the rest is denied.
type Chain struct {
	Policy Policy
	Rules  Allower // nil: none
	Next   Approver
}

// Approve implements Approver.
func (c Chain) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	d, err := c.Policy.Approve(ctx, req)
	if err != nil || d.Approved {
		return d, err
	}
	if c.Rules != nil {
		if allowed, ok := c.Rules.Allow(req); ok {
			return allowed, nil
		}
	}
	if c.Next == nil {
		return d, nil
	}
	return c.Next.Approve(ctx, req)
}
