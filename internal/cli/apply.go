package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/store"
)

// errNoAnswer is a prompt that got no answer (end of input): nothing is
// decided.
var errNoAnswer = errors.New("no answer (end of input)")

// terminalReviewer shows the diff and asks at the terminal whether to apply
// it: y or yes applies, anything else rejects, no answer decides nothing.
func terminalReviewer(in io.Reader, out io.Writer, who, target string) gate.Reviewer {
	return gate.ReviewerFunc(func(ctx context.Context, p gate.Proposal) (gate.Verdict, error) {
		fmt.Fprintf(out, "%s\nApply %d file(s) to %s? [y/N] ", p.Diff, len(p.Changed), target)
		type answer struct {
			line string
			err  error
		}
		ch := make(chan answer, 1)
		go func() {
			line, err := readLine(in)
			ch <- answer{line, err}
		}()
		var a answer
		select {
		case <-ctx.Done():
			return gate.Verdict{}, ctx.Err()
		case a = <-ch:
		}
		if a.err != nil && (!errors.Is(a.err, io.EOF) || strings.TrimSpace(a.line) == "") {
			if errors.Is(a.err, io.EOF) {
				return gate.Verdict{}, errNoAnswer
			}
			return gate.Verdict{}, fmt.Errorf("read the answer: %w", a.err)
		}
		if !yes(a.line) {
			return gate.Verdict{By: who, Reason: "rejected at the terminal"}, nil
		}
		return askLinks(ctx, in, out, who, p.Diff)
	})
}

// readLine reads one line from in, a byte at a time, so that the next
// question's answer is still there to be read.
func readLine(in io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			b.WriteByte(buf[0])
			if buf[0] == '\n' {
				return b.String(), nil
			}
		}
		if err != nil {
			return b.String(), err
		}
	}
}

func yes(line string) bool {
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

// askLinks asks about each link of an approved diff that points outside
// the source, one by one: the approval accepts every part but the links
// not accepted. A diff without such links is approved whole.
func askLinks(ctx context.Context, in io.Reader, out io.Writer, who, diff string) (gate.Verdict, error) {
	v := gate.Verdict{Approved: true, By: who, Reason: "approved at the terminal"}
	files, err := patch.Parse(diff)
	if err != nil {
		return v, nil // the gate reads the diff again and says what is wrong
	}
	declined := map[int]bool{}
	asked := false
	for i, f := range files {
		if !f.Leaves {
			continue
		}
		asked = true
		fmt.Fprintf(out, "%s is a link to %s, outside %s. Apply this link (as a link, never followed)? [y/N] ", bundle.PathName(f.Path()), f.Link, "the source")
		line, err := readLine(in)
		if err != nil && (!errors.Is(err, io.EOF) || strings.TrimSpace(line) == "") {
			return gate.Verdict{}, errNoAnswer
		}
		declined[i] = !yes(line)
		if ctx.Err() != nil {
			return gate.Verdict{}, ctx.Err()
		}
	}
	if !asked {
		return v, nil
	}
	for _, part := range patch.Parts(files) {
		v.Parts = append(v.Parts, patch.Choice{File: part.File, Hunk: part.Hunk, Accept: !declined[part.File]})
	}
	return v, nil
}

// reviewRun reviews run runID through the gate (in its folder, or its
// decision folder when it is packed), indexes it again, and returns the
// review and what the review worked on; the audit entry is written as the
// CLI user.
func reviewRun(ctx context.Context, r *run.Runner, runID string, reviewer gate.Reviewer, force bool) (*bundle.Review, records.Reviewing, error) {
	record := func(ctx context.Context, d gate.Decided) error {
		st, err := store.Open(ctx, dbPath(r.DataDir))
		if err != nil {
			return err
		}
		defer st.Close()
		return st.Audit(ctx, store.AuditEntry{Actor: d.Actor, Action: d.Action(), Object: d.RunID, Detail: d.AuditDetail(), Op: d.Op})
	}
	rvw, err := r.Records().Review(runID)
	if err != nil {
		return nil, rvw, usagef("apply", "%v", err)
	}
	opt := rvw.Options
	opt.Force, opt.Actor, opt.Record = force, "cli:"+osUser(), record
	rv, err := gate.Review(ctx, rvw.Dir, reviewer, opt)
	if r.Index != nil {
		r.Index(ctx, rvw.Bundle)
	}
	var ce *gate.ConflictError
	var na *gate.NotAppliableError
	var oo *gate.OutOfOrderError
	var le *gate.LinkError
	switch {
	case errors.Is(err, gate.ErrAlreadyReviewed):
		return nil, rvw, fmt.Errorf("%w; nothing was done", err)
	case errors.As(err, &ce), errors.As(err, &le):
		return nil, rvw, exitWith(ExitProblems, err)
	case errors.As(err, &na), errors.As(err, &oo), errors.Is(err, gate.ErrNoDecision), errors.Is(err, gate.ErrBusy):
		return nil, rvw, exitWith(ExitUsage, err)
	case err != nil:
		return nil, rvw, err
	}
	return rv, rvw, nil
}

// exitWith prints err and ends with code.
func exitWith(code int, err error) error { return printedError{code: code, err: err} }

type printedError struct {
	code int
	err  error
}

func (e printedError) Error() string { return e.err.Error() }

// applyFrom applies the change a reviewer approved on a team's host to
// the folder to: the decision is fetched from the host, and applied from
// the recorded diff alone (gate.ApplyRecorded).
func applyFrom(ctx context.Context, env Env, runID, host, to, tokenEnv, dataDir string) error {
	if !bundle.ValidID(runID) {
		return usagef("apply", "%q is not a run id", runID)
	}
	token, err := hostToken(env, "apply", host, tokenEnv, dataDir)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(to)
	if err != nil {
		return usagef("apply", "--to %s: %v", to, err)
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return usagef("apply", "--to %s: not a folder", to)
	}
	d, err := fetchDecision(ctx, host, token, runID)
	if err != nil {
		return err
	}
	switch {
	case d.Review == nil:
		return exitWith(ExitProblems, fmt.Errorf("run %s is not reviewed on %s yet: approve it there, then apply it here", runID, host))
	case !d.Review.Approved:
		return exitWith(ExitProblems, fmt.Errorf("run %s was rejected on %s by %s: nothing to apply", runID, host, d.Review.ReviewedBy))
	}
	// A link out of the tree is applied only when the reviewer accepted
	// its file part by part, as a review here asks.
	var parts []string
	for _, p := range d.Review.AppliedParts {
		parts = append(parts, p.Path)
	}
	paths, err := gate.ApplyRecorded(ctx, abs, d.Diff, d.Accepted, parts)
	var ce *gate.ConflictError
	var le *gate.LinkError
	switch {
	case errors.As(err, &ce), errors.As(err, &le):
		return exitWith(ExitProblems, fmt.Errorf("run %s: %w", runID, err))
	case err != nil:
		return exitWith(ExitProblems, fmt.Errorf("apply run %s to %s: %w", runID, abs, err))
	}
	fmt.Fprintf(env.Stdout, "applied to %s: %s (approved on %s by %s)\n", abs, strings.Join(paths, ", "), host, d.Review.ReviewedBy)
	return nil
}

// fetchDecision asks host for run id's decision.
func fetchDecision(ctx context.Context, host, token, id string) (*bundle.ReviewedChange, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+"/api/v1/runs/"+url.PathEscape(id)+"/decision", nil)
	if err != nil {
		return nil, usagef("apply", "--from %s: %v", host, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask %s for run %s's decision: %w", host, id, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("ask %s for run %s's decision: %w", host, id, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(body, &e)
		return nil, exitWith(ExitProblems, fmt.Errorf("%s answered %d for run %s's decision: %s", host, resp.StatusCode, id, e.Error))
	}
	var d bundle.ReviewedChange
	if err := json.Unmarshal(body, &d); err != nil || d.RunID != id {
		return nil, fmt.Errorf("%s's answer for run %s's decision is not one (%v)", host, id, err)
	}
	return &d, nil
}
