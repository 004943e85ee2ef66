package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/highlight"
	"github.com/proctor-dev/proctor/internal/patch"
)

// DiffFile is one file of a diff as the page shows it.
type DiffFile struct {
	Path, OldPath  string // the path after the change (before it when deleted); the old path of a rename
	Mode           string // "new", "deleted", "renamed" or ""
	Binary         bool
	Added, Deleted int
	Index          int
	Lines          int        // diff lines, highlighted or not
	Parts          int        // what a review part by part decides on: its hunks, or the file whole
	Hunks          []DiffHunk // highlighted; none in a listed file not loaded yet
	Review         bool       // show the controls of a review part by part
	Draft          Draft      // the reviewer's draft review, by field name
	Link           string     // where the file points when the change makes it a link
	LinkLeaves     bool       // the link points outside the source: it needs its own accept
	RunID          string     // the run whose diff it is, for the links that load more of it
	Below          *Gap       // the file's lines after its last hunk, shown on request
}

// Gap is the lines of a file's old side that a diff leaves out, between
// two hunks or at an end: old lines From to To (To 0: to the file's end),
// each at its number plus Shift in the new file.
type Gap struct {
	From, To, Shift int
}

// ExpandStep is how many lines of a gap one click shows.
const ExpandStep = 20

// Expand is what a click on a gap shows of the old file's lines: up to
// ExpandStep of them nearest the hunk (the gap's end when up, its start
// when not), highlighted, and the gap left (nil when none is).
func Expand(path string, old []string, g Gap, up bool) ([]DiffLine, *Gap) {
	to := g.To
	if to <= 0 || to > len(old) {
		to = len(old)
	}
	from := max(g.From, 1)
	if from > to {
		return nil, nil
	}
	first, last := from, min(to, from+ExpandStep-1)
	if up {
		first, last = max(from, to-ExpandStep+1), to
	}
	toks := highlight.For(path).Lines(old[first-1 : last])
	rows := make([]DiffLine, 0, last-first+1)
	for i := first; i <= last; i++ {
		rows = append(rows, DiffLine{Kind: patch.Context, OldNo: i, NewNo: i + g.Shift, Tokens: toks[i-first]})
	}
	var rest *Gap
	switch {
	case up && first > from:
		rest = &Gap{From: from, To: first - 1, Shift: g.Shift}
	case !up && last < to:
		rest = &Gap{From: last + 1, To: g.To, Shift: g.Shift}
	}
	return rows, rest
}

// lines is a gap's size in words for its button.
func (g Gap) lines() string {
	if g.To <= 0 {
		return "more lines"
	}
	n := g.To - g.From + 1
	if n > ExpandStep {
		return itoa(ExpandStep) + " more lines"
	}
	return plural(n, "more line", "more lines")
}

// Whole reports whether the file is decided on whole (new, deleted,
// renamed, binary, or without hunks) rather than hunk by hunk.
func (f DiffFile) Whole() bool { return f.Mode != "" || f.Binary || len(f.Hunks) == 0 }

// newDiffFile is the page's view of file number index, not highlighted.
func newDiffFile(f patch.File, index int) DiffFile {
	df := DiffFile{Path: f.Path(), OldPath: f.OldPath, Mode: f.Mode, Binary: f.Binary, Added: f.Added, Deleted: f.Deleted, Index: index,
		Link: f.Link, LinkLeaves: f.Leaves}
	for _, h := range f.Hunks {
		df.Lines += len(h.Lines)
	}
	df.Parts = len(f.Hunks)
	if df.Mode != "" || df.Binary || df.Parts == 0 {
		df.Parts = 1 // decided whole (Whole)
	}
	return df
}

// DiffHunk is a hunk with its lines highlighted, and the same lines paired
// for the side-by-side view.
type DiffHunk struct {
	Header  string
	Lines   []DiffLine
	Rows    []SplitRow
	NewSide string // its context and added lines, for an edit before applying
	Above   *Gap   // the old lines between it and the hunk before (or the file's start)
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

// A diff this small is shown whole on the run page; a larger one is a list
// of its files (the first ListedFiles of them), each loaded when opened.
// Highlighting costs milliseconds a file, so a page of 100,000 files would
// take minutes.
const (
	InlineFiles = 50
	InlineLines = 5000
	ListedFiles = 1000
)

// Inline reports whether a diff is small enough to show whole.
func Inline(files []patch.File) bool {
	if len(files) > InlineFiles {
		return false
	}
	lines := 0
	for _, f := range files {
		for _, h := range f.Hunks {
			lines += len(h.Lines)
		}
	}
	return lines <= InlineLines
}

// ListDiff is the run page's view of a large diff: its first ListedFiles
// files, not highlighted, each to be loaded on its own.
func ListDiff(files []patch.File) []DiffFile {
	out := make([]DiffFile, 0, min(len(files), ListedFiles))
	for i, f := range files[:min(len(files), ListedFiles)] {
		out = append(out, newDiffFile(f, i))
	}
	return out
}

// BuildFile highlights file number index of a diff.
func BuildFile(f patch.File, index int) DiffFile {
	df := BuildDiff([]patch.File{f})[0]
	df.Index = index
	return df
}

// BuildDiff highlights a parsed diff and pairs its lines.
func BuildDiff(files []patch.File) []DiffFile {
	var out []DiffFile
	for i, f := range files {
		df := newDiffFile(f, i)
		h := highlight.For(df.Path)
		expandable := f.OldPath != "" && f.Mode != "new" && f.Mode != "deleted" && !f.Binary
		end, shift := 0, 0 // the last old line of the hunk before; how far the hunks before moved the lines after them
		for _, hk := range f.Hunks {
			texts := make([]string, len(hk.Lines))
			for j, l := range hk.Lines {
				texts[j] = l.Text
			}
			toks := h.Lines(texts)
			dh := DiffHunk{Header: hk.Header}
			var side []string
			for j, l := range hk.Lines {
				if l.Kind == patch.Context || l.Kind == patch.Added {
					side = append(side, l.Text)
				}
				if l.Kind == patch.Note {
					toks[j] = []highlight.Token{{Text: l.Text}}
				}
				dh.Lines = append(dh.Lines, DiffLine{Kind: l.Kind, OldNo: l.OldNo, NewNo: l.NewNo, Tokens: toks[j]})
			}
			dh.Rows, dh.NewSide = pair(dh.Lines), strings.Join(side, "\n")
			if expandable && hk.After > end {
				dh.Above = &Gap{From: end + 1, To: hk.After, Shift: shift}
			}
			end = hk.After
			for _, l := range hk.Lines {
				switch l.Kind {
				case patch.Context:
					end++
				case patch.Deleted:
					end, shift = end+1, shift-1
				case patch.Added:
					shift++
				}
			}
			for _, r := range dh.Rows {
				if r.Left != nil && r.Right != nil && r.Left != r.Right {
					markChanged(r.Left, r.Right)
				}
			}
			df.Hunks = append(df.Hunks, dh)
		}
		if expandable && len(f.Hunks) > 0 && trailingContext(f.Hunks[len(f.Hunks)-1]) >= 3 { // git shows fewer lines after a hunk at the file's end
			df.Below = &Gap{From: end + 1, Shift: shift}
		}
		out = append(out, df)
	}
	return out
}

// markChanged marks what changed inside a deleted line and the added line
// paired with it: the part between what they share at the start and at
// the end (in whole characters, widened to whole words). Lines that share
// nothing, or only white space, are left unmarked: the whole line changed.
func markChanged(old, new *DiffLine) {
	a, b := lineText(old), lineText(new)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	// The shared start ends, and the shared end starts, between whole
	// characters and outside a word (a[:p] == b[:p]; the shared end starts
	// at ia in a and ib in b, with a[ia] == b[ib]).
	in := func(x string, i int, f func(byte) bool) bool { return i >= 0 && i < len(x) && f(x[i]) }
	cont := func(c byte) bool { return !utf8.RuneStart(c) }
	for p > 0 && (in(a, p, cont) || in(b, p, cont) || isWord(a[p-1]) && (in(a, p, isWord) || in(b, p, isWord))) {
		p--
	}
	for s > 0 {
		ia, ib := len(a)-s, len(b)-s
		if !cont(a[ia]) && !(isWord(a[ia]) && (ia > p && isWord(a[ia-1]) || ib > p && isWord(b[ib-1]))) {
			break
		}
		s--
	}
	if strings.TrimSpace(a[:p]+a[len(a)-s:]) == "" {
		return
	}
	old.Tokens = markRange(old.Tokens, p, len(a)-s)
	new.Tokens = markRange(new.Tokens, p, len(b)-s)
}

func lineText(l *DiffLine) string {
	var b strings.Builder
	for _, t := range l.Tokens {
		b.WriteString(t.Text)
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

// markRange splits tokens at byte offsets from and to, and marks the
// tokens between them changed (class "chg").
func markRange(tokens []highlight.Token, from, to int) []highlight.Token {
	if from >= to {
		return tokens
	}
	var out []highlight.Token
	at := 0
	for _, t := range tokens {
		start, end := at, at+len(t.Text)
		at = end
		cuts := []int{start}
		for _, c := range []int{from, to} {
			if c > start && c < end {
				cuts = append(cuts, c)
			}
		}
		cuts = append(cuts, end)
		for i := 0; i+1 < len(cuts); i++ {
			piece := highlight.Token{Class: t.Class, Text: t.Text[cuts[i]-start : cuts[i+1]-start]}
			if cuts[i] >= from && cuts[i+1] <= to && piece.Text != "" {
				piece.Class = strings.TrimSpace(piece.Class + " chg")
			}
			out = append(out, piece)
		}
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

// partName is the form field of a part's decision: part.F.H, H "file" for a
// whole file; editName the field of a hunk's edited new side.
func partName(file, hunk int) string {
	if hunk < 0 {
		return "part." + strconv.Itoa(file) + ".file"
	}
	return "part." + strconv.Itoa(file) + "." + strconv.Itoa(hunk)
}

func editName(file, hunk int) string { return "edit." + strconv.Itoa(file) + "." + strconv.Itoa(hunk) }

// Draft is a reviewer's review not submitted yet (review.Draft's fields):
// the review form's values by field name, shown again when the page is.
type Draft map[string]string

// A Field is one field of a form: its name and value.
type Field struct{ Name, Value string }

// FileFields are the draft's decisions, edits and comments on file (not
// whether it was viewed, which its name's checkbox carries), in name
// order: a file of a large diff that is not loaded carries them in the
// review form as hidden fields, so that a save, a reload and Apply
// accepted keep them.
func (d Draft) FileFields(file int) []Field {
	var out []Field
	for name, v := range d {
		kind, rest, _ := strings.Cut(name, ".")
		f, _, _ := strings.Cut(rest, ".")
		if (kind == "part" || kind == "edit" || kind == "comment" || kind == "line") && f == strconv.Itoa(file) {
			out = append(out, Field{name, v})
		}
	}
	slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Chosen is the draft's decision on part hunk of file ("accept", "reject"
// or "").
func (d Draft) Chosen(file, hunk int) string { return d[partName(file, hunk)] }

// Edit is hunk's text in its editor: the draft's edit, else the hunk's
// new side.
func (d Draft) Edit(file, hunk int, h DiffHunk) string {
	if e, ok := d[editName(file, hunk)]; ok {
		return e
	}
	return "\n" + h.NewSide
}

// Viewed reports whether the draft marks file viewed.
func (d Draft) Viewed(file int) bool { return d["viewed."+strconv.Itoa(file)] != "" }

// A DraftComment is a comment of the draft on lines of a hunk.
type DraftComment struct {
	Key   string // its fields' names less "comment." and "line."
	Text  string
	Span  string // its lines as the line field holds them; "" on the hunk
	Words string // its lines, for a person ("line 12", "old line 7")
	New   bool   // its lines are the new file's: it can suggest a change
	at    patch.Span
}

// HunkComments are a hunk's draft comments: by the line each ends on
// (several a line), and those on the hunk as a whole or on lines it does
// not show (Loose, shown below it, so that none is hidden).
type HunkComments struct {
	At    map[patch.LineRef][]DraftComment
	Loose []DraftComment
}

// On are the comments that end on line l.
func (h *HunkComments) On(l *DiffLine) []DraftComment {
	if h == nil || l == nil {
		return nil
	}
	if l.Kind == patch.Deleted {
		return h.At[patch.LineRef{Old: true, N: l.OldNo}]
	}
	return slices.Concat(h.At[patch.LineRef{N: l.NewNo}], h.At[patch.LineRef{Old: true, N: l.OldNo}])
}

// ends reports whether line l of a hunk is where span s ends.
func ends(l DiffLine, s patch.Span) bool {
	if s.End.Old {
		return l.Kind != patch.Added && l.OldNo == s.End.N
	}
	return l.Kind != patch.Deleted && l.Kind != patch.Note && l.NewNo == s.End.N
}

// commentKey reads a draft comment's field name: comment.F.H.N (or
// comment.F.H, as drafts named it before several a hunk).
func commentKey(name string) (file, hunk int, key string, ok bool) {
	key, ok = strings.CutPrefix(name, "comment.")
	parts := strings.Split(key, ".")
	if !ok || len(parts) < 2 || len(parts) > 3 {
		return 0, 0, "", false
	}
	file, err1 := strconv.Atoi(parts[0])
	hunk, err2 := strconv.Atoi(parts[1])
	return file, hunk, key, err1 == nil && err2 == nil
}

// Comments are the draft's comments on file f, by hunk, in the order they
// were made.
func (d Draft) Comments(f DiffFile) map[int]*HunkComments {
	out := map[int]*HunkComments{}
	for name, text := range d {
		file, hunk, key, ok := commentKey(name)
		if !ok || file != f.Index || hunk < 0 || hunk >= len(f.Hunks) {
			continue
		}
		c := DraftComment{Key: key, Text: text, Span: d["line."+key], Words: "the hunk"}
		h := out[hunk]
		if h == nil {
			h = &HunkComments{At: map[patch.LineRef][]DraftComment{}}
			out[hunk] = h
		}
		span, err := patch.ParseSpan(c.Span)
		if err != nil || !slices.ContainsFunc(f.Hunks[hunk].Lines, func(l DiffLine) bool { return ends(l, span) }) {
			if err == nil {
				c.Words = span.Words() + " (not in this hunk)"
			}
			h.Loose = append(h.Loose, c)
			continue
		}
		c.at, c.Words, c.New = span, span.Words(), !span.Start.Old && !span.End.Old
		h.At[span.End] = append(h.At[span.End], c)
	}
	byKey := func(a, b DraftComment) int { return strings.Compare(commentOrder(a.Key), commentOrder(b.Key)) }
	for _, h := range out {
		for _, cs := range h.At {
			slices.SortFunc(cs, byKey)
		}
		slices.SortFunc(h.Loose, byKey)
	}
	return out
}

// commentOrder sorts comment keys by their number (N of F.H.N; none
// first).
func commentOrder(key string) string {
	parts := strings.Split(key, ".")
	if len(parts) < 3 {
		return ""
	}
	return strings.Repeat("0", 5-min(len(parts[2]), 5)) + parts[2]
}

func partID(file, hunk int) string { return strings.ReplaceAll(partName(file, hunk), ".", "-") }

// partAttrs makes a hunk's rows a part a reviewer moves to and decides on;
// under review, they name its file and itself, for the comments app.js
// starts on its lines (comment.F.H.N).
func partAttrs(f DiffFile, hunk int) templ.Attributes {
	if !f.Review {
		return templ.Attributes{}
	}
	at := templ.Attributes{"data-file": strconv.Itoa(f.Index), "data-hunk": strconv.Itoa(hunk), "data-path": f.Path}
	if !f.Whole() {
		at["class"], at["tabindex"], at["id"] = "part", "-1", partID(f.Index, hunk)
	}
	return at
}

// partLabel names a part of a reviewed diff: "main.go hunk 2 (-5,7 +5,7)",
// or the file.
func partLabel(p bundle.ReviewPart) string {
	if p.Hunk == 0 {
		return p.Path + " (whole file)"
	}
	label := p.Path + " hunk " + strconv.Itoa(p.Hunk)
	if at := strings.SplitN(p.Header, "@@", 3); len(at) == 3 {
		label += " (" + strings.TrimSpace(at[1]) + ")"
	}
	return label
}

// wholeWhy says why a file is decided on whole.
func wholeWhy(f DiffFile) string {
	switch {
	case f.Binary:
		return "a binary file is decided on whole"
	case f.Mode != "":
		return "a " + f.Mode + " file is decided on whole"
	}
	return "a change without hunks (its mode) is decided on whole"
}

// editRows is how tall a hunk's editor is.
func editRows(h DiffHunk) string { return strconv.Itoa(min(strings.Count(h.NewSide, "\n")+2, 30)) }

// diffFileURL is where file number n of a run's diff is loaded from.
func diffFileURL(runID string, n int, split bool) string {
	u := runURL(runID) + "/diff/" + strconv.Itoa(n)
	if split {
		u += "?view=split"
	}
	return u
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

// trailingContext is how many unchanged lines end a hunk.
func trailingContext(h patch.Hunk) int {
	n := 0
	for i := len(h.Lines) - 1; i >= 0 && h.Lines[i].Kind == patch.Context; i-- {
		n++
	}
	return n
}

// gapURL loads a gap's lines: up toward the hunk below it, or down from
// the hunk above it.
func gapURL(runID string, file int, g Gap, up, split bool) string {
	q := url.Values{"from": {itoa(g.From)}, "to": {itoa(g.To)}, "shift": {itoa(g.Shift)}}
	if up {
		q.Set("dir", "up")
	}
	if split {
		q.Set("view", "split")
	}
	return "/runs/" + url.PathEscape(runID) + "/diff/" + itoa(file) + "/lines?" + q.Encode()
}
