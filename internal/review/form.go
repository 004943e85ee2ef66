package review

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
)

// The review form names its fields by the part of the diff they are about
// (F a file's number in the diff, H a hunk's in the file, from 0):
//
//	part.F.H, part.F.file  accept or reject (a file decided whole)
//	edit.F.H               the hunk's new side as the reviewer left it
//	comment.F.H.N          comment N on hunk H (several a hunk)
//	line.F.H.N             the lines it is on: "12", "L7", "10-14" (patch.ParseSpan)
//	viewed.F, summary      the file marked viewed; a request's summary
//
// comment.F.H and line.F.H (no N) are a comment as forms before several a
// hunk named it.
var commentField = regexp.MustCompile(`^comment\.([0-9]{1,6})\.([0-9]{1,6})((?:\.[0-9]{1,4})?)$`)

// A formComment is a comment of the review form, where it is.
type formComment struct {
	file, hunk, n int
	key           string // its field's name, less "comment."
	text          string
	span          patch.Span
	onLine        bool // it names lines (else it is on the hunk as a whole)
}

// commentsOf reads the review form's comments with text, in the diff's
// order; files (the diff) is nil where they need not be checked against
// it.
func commentsOf(form url.Values, files []patch.File) ([]formComment, error) {
	var out []formComment
	for key, vals := range form {
		m := commentField.FindStringSubmatch(key)
		text := strings.TrimSpace(strings.Join(vals, "\n"))
		if m == nil || text == "" {
			continue
		}
		c := formComment{key: strings.TrimPrefix(key, "comment."), text: strings.Join(vals, "\n")}
		c.file, _ = strconv.Atoi(m[1])
		c.hunk, _ = strconv.Atoi(m[2])
		c.n, _ = strconv.Atoi(strings.TrimPrefix(m[3], "."))
		if files != nil && (c.file >= len(files) || c.hunk >= max(len(files[c.file].Hunks), 1)) {
			return nil, &Invalid{key, "no such hunk of the diff"}
		}
		if l := strings.TrimSpace(strings.Join(form["line."+c.key], "")); l != "" {
			span, err := patch.ParseSpan(l)
			if err != nil {
				return nil, &Invalid{"line." + c.key, err.Error()}
			}
			c.span, c.onLine = span, true
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b formComment) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.hunk, b.hunk), cmp.Compare(a.span.End.N, b.span.End.N), cmp.Compare(a.n, b.n), strings.Compare(a.key, b.key))
	})
	return out, nil
}

// FormComments are the comments of a review form on files (the run's
// diff), in the diff's order, for a request for changes.
func FormComments(form url.Values, files []patch.File) ([]bundle.Comment, error) {
	all, err := commentsOf(form, files)
	if err != nil {
		return nil, err
	}
	out := make([]bundle.Comment, 0, len(all))
	for _, c := range all {
		cm := bundle.Comment{Path: files[c.file].Path(), Text: strings.TrimSpace(c.text)}
		if c.onLine {
			cm = records.OnSpan(cm, c.span)
		}
		out = append(out, cm)
	}
	return out, nil
}

// FormParts reads a review part by part from the form (its part., edit.
// and comment. fields): an edit, or a comment's "```suggestion" block,
// counts only for an accepted hunk, and a suggestion replaces the lines of
// the new file its comment is on.
func FormParts(form url.Values) ([]patch.Choice, error) {
	comments, err := commentsOf(form, nil)
	if err != nil {
		return nil, err
	}
	parts := []patch.Choice{}
	for key, vals := range form {
		rest, ok := strings.CutPrefix(key, "part.")
		if !ok {
			continue
		}
		if len(parts) >= 100000 {
			return nil, errors.New("too many parts in one review")
		}
		fileS, hunkS, _ := strings.Cut(rest, ".")
		file, err1 := strconv.Atoi(fileS)
		hunk, err2 := strconv.Atoi(hunkS)
		if hunkS == "file" {
			hunk, err2 = patch.Whole, nil
		}
		if err1 != nil || err2 != nil || file < 0 || hunk < patch.Whole || len(vals) != 1 || (vals[0] != "accept" && vals[0] != "reject") {
			return nil, &Invalid{key, "want part.FILE.HUNK (or part.FILE.file) = accept or reject"}
		}
		ch := patch.Choice{File: file, Hunk: hunk, Accept: vals[0] == "accept"}
		if e, ok := form["edit."+fileS+"."+hunkS]; ok && ch.Accept && hunk != patch.Whole && len(e) == 1 {
			edit := e[0] // the browser sends lines with CRLF; patch.Select reads both
			ch.Edit = &edit
		}
		for _, c := range comments {
			text, ok := patch.ParseSuggestion(c.text)
			if !ok || !ch.Accept || hunk == patch.Whole || c.file != file || c.hunk != hunk {
				continue
			}
			if !c.onLine || c.span.Start.Old || c.span.End.Old {
				return nil, &Invalid{"line." + c.key, fmt.Sprintf("%q: a suggestion replaces lines of the new file; comment on them (not on a deleted line) to suggest a change", form.Get("line."+c.key))}
			}
			ch.Suggest = append(ch.Suggest, patch.Suggestion{Line: c.span.Start.N, End: c.span.End.N, Text: text})
		}
		parts = append(parts, ch)
	}
	return parts, nil
}

// FormDiff is the decision on a run's diff a review form sends: approve or
// reject the whole, or (partial) approve the parts it accepts.
func FormDiff(decision Action, form url.Values, reason string) (Diff, error) {
	switch decision {
	case Approve, Reject:
		return Diff{Approve: decision == Approve, Reason: reason}, nil
	case Partial:
		parts, err := FormParts(form)
		if err != nil {
			return Diff{}, err
		}
		return Diff{Approve: true, Reason: reason, Parts: parts}, nil
	}
	return Diff{}, &Invalid{"decision", fmt.Sprintf("%q: want approve, reject, partial or changes", decision)}
}
