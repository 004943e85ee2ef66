package records

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
)

// Span is the lines comment c is on (the zero span for a comment on the
// whole file).
func Span(c bundle.Comment) patch.Span {
	end := patch.LineRef{Old: c.Side == bundle.SideOld, N: c.Line}
	if c.StartLine == 0 {
		return patch.One(end)
	}
	return patch.Span{Start: patch.LineRef{Old: c.StartSide == bundle.SideOld, N: c.StartLine}, End: end}
}

// OnSpan is c placed on the lines s.
func OnSpan(c bundle.Comment, s patch.Span) bundle.Comment {
	side := func(r patch.LineRef) string {
		if r.Old {
			return bundle.SideOld
		}
		return ""
	}
	c.Line, c.Side, c.StartLine, c.StartSide = s.End.N, side(s.End), 0, ""
	if s.Range() {
		c.StartLine, c.StartSide = s.Start.N, side(s.Start)
	}
	return c
}

// Where names a comment's place for the agent and the reader: "a.go" (the
// file), "a.go:12" (a line of the new file), "a.go old line 7", "a.go
// lines 10 to 14".
func Where(c bundle.Comment) string {
	s := Span(c)
	switch {
	case c.Line == 0:
		return c.Path
	case !s.Range() && !s.End.Old:
		return c.Path + ":" + s.End.String()
	}
	return c.Path + " " + s.Words()
}

// Quote is the code comment c is about in files (a run's diff): the line
// or lines it is on (a range that holds both deleted and kept lines is
// quoted as diff lines, "-" and "+"), or for a comment on the whole file
// the first lines the file adds. It fails when the file or the lines are
// not in the diff: a comment's lines are those of one hunk, the first
// before the last.
func Quote(files []patch.File, c bundle.Comment) (string, error) {
	if (c.Side != "" && c.Side != bundle.SideOld) || (c.StartSide != "" && c.StartSide != bundle.SideOld) {
		return "", fmt.Errorf("side %q: want %q (a line of the old file) or nothing (of the new)", c.Side+c.StartSide, bundle.SideOld)
	}
	if c.Line < 0 || c.StartLine < 0 || (c.Line == 0 && c.StartLine != 0) {
		return "", fmt.Errorf("line %d, start_line %d: lines are numbered from 1", c.Line, c.StartLine)
	}
	for _, f := range files {
		if f.Path() != c.Path {
			continue
		}
		if c.Line == 0 {
			var changed []string
			for _, h := range f.Hunks {
				for _, l := range h.Lines {
					if l.Kind == patch.Added && len(changed) < 5 {
						changed = append(changed, l.Text)
					}
				}
			}
			return strings.Join(changed, "\n"), nil
		}
		lines, _, ok := f.Lines(Span(c))
		if !ok {
			break
		}
		kinds := map[bool]bool{}
		for _, l := range lines {
			kinds[l.Kind == patch.Deleted] = true
		}
		out := make([]string, len(lines))
		for i, l := range lines {
			if out[i] = l.Text; len(kinds) == 2 {
				out[i] = string(l.Kind) + l.Text
			}
		}
		return strings.Join(out, "\n"), nil
	}
	where := Where(c)
	if c.StartLine != 0 {
		where += " (one hunk's lines, the first before the last)"
	}
	return "", fmt.Errorf("%s is not in the run's diff", where)
}

// updateComment changes comment number comment (from 0) of request number
// request of the run runID with change, under the comments' lock;
// ErrNoComment when there is no such comment.
func (d Data) updateComment(ctx context.Context, runID string, request, comment int, change func(*bundle.Comment) error) error {
	dir, err := d.RunDir(runID)
	if err != nil {
		return err
	}
	return updateComments(ctx, dir, func(c *bundle.Comments) error {
		if request < 0 || request >= len(c.Requests) || comment < 0 || comment >= len(c.Requests[request].Comments) {
			return fmt.Errorf("run %s: request %d, comment %d: %w", runID, request+1, comment+1, ErrNoComment)
		}
		return change(&c.Requests[request].Comments[comment])
	})
}

// Resolve marks comment number comment (from 0) of request number request
// of the run runID resolved by by, or open again (by "").
func (d Data) Resolve(ctx context.Context, runID string, request, comment int, by string) error {
	return d.updateComment(ctx, runID, request, comment, func(cm *bundle.Comment) error {
		cm.Resolved = nil
		if by != "" {
			cm.Resolved = &bundle.Resolution{By: by, At: time.Now().UTC()}
		}
		return nil
	})
}
