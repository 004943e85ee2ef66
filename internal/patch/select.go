package patch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Whole is the hunk index of a decision on a whole file.
const Whole = -1

// Part is one thing a reviewer decides on: a hunk of a modified text file,
// or a whole file (new, deleted, renamed, binary, or a change of mode only),
// where Hunk is Whole.
type Part struct {
	File   int    `json:"file"` // index of the file in the diff
	Hunk   int    `json:"hunk"` // index of the hunk in the file, or Whole
	Path   string `json:"path"`
	Header string `json:"header,omitempty"` // the hunk's @@ line
}

// Parts are the parts of a diff, in order.
func Parts(files []File) []Part {
	var out []Part
	for i, f := range files {
		if wholeFile(f.Mode, f.Binary, len(f.Hunks)) {
			out = append(out, Part{File: i, Hunk: Whole, Path: f.Path()})
			continue
		}
		for j, h := range f.Hunks {
			out = append(out, Part{File: i, Hunk: j, Path: f.Path(), Header: h.Header})
		}
	}
	return out
}

// wholeFile reports whether a file is decided on whole: per-hunk decisions
// are for a text file that stays where it is.
func wholeFile(mode string, binary bool, hunks int) bool {
	return mode != "" || binary || hunks == 0
}

// Choice is a reviewer's decision on a part. Edit, when set, is the new
// side of an accepted hunk as the reviewer rewrote it (lines separated by
// "\n"); it replaces the hunk's context and added lines.
type Choice struct {
	File, Hunk int
	Accept     bool
	Edit       *string
	Suggest    []Suggestion // applied to an accepted hunk its Edit leaves as proposed
}

// Suggestion is a change a reviewer's comment suggests for lines of a
// hunk's new side (Line to End, numbered as in the new file; End 0 is
// Line): the lines that replace them ("" removes them).
type Suggestion struct {
	Line, End int
	Text      string
}

// ParseSuggestion reads the suggestion of a comment: the text of its
// "```suggestion" block, as on GitHub (ok false when it has none; a block
// left open runs to the comment's end).
func ParseSuggestion(comment string) (text string, ok bool) {
	comment = strings.ReplaceAll(comment, "\r\n", "\n")
	_, rest, found := strings.Cut(comment, "```suggestion\n")
	if !found {
		if strings.HasSuffix(strings.TrimRight(comment, " \n"), "```suggestion") {
			return "", true // an empty block: remove the line
		}
		return "", false
	}
	if end := strings.Index(rest, "```"); end >= 0 {
		rest = rest[:end]
	}
	return strings.TrimSuffix(rest, "\n"), true
}

// suggest is a hunk's new side with its suggestions applied: the lines
// each names replaced by its text. Two suggestions for the same line are
// an error: which one would win is not the reviewer's to guess.
func suggest(f *gitdiff.TextFragment, all []Suggestion) (string, error) {
	side := strings.Split(newSide(f), "\n")
	taken := make([]bool, len(side))
	repl := make([][]string, len(side))
	for _, s := range all {
		end := max(s.End, s.Line)
		from, to := s.Line-int(f.NewPosition), end-int(f.NewPosition)
		if f.NewLines == 0 || from < 0 || to >= len(side) {
			return "", fmt.Errorf("the suggestion is for line %d, which this hunk does not show (lines %d to %d)", end, f.NewPosition, f.NewPosition+f.NewLines-1)
		}
		for i := from; i <= to; i++ {
			if taken[i] {
				return "", fmt.Errorf("two suggestions change line %d: keep one", int(f.NewPosition)+i)
			}
			taken[i] = true
		}
		repl[from] = []string{}
		if s.Text != "" {
			repl[from] = strings.Split(s.Text, "\n")
		}
	}
	var out []string
	for i, l := range side {
		switch {
		case repl[i] != nil:
			out = append(out, repl[i]...)
		case !taken[i]:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n"), nil
}

// Edit is a hunk the reviewer rewrote before it was applied.
type Edit struct {
	Part
	Proposed string `json:"proposed"` // the hunk's new side as the agent wrote it
	Applied  string `json:"applied"`  // as the reviewer had it applied
}

// Selection is the diff a set of choices leaves: the accepted parts, with
// their edits.
type Selection struct {
	Diff     string   // a git diff of the accepted parts; "" when none is
	Changed  []string // the paths it touches
	Applied  []Part
	Rejected []Part // parts rejected, or given no choice (fail closed)
	Edits    []Edit
}

// ErrNoSuchPart is a choice about a part the diff does not have.
var ErrNoSuchPart = errors.New("no such part of the diff")

// Select applies choices to the diff text: a part without a choice is
// rejected. A choice about a part that does not exist is an error, as is
// an edit of a whole-file part.
func Select(text string, choices []Choice) (Selection, error) {
	parsed, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return Selection{}, err
	}
	files, err := Parse(text)
	if err != nil {
		return Selection{}, err
	}
	byPart := map[[2]int]Choice{}
	for _, c := range choices {
		if c.File < 0 || c.File >= len(files) || (c.Hunk != Whole && (c.Hunk < 0 || c.Hunk >= len(files[c.File].Hunks))) ||
			wholeFile(files[c.File].Mode, files[c.File].Binary, len(files[c.File].Hunks)) != (c.Hunk == Whole) {
			return Selection{}, fmt.Errorf("%w: file %d hunk %d", ErrNoSuchPart, c.File, c.Hunk)
		}
		if (c.Edit != nil || len(c.Suggest) > 0) && (c.Hunk == Whole || !c.Accept) {
			return Selection{}, fmt.Errorf("file %d hunk %d: only an accepted hunk of a text file can be edited", c.File, c.Hunk)
		}
		byPart[[2]int{c.File, c.Hunk}] = c
	}
	var sel Selection
	var out strings.Builder
	for _, p := range Parts(files) {
		c, ok := byPart[[2]int{p.File, p.Hunk}]
		if !ok || !c.Accept {
			sel.Rejected = append(sel.Rejected, p)
			continue
		}
		sel.Applied = append(sel.Applied, p)
		if c.Edit != nil || len(c.Suggest) > 0 {
			frag := parsed[p.File].TextFragments[p.Hunk]
			proposed := newSide(frag)
			edited := proposed
			if c.Edit != nil {
				edited = strings.ReplaceAll(*c.Edit, "\r\n", "\n") // a browser sends a textarea's lines with CRLF
			}
			if edited == proposed && len(c.Suggest) > 0 { // a suggestion is the edit of a hunk not edited by hand
				if edited, err = suggest(frag, c.Suggest); err != nil {
					return Selection{}, fmt.Errorf("%s hunk %d: %w", p.Path, p.Hunk+1, err)
				}
			}
			if edited != proposed {
				if err := rewrite(frag, edited); err != nil {
					return Selection{}, fmt.Errorf("%s hunk %d: %w", p.Path, p.Hunk+1, err)
				}
				sel.Edits = append(sel.Edits, Edit{Part: p, Proposed: proposed, Applied: edited})
			}
		}
	}
	// Each file with an accepted part, with only its accepted hunks.
	kept := map[int][]int{}
	for _, p := range sel.Applied {
		kept[p.File] = append(kept[p.File], p.Hunk)
	}
	for i, g := range parsed {
		hunks, ok := kept[i]
		if !ok {
			continue
		}
		if hunks[0] != Whole {
			var frags []*gitdiff.TextFragment
			for _, h := range hunks {
				if f := g.TextFragments[h]; f.LinesAdded+f.LinesDeleted > 0 { // an edit may undo a hunk
					frags = append(frags, f)
				}
			}
			if len(frags) == 0 {
				continue
			}
			renumber(frags)
			g.TextFragments = frags
			g.OldOIDPrefix, g.NewOIDPrefix = "", "" // the new blob is no longer the agent's
		}
		out.WriteString(g.String())
		sel.Changed = appendPaths(sel.Changed, files[i])
	}
	sel.Diff = out.String()
	return sel, nil
}

// Paths lists the paths the files' changes touch: both names of a rename.
func Paths(files []File) []string {
	var paths []string
	for _, f := range files {
		paths = appendPaths(paths, f)
	}
	return paths
}

// appendPaths adds the paths a file's change touches: both names of a
// rename.
func appendPaths(paths []string, f File) []string {
	if f.OldPath != "" && f.OldPath != f.NewPath {
		paths = append(paths, f.OldPath)
	}
	if f.NewPath != "" {
		paths = append(paths, f.NewPath)
	}
	return paths
}

// newSide is a hunk's lines after the change: its context and added lines.
func newSide(f *gitdiff.TextFragment) string {
	var b strings.Builder
	for _, l := range f.Lines {
		if l.Op != gitdiff.OpDelete {
			b.WriteString(l.Line)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// rewrite makes a hunk's new side edited: the lines its old side shares
// with the edit at the start and end stay context, the rest of the old
// side is deleted and the rest of the edit added.
func rewrite(f *gitdiff.TextFragment, edited string) error {
	var old []gitdiff.Line
	noEOL := false
	for _, l := range f.Lines {
		if l.Op != gitdiff.OpAdd {
			old = append(old, gitdiff.Line{Op: gitdiff.OpContext, Line: l.Line})
		}
		if l.Op != gitdiff.OpDelete {
			noEOL = l.NoEOL()
		}
	}
	var lines []string
	if edited != "" {
		for _, s := range strings.Split(edited, "\n") {
			lines = append(lines, s+"\n")
		}
		if noEOL {
			lines[len(lines)-1] = strings.TrimSuffix(lines[len(lines)-1], "\n")
		}
	}
	pre := 0
	for pre < len(old) && pre < len(lines) && old[pre].Line == lines[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(lines)-pre && old[len(old)-1-suf].Line == lines[len(lines)-1-suf] {
		suf++
	}
	var out []gitdiff.Line
	out = append(out, old[:pre]...)
	for _, l := range old[pre : len(old)-suf] {
		out = append(out, gitdiff.Line{Op: gitdiff.OpDelete, Line: l.Line})
	}
	for _, s := range lines[pre : len(lines)-suf] {
		out = append(out, gitdiff.Line{Op: gitdiff.OpAdd, Line: s})
	}
	out = append(out, old[len(old)-suf:]...)
	f.Lines = out
	f.NewLines, f.LinesAdded, f.LinesDeleted = int64(len(lines)), int64(len(lines)-pre-suf), int64(len(old)-pre-suf)
	f.LeadingContext, f.TrailingContext = int64(pre), int64(suf)
	if f.LinesAdded == 0 && f.LinesDeleted == 0 {
		f.LeadingContext, f.TrailingContext = int64(len(old)), 0 // context only: git counts it all as leading
	}
	return f.Validate()
}

// renumber sets the new-side positions of the hunks kept of a file, as the
// ones dropped before them no longer move the lines.
func renumber(frags []*gitdiff.TextFragment) {
	var shift int64
	for _, f := range frags {
		switch {
		case f.OldLines == 0: // an insertion after line OldPosition
			f.NewPosition = f.OldPosition + shift + 1
		case f.NewLines == 0: // a deletion: the line before it
			f.NewPosition = f.OldPosition + shift - 1
		default:
			f.NewPosition = f.OldPosition + shift
		}
		shift += f.NewLines - f.OldLines
	}
}
