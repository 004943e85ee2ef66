package patch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/workspace"
)

// repo makes a git repository with files, commits them, applies change
// (path → new content, "" deletes) and returns the folder and git's diff.
func repo(t *testing.T, files, change map[string]string, renames ...[2]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(m map[string]string) {
		for p, c := range m {
			if c == "" {
				os.Remove(filepath.Join(dir, p))
				continue
			}
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
		}
	}
	git("init", "-q")
	write(files)
	git("add", "-A")
	git("commit", "-qm", "base")
	for _, r := range renames {
		git("mv", r[0], r[1])
	}
	write(change)
	git("add", "-A")
	diff := git("diff", "--cached", "--binary", "-M")
	git("reset", "-q", "--hard")
	return dir, diff
}

// apply applies diff to dir as the gate does.
func apply(t *testing.T, dir, diff string) {
	t.Helper()
	if diff == "" {
		return
	}
	if err := workspace.ApplyPatch(context.Background(), dir, diff); err != nil {
		t.Fatalf("%v\n%s", err, diff)
	}
}

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i) + "\n")
	}
	return b.String()
}

func TestSelectAppliesOnlyTheAcceptedParts(t *testing.T) {
	base := lines(60, func(i int) string { return "line " + string(rune('a'+i%26)) + strings.Repeat("x", i%3) })
	// Three hunks far apart: line 5 changed, two lines added after 30, line 55 deleted.
	next := strings.Split(base, "\n")
	next[4] = "line five, changed"
	next = append(next[:30], append([]string{"added one", "added two"}, next[30:]...)...)
	next = append(next[:56], next[57:]...)
	changed := strings.Join(next, "\n")
	edit := func(s string) *string { return &s }

	files := map[string]string{"main.go": base, "old.txt": "moved\n", "gone.txt": "bye\n", "logo.bin": "\x00\x01\x02"}
	change := map[string]string{"main.go": changed, "gone.txt": "", "new.txt": "hello\n", "logo.bin": "\x00\x09\x02\x03"}
	dir, diff := repo(t, files, change, [2]string{"old.txt", "renamed.txt"})
	parsed, err := patch.Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	parts := patch.Parts(parsed)
	var names []string
	index := map[string]patch.Part{}
	for _, p := range parts {
		name := p.Path
		if p.Hunk != patch.Whole {
			name += "#" + string(rune('1'+p.Hunk))
		}
		names = append(names, name)
		index[name] = p
	}
	if got := strings.Join(names, " "); got != "gone.txt logo.bin main.go#1 main.go#2 main.go#3 new.txt renamed.txt" {
		t.Fatalf("parts: %s", got)
	}
	choose := func(name string, accept bool, e *string) patch.Choice {
		p := index[name]
		return patch.Choice{File: p.File, Hunk: p.Hunk, Accept: accept, Edit: e}
	}
	nth := func(s string, n int) string { return strings.Split(s, "\n")[n-1] }

	for _, tc := range []struct {
		name    string
		choices []patch.Choice
		check   func(t *testing.T, read func(string) (string, bool))
		changed string
	}{
		{"two of three hunks", []patch.Choice{choose("main.go#1", true, nil), choose("main.go#2", false, nil), choose("main.go#3", true, nil)},
			func(t *testing.T, read func(string) (string, bool)) {
				got, _ := read("main.go")
				if nth(got, 5) != "line five, changed" || strings.Contains(got, "added one") || len(strings.Split(got, "\n")) != 60 {
					t.Errorf("main.go:\n%s", got)
				}
			}, "main.go"},
		{"the last hunk alone (the ones before it dropped)", []patch.Choice{choose("main.go#3", true, nil)},
			func(t *testing.T, read func(string) (string, bool)) {
				got, _ := read("main.go")
				if nth(got, 5) == "line five, changed" || strings.Count(got, "\n") != 59 {
					t.Errorf("main.go:\n%s", got)
				}
			}, "main.go"},
		{"no choice is a rejection", nil, func(t *testing.T, read func(string) (string, bool)) {
			if got, _ := read("main.go"); got != base {
				t.Error("main.go changed")
			}
		}, ""},
		{"whole files: delete, new, rename, binary", []patch.Choice{choose("gone.txt", true, nil), choose("new.txt", true, nil), choose("renamed.txt", true, nil), choose("logo.bin", true, nil)},
			func(t *testing.T, read func(string) (string, bool)) {
				_, gone := read("gone.txt")
				n, _ := read("new.txt")
				r, _ := read("renamed.txt")
				_, old := read("old.txt")
				b, _ := read("logo.bin")
				if gone || n != "hello\n" || r != "moved\n" || old || b != "\x00\x09\x02\x03" {
					t.Errorf("gone %v new %q renamed %q old %v bin %q", gone, n, r, old, b)
				}
			}, "gone.txt logo.bin new.txt old.txt renamed.txt"},
		{"an edited hunk", []patch.Choice{choose("main.go#1", true, edit(strings.Join(append(strings.Split(base, "\n")[1:4], "line five, as the reviewer wants", nth(base, 6), nth(base, 7), nth(base, 8)), "\n")))},
			func(t *testing.T, read func(string) (string, bool)) {
				got, _ := read("main.go")
				if nth(got, 5) != "line five, as the reviewer wants" || strings.Count(got, "\n") != 60 {
					t.Errorf("main.go:\n%s", got)
				}
			}, "main.go"},
		{"a hunk edited to end in a new line (no trailing context left)", []patch.Choice{choose("main.go#1", true, edit(strings.Join(append(strings.Split(base, "\n")[1:4], "line five, changed", nth(base, 6), nth(base, 7), nth(base, 8), "one more"), "\n")))},
			func(t *testing.T, read func(string) (string, bool)) {
				got, _ := read("main.go")
				if nth(got, 5) != "line five, changed" || nth(got, 9) != "one more" || nth(got, 10) != nth(base, 9) || strings.Count(got, "\n") != 61 {
					t.Errorf("main.go:\n%s", got)
				}
			}, "main.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := patch.Select(diff, tc.choices)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sel.Changed, " "); got != tc.changed {
				t.Errorf("changed %q, want %q", got, tc.changed)
			}
			if len(sel.Applied)+len(sel.Rejected) != len(parts) {
				t.Errorf("applied %d + rejected %d != %d parts", len(sel.Applied), len(sel.Rejected), len(parts))
			}
			work := t.TempDir()
			cp := exec.Command("cp", "-a", dir+"/.", work)
			if out, err := cp.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			apply(t, work, sel.Diff)
			tc.check(t, func(p string) (string, bool) {
				b, err := os.ReadFile(filepath.Join(work, p))
				return string(b), err == nil
			})
		})
	}
}

func TestSelectRecordsEditsAndRefusesWhatIsNotThere(t *testing.T) {
	_, diff := repo(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "x\n"}, map[string]string{"a.txt": "one\n2\nthree\n", "b.txt": ""})
	edited := "one\nTWO\nthree"
	sel, err := patch.Select(diff, []patch.Choice{{File: 0, Hunk: 0, Accept: true, Edit: &edited}})
	if err != nil || len(sel.Edits) != 1 || sel.Edits[0].Proposed != "one\n2\nthree" || sel.Edits[0].Applied != edited || !strings.Contains(sel.Diff, "+TWO") || !strings.Contains(sel.Diff, "-two") {
		t.Fatalf("edit: %+v %v\n%s", sel.Edits, err, sel.Diff)
	}
	same := "one\n2\nthree"
	if sel, err := patch.Select(diff, []patch.Choice{{File: 0, Hunk: 0, Accept: true, Edit: &same}}); err != nil || len(sel.Edits) != 0 {
		t.Errorf("an edit that changes nothing is not an edit: %+v %v", sel.Edits, err)
	}
	undo := "one\ntwo\nthree"
	if sel, err := patch.Select(diff, []patch.Choice{{File: 0, Hunk: 0, Accept: true, Edit: &undo}}); err != nil || sel.Diff != "" || len(sel.Changed) != 0 {
		t.Errorf("an edit back to the old lines applies nothing: %q %v %v", sel.Diff, sel.Changed, err)
	}
	for _, c := range []patch.Choice{
		{File: 2, Hunk: 0, Accept: true},                          // no such file
		{File: 0, Hunk: 1, Accept: true},                          // no such hunk
		{File: 1, Hunk: 0, Accept: true},                          // a deleted file is decided whole
		{File: 0, Hunk: patch.Whole, Accept: true},                // a modified file is decided by hunk
		{File: 1, Hunk: patch.Whole, Accept: true, Edit: &edited}, // a whole file cannot be edited
		{File: 0, Hunk: 0, Accept: false, Edit: &edited},          // nor a rejected hunk
	} {
		if _, err := patch.Select(diff, []patch.Choice{c}); err == nil {
			t.Errorf("%+v was accepted", c)
		}
	}
}

// A comment's suggestion is the edit of the line it names, unless the
// hunk was edited by hand.
func TestSelectAppliesASuggestion(t *testing.T) {
	_, diff := repo(t, map[string]string{"a.txt": "one\ntwo\nthree\n"}, map[string]string{"a.txt": "one\n2\nthree\n"})
	for _, tc := range []struct {
		name    string
		suggest []patch.Suggestion
		edit    string
		applied string
		refused string // the error, when it is refused
	}{
		{"replace the line", []patch.Suggestion{{Line: 2, Text: "II"}}, "", "one\nII\nthree", ""},
		{"with two lines", []patch.Suggestion{{Line: 3, Text: "3\n4"}}, "", "one\n2\n3\n4", ""},
		{"remove the line", []patch.Suggestion{{Line: 1}}, "", "2\nthree", ""},
		{"a range of lines", []patch.Suggestion{{Line: 2, End: 3, Text: "two-three"}}, "", "one\ntwo-three", ""},
		{"two suggestions in one hunk", []patch.Suggestion{{Line: 3, Text: "3"}, {Line: 1, Text: "1"}}, "", "1\n2\n3", ""},
		{"an edit by hand wins", []patch.Suggestion{{Line: 2, Text: "II"}}, "one\nhand\nthree", "one\nhand\nthree", ""},
		{"the edit box left as proposed", []patch.Suggestion{{Line: 2, Text: "II"}}, "one\r\n2\r\nthree", "one\nII\nthree", ""},
		{"a line outside the hunk", []patch.Suggestion{{Line: 9, Text: "x"}}, "", "", "line 9, which this hunk does not show (lines 1 to 3)"},
		{"a range past the hunk", []patch.Suggestion{{Line: 2, End: 4, Text: "x"}}, "", "", "line 4, which this hunk does not show (lines 1 to 3)"},
		{"two suggestions for one line", []patch.Suggestion{{Line: 1, End: 2, Text: "x"}, {Line: 2, Text: "y"}}, "", "", "two suggestions change line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := patch.Choice{File: 0, Hunk: 0, Accept: true, Suggest: tc.suggest}
			if tc.edit != "" {
				c.Edit = &tc.edit
			}
			sel, err := patch.Select(diff, []patch.Choice{c})
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || len(sel.Edits) != 1 || sel.Edits[0].Applied != tc.applied {
				t.Fatalf("edits %+v, err %v", sel.Edits, err)
			}
		})
	}
	if _, err := patch.Select(diff, []patch.Choice{{File: 0, Hunk: 0, Accept: false, Suggest: []patch.Suggestion{{Line: 2}}}}); err == nil {
		t.Error("a suggestion for a rejected hunk was taken")
	}
}

func TestParseSuggestion(t *testing.T) {
	for _, tc := range []struct {
		comment, text string
		ok            bool
	}{
		{"round here", "", false},
		{"use math.Round:\n```suggestion\n\treturn int64(math.Round(x))\n```\nthanks", "\treturn int64(math.Round(x))", true},
		{"```suggestion\r\na\r\nb\r\n```", "a\nb", true},
		{"drop it\n```suggestion\n```", "", true},
		{"```suggestion", "", true},
		{"```suggestion\nleft open", "left open", true},
		{"```go\nx\n```", "", false},
	} {
		if text, ok := patch.ParseSuggestion(tc.comment); text != tc.text || ok != tc.ok {
			t.Errorf("ParseSuggestion(%q) = %q, %v; want %q, %v", tc.comment, text, ok, tc.text, tc.ok)
		}
	}
}
