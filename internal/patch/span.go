package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// LineRef is a line of a diff by its number on one side: the old file's
// (a deleted or context line, written "L7") or the new file's (an added or
// context line, written "12" or "R12"), as GitHub's review comments name
// their lines LEFT and RIGHT.
type LineRef struct {
	Old bool
	N   int
}

func (r LineRef) String() string {
	if r.Old {
		return "L" + strconv.Itoa(r.N)
	}
	return strconv.Itoa(r.N)
}

// Span is the lines a comment is on: from Start to End of one hunk, in the
// diff's order (Start == End for one line).
type Span struct{ Start, End LineRef }

// One is the span of the single line r.
func One(r LineRef) Span { return Span{r, r} }

func (s Span) String() string {
	if s.Start == s.End {
		return s.End.String()
	}
	return s.Start.String() + "-" + s.End.String()
}

// Range reports whether the span is more than one line.
func (s Span) Range() bool { return s.Start != s.End }

// Words names the span for a person: "line 12", "deleted line 7", "lines
// 10 to 14", "lines 7 (deleted) to 9".
func (s Span) Words() string {
	one := func(r LineRef) string {
		if r.Old {
			return strconv.Itoa(r.N) + " (old)"
		}
		return strconv.Itoa(r.N)
	}
	switch {
	case !s.Range() && s.End.Old:
		return "old line " + strconv.Itoa(s.End.N)
	case !s.Range():
		return "line " + strconv.Itoa(s.End.N)
	case s.Start.Old == s.End.Old:
		prefix := "lines "
		if s.End.Old {
			prefix = "old lines "
		}
		return prefix + strconv.Itoa(s.Start.N) + " to " + strconv.Itoa(s.End.N)
	}
	return "lines " + one(s.Start) + " to " + one(s.End)
}

// maxLineNo bounds a line number a person writes.
const maxLineNo = 1 << 30

// ParseLineRef reads "12", "R12" (the new file's line 12) or "L7" (the old
// file's line 7).
func ParseLineRef(s string) (LineRef, error) {
	var r LineRef
	num := s
	switch {
	case strings.HasPrefix(s, "L"):
		r.Old, num = true, s[1:]
	case strings.HasPrefix(s, "R"):
		num = s[1:]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > maxLineNo || num != strconv.Itoa(n) {
		return LineRef{}, fmt.Errorf("%q is not a line: want a number (the new file's line), or L and a number (the old file's)", s)
	}
	r.N = n
	return r, nil
}

// ParseSpan reads a line ("12", "L7") or a range of lines ("10-14",
// "L7-9"), as Span.String writes them.
func ParseSpan(s string) (Span, error) {
	s = strings.TrimSpace(s)
	first, last, isRange := strings.Cut(s, "-")
	start, err := ParseLineRef(first)
	if err != nil {
		return Span{}, err
	}
	if !isRange {
		return One(start), nil
	}
	end, err := ParseLineRef(last)
	if err != nil {
		return Span{}, err
	}
	return Span{start, end}, nil
}

// at reports whether line l is the one r names.
func (r LineRef) at(l Line) bool {
	if l.Kind == Note {
		return false
	}
	if r.Old {
		return l.Kind != Added && l.OldNo == r.N
	}
	return l.Kind != Deleted && l.NewNo == r.N
}

// Lines are the lines of the hunk of f that span covers, in the diff's
// order, and that hunk's index; ok is false when no hunk holds both ends
// with the start first.
func (f File) Lines(s Span) (lines []Line, hunk int, ok bool) {
	for h, hk := range f.Hunks {
		start := -1
		for i, l := range hk.Lines {
			if start < 0 && s.Start.at(l) {
				start = i
			}
			if start >= 0 && s.End.at(l) {
				return hk.Lines[start : i+1], h, true
			}
		}
	}
	return nil, 0, false
}

// NewAt is where a line of the old side stands in the new file: the new
// number of the first line at or after it that the new file has (the
// hunk's last new line when none follows). A new-side line is itself.
func (f File) NewAt(r LineRef) int {
	if !r.Old {
		return r.N
	}
	for _, hk := range f.Hunks {
		last, found := 0, false
		for _, l := range hk.Lines {
			if l.Kind == Note {
				continue
			}
			if l.Kind != Deleted {
				last = l.NewNo
			}
			if found && l.Kind != Deleted {
				return l.NewNo
			}
			if l.Kind != Added && l.OldNo == r.N {
				if l.Kind == Context {
					return l.NewNo
				}
				found = true
			}
		}
		if found {
			return max(last, 1)
		}
	}
	return r.N
}
