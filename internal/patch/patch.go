package patch

import (
	"fmt"
	"strconv"
	"strings"
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
}

// Path is the file's path after the change, or before it when deleted.
func (f File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Parse reads a unified diff as written by git diff. Text it cannot place in a
// file (a preamble, garbage) is skipped; a hunk header that cannot be read is
// an error naming its line.
func Parse(text string) ([]File, error) {
	var files []File
	var f *File
	var h *Hunk
	oldNo, newNo := 0, 0
	n := 0
	for raw := range strings.Lines(text) {
		n++
		line := strings.TrimRight(raw, "\n")
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			files = append(files, File{})
			f, h = &files[len(files)-1], nil
			if a, b, ok := splitGitHeader(line[len("diff --git "):]); ok {
				f.OldPath, f.NewPath = a, b
			}
		case f != nil && h == nil && strings.HasPrefix(line, "--- "):
			f.OldPath = diffPath(line[4:])
		case f != nil && h == nil && strings.HasPrefix(line, "+++ "):
			f.NewPath = diffPath(line[4:])
		case strings.HasPrefix(line, "--- ") && f == nil:
			// A plain unified diff without "diff --git" headers.
			files = append(files, File{OldPath: diffPath(line[4:])})
			f, h = &files[len(files)-1], nil
		case f != nil && strings.HasPrefix(line, "new file mode"):
			f.Mode = "new"
		case f != nil && strings.HasPrefix(line, "deleted file mode"):
			f.Mode = "deleted"
		case f != nil && strings.HasPrefix(line, "rename from "):
			f.Mode, f.OldPath = "renamed", line[len("rename from "):]
		case f != nil && strings.HasPrefix(line, "rename to "):
			f.NewPath = line[len("rename to "):]
		case f != nil && (strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch"):
			f.Binary = true
		case f != nil && strings.HasPrefix(line, "@@"):
			o, nn, err := parseHunkHeader(line)
			if err != nil {
				return files, fmt.Errorf("line %d: %w", n, err)
			}
			f.Hunks = append(f.Hunks, Hunk{Header: line})
			h = &f.Hunks[len(f.Hunks)-1]
			oldNo, newNo = o, nn
		case h != nil && len(line) > 0 && line[0] == '+':
			h.Lines = append(h.Lines, Line{Kind: Added, NewNo: newNo, Text: line[1:]})
			newNo++
			f.Added++
		case h != nil && len(line) > 0 && line[0] == '-':
			h.Lines = append(h.Lines, Line{Kind: Deleted, OldNo: oldNo, Text: line[1:]})
			oldNo++
			f.Deleted++
		case h != nil && (line == "" || line[0] == ' '):
			text := ""
			if line != "" {
				text = line[1:]
			}
			h.Lines = append(h.Lines, Line{Kind: Context, OldNo: oldNo, NewNo: newNo, Text: text})
			oldNo++
			newNo++
		case h != nil && line[0] == '\\':
			h.Lines = append(h.Lines, Line{Kind: Note, Text: line})
		}
	}
	for i := range files {
		switch files[i].Mode {
		case "new":
			files[i].OldPath = ""
		case "deleted":
			files[i].NewPath = ""
		}
	}
	return files, nil
}

// Stats sums the files' counts.
func Stats(files []File) (added, deleted int) {
	for _, f := range files {
		added += f.Added
		deleted += f.Deleted
	}
	return added, deleted
}

func diffPath(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	if s == "/dev/null" {
		return ""
	}
	if p, ok := strings.CutPrefix(s, "a/"); ok {
		return p
	}
	if p, ok := strings.CutPrefix(s, "b/"); ok {
		return p
	}
	return s
}

// splitGitHeader splits "a/x b/x" into its two paths when they are not quoted.
func splitGitHeader(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "a/") {
		return "", "", false
	}
	i := strings.Index(s, " b/")
	if i < 0 {
		return "", "", false
	}
	return s[2:i], s[i+3:], true
}

// parseHunkHeader reads the start lines of "@@ -a[,b] +c[,d] @@".
func parseHunkHeader(line string) (oldStart, newStart int, err error) {
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[0] != "@@" || fields[3] != "@@" || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, fmt.Errorf("bad hunk header %q", line)
	}
	if oldStart, err = rangeStart(fields[1][1:]); err != nil {
		return 0, 0, fmt.Errorf("bad hunk header %q: %w", line, err)
	}
	if newStart, err = rangeStart(fields[2][1:]); err != nil {
		return 0, 0, fmt.Errorf("bad hunk header %q: %w", line, err)
	}
	return oldStart, newStart, nil
}

func rangeStart(s string) (int, error) {
	start, _, _ := strings.Cut(s, ",")
	n, err := strconv.Atoi(start)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("line number %q", start)
	}
	return n, nil
}
