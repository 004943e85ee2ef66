package patch

import (
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// LineKind says whether a diff line is context, added or deleted.
type LineKind byte

// Line kinds.
const (
	Context LineKind = ' '
	Added   LineKind = '+'
	Deleted LineKind = '-'
	Note    LineKind = '\\' // "\ No newline at end of file"
)

// Line is one line of a hunk with its numbers in the old and new file (0 when
// the line does not exist on that side).
type Line struct {
	Kind  LineKind
	OldNo int
	NewNo int
	Text  string
}

// Hunk is one "@@" block of a file diff.
type Hunk struct {
	Header string // the whole "@@ -a,b +c,d @@ section" line
	After  int    // the old line the hunk's first line follows (0: the file's start)
	Lines  []Line
}

// File is the diff of one file.
type File struct {
	OldPath string // "" when the file is new
	NewPath string // "" when the file is deleted
	Binary  bool
	Mode    string // "new", "deleted", "renamed" or ""
	Added   int
	Deleted int
	Hunks   []Hunk
	// Link is the target of the link the file is after the change ("" when
	// it is not a link), and Leaves whether that target points outside the
	// tree (LeavesTree): such a link needs its own accept.
	Link   string
	Leaves bool
	// OldBlob is the git blob the file was before the change, as the diff's
	// index line says it whole (proctor records diffs with --full-index);
	// "" for a new file, or a diff that does not say. OldLink says the file
	// was a link.
	OldBlob string
	OldLink bool
}

// Path is the file's path after the change, or before it when deleted.
func (f File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Parse reads a unified diff, as written by git diff or by diff -u, with
// github.com/bluekeyes/go-gitdiff: hunk counts, renames, binary files and
// git's quoted paths are read as git reads them. Text before the first file
// (a preamble) is skipped; a malformed file or hunk is an error naming its
// line.
func Parse(text string) ([]File, error) {
	parsed, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	// A plain diff -u keeps its names whole; one with git's a/ and b/
	// prefixes is read as git apply reads it (-p1).
	plain := !strings.Contains(text, "diff --git ")
	name := func(n string) string {
		n = strings.TrimSuffix(n, "\r") // a diff whose lines all end in CRLF
		if plain {
			if rest, ok := strings.CutPrefix(n, "a/"); ok {
				return rest
			}
			n = strings.TrimPrefix(n, "b/")
		}
		return n
	}
	files := make([]File, 0, len(parsed))
	for _, g := range parsed {
		f := File{OldPath: name(g.OldName), NewPath: name(g.NewName), Binary: g.IsBinary}
		switch {
		case g.IsNew:
			f.Mode, f.OldPath = "new", ""
		case g.IsDelete:
			f.Mode, f.NewPath = "deleted", ""
		case g.IsRename:
			f.Mode = "renamed"
		}
		for _, frag := range g.TextFragments {
			f.Hunks = append(f.Hunks, hunk(frag))
			f.Added += int(frag.LinesAdded)
			f.Deleted += int(frag.LinesDeleted)
		}
		if !g.IsNew && fullOID(g.OldOIDPrefix) {
			f.OldBlob, f.OldLink = g.OldOIDPrefix, g.OldMode == 0o120000
		}
		if g.NewMode == 0o120000 && f.NewPath != "" {
			f.Link = linkTarget(g)
			f.Leaves = LeavesTree(f.NewPath, f.Link)
		}
		files = append(files, f)
	}
	return files, nil
}

// fullOID reports whether s is a whole git object id (SHA-1 or SHA-256).
func fullOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return strings.Trim(s, "0") != "" // all zeros: no file
}

// linkTarget is the new side of a link's diff: the path it points to.
func linkTarget(g *gitdiff.File) string {
	var b strings.Builder
	for _, frag := range g.TextFragments {
		for _, l := range frag.Lines {
			if l.Op != gitdiff.OpDelete {
				b.WriteString(l.Line)
			}
		}
	}
	return b.String()
}

// LeavesTree reports whether a link at p (slash-separated, inside a tree)
// to target points outside that tree: an absolute target, or a relative
// one that climbs above the tree's top.
func LeavesTree(p, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") {
		return true
	}
	to := path.Join(path.Dir(p), target)
	return to == ".." || strings.HasPrefix(to, "../")
}

// hunk numbers the lines of a fragment.
func hunk(frag *gitdiff.TextFragment) Hunk {
	h := Hunk{Header: strings.TrimRight(frag.Header(), "\n")}
	oldNo, newNo := int(frag.OldPosition), int(frag.NewPosition)
	if h.After = oldNo - 1; frag.OldLines == 0 {
		h.After = oldNo // a hunk of added lines alone is positioned after its old line
	}
	for _, l := range frag.Lines {
		line := Line{Text: strings.TrimSuffix(strings.TrimSuffix(l.Line, "\n"), "\r")}
		switch l.Op {
		case gitdiff.OpAdd:
			line.Kind, line.NewNo = Added, newNo
			newNo++
		case gitdiff.OpDelete:
			line.Kind, line.OldNo = Deleted, oldNo
			oldNo++
		default:
			line.Kind, line.OldNo, line.NewNo = Context, oldNo, newNo
			oldNo++
			newNo++
		}
		h.Lines = append(h.Lines, line)
		if l.NoEOL() {
			h.Lines = append(h.Lines, Line{Kind: Note, Text: "\\ No newline at end of file"})
		}
	}
	return h
}

// Stats sums the files' counts.
func Stats(files []File) (added, deleted int) {
	for _, f := range files {
		added += f.Added
		deleted += f.Deleted
	}
	return added, deleted
}
