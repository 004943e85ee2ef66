package web

import (
	"github.com/proctor-dev/proctor/internal/highlight"
	"github.com/proctor-dev/proctor/internal/patch"
)

// DiffFile is one file of a diff as the page shows it.
type DiffFile struct {
	patch.File
	Index int
	Hunks []DiffHunk
	Lines int
}

// DiffHunk is a hunk with its lines highlighted, and the same lines paired
// for the side-by-side view.
type DiffHunk struct {
	Header string
	Lines  []DiffLine
	Rows   []SplitRow
}

// DiffLine is a diff line with its highlighted tokens.
type DiffLine struct {
	Kind   patch.LineKind
	OldNo  int
	NewNo  int
	Tokens []highlight.Token
}

// SplitRow is one row of the side-by-side view: the old line on the left,
// the new on the right; either may be missing.
type SplitRow struct {
	Left, Right *DiffLine
}

// BuildDiff highlights a parsed diff and pairs its lines.
func BuildDiff(files []patch.File) []DiffFile {
	var out []DiffFile
	for i, f := range files {
		df := DiffFile{File: f, Index: i}
		h := highlight.For(f.Path())
		for _, hk := range f.Hunks {
			texts := make([]string, len(hk.Lines))
			for j, l := range hk.Lines {
				texts[j] = l.Text
			}
			toks := h.Lines(texts)
			dh := DiffHunk{Header: hk.Header}
			for j, l := range hk.Lines {
				if l.Kind == patch.Note {
					toks[j] = []highlight.Token{{Text: l.Text}}
				}
				dh.Lines = append(dh.Lines, DiffLine{Kind: l.Kind, OldNo: l.OldNo, NewNo: l.NewNo, Tokens: toks[j]})
			}
			dh.Rows = pair(dh.Lines)
			df.Lines += len(dh.Lines)
			df.Hunks = append(df.Hunks, dh)
		}
		out = append(out, df)
	}
	return out
}

// pair lines up a hunk for the side-by-side view: context on both sides, a
// run of deletions beside the run of additions that follows it.
func pair(lines []DiffLine) []SplitRow {
	var rows []SplitRow
	for i := 0; i < len(lines); {
		l := &lines[i]
		switch l.Kind {
		case patch.Deleted, patch.Added:
			var dels, adds []*DiffLine
			for i < len(lines) && lines[i].Kind == patch.Deleted {
				dels = append(dels, &lines[i])
				i++
			}
			for i < len(lines) && lines[i].Kind == patch.Added {
				adds = append(adds, &lines[i])
				i++
			}
			for k := 0; k < max(len(dels), len(adds)); k++ {
				var r SplitRow
				if k < len(dels) {
					r.Left = dels[k]
				}
				if k < len(adds) {
					r.Right = adds[k]
				}
				rows = append(rows, r)
			}
		default:
			rows = append(rows, SplitRow{Left: l, Right: l})
			i++
		}
	}
	return rows
}

func diffURL(runID string, split bool) string {
	if split {
		return runURL(runID) + "?view=split#diff"
	}
	return runURL(runID) + "#diff"
}

func sideClass(l *DiffLine) string {
	if l == nil {
		return "empty"
	}
	return lineClass(l.Kind)
}

func sideNo(l *DiffLine, left bool) string {
	if l == nil {
		return ""
	}
	if left {
		return lineNo(l.OldNo)
	}
	return lineNo(l.NewNo)
}
