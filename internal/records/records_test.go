package records_test

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
)

// The next run's diff addresses a comment when it changes the commented
// line or one within two lines of it; a comment on line 0 is about the
// whole file.
func TestACommentIsAddressedByAChangeNearItsLine(t *testing.T) {
	// notes.txt has lines 1..20; the next run replaces line 10 and adds a
	// line after line 18; other.txt is deleted; top.txt gets a first line.
	diff := `diff --git a/notes.txt b/notes.txt
--- a/notes.txt
+++ b/notes.txt
@@ -9,3 +9,3 @@
 line 9
-line 10
+line ten
 line 11
@@ -18,0 +19 @@ line 17
+after 18
diff --git a/other.txt b/other.txt
deleted file mode 100644
--- a/other.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/top.txt b/top.txt
--- a/top.txt
+++ b/top.txt
@@ -1,2 +1,3 @@
+first
 one
 two
diff --git a/old.txt b/renamed.txt
similarity index 100%
rename from old.txt
rename to renamed.txt
`
	files, err := patch.Parse(diff)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		line int
		want bool
	}{
		{"notes.txt", 10, true},  // the line itself
		{"notes.txt", 12, true},  // two lines below the change
		{"notes.txt", 8, true},   // two above
		{"notes.txt", 13, false}, // three below, untouched
		{"notes.txt", 5, false},
		{"notes.txt", 0, true},  // the file
		{"notes.txt", 20, true}, // the line added after 18 is within two
		{"notes.txt", 16, true},
		{"notes.txt", 15, false},
		{"other.txt", 7, true},    // deleted: the whole file
		{"top.txt", 1, true},      // a line added before it
		{"top.txt", 2, true},      // within two of the new first line
		{"top.txt", 4, false},     //
		{"old.txt", 3, false},     // renamed, its lines unchanged
		{"old.txt", 0, true},      // but the file changed
		{"renamed.txt", 0, false}, // comments name the commented run's path
		{"absent.txt", 0, false},
	} {
		if got := records.Addressed(files, tc.path, tc.line); got != tc.want {
			t.Errorf("%s:%d addressed = %v, want %v", tc.path, tc.line, got, tc.want)
		}
	}
}

// The message that asks for changes starts with who asked and the first
// line of the summary (the new run's title in lists), then names the run,
// the rest of the summary and each comment with its code quoted.
func TestChangesMessageLeadsWithWhoAskedAndWhat(t *testing.T) {
	for _, tc := range []struct {
		cr    bundle.ChangeRequest
		first string
		has   []string
	}{
		{bundle.ChangeRequest{By: "Dana", Summary: "Only line 20.\nThe rest is fine.", Comments: []bundle.Comment{{Path: "a.txt", Line: 20, Text: "say twenty", Quote: "line 20"}}},
			"Changes requested by Dana: Only line 20.", []string{"(run r1)", "\nThe rest is fine.\n", "- a.txt:20: say twenty\n  > line 20\n"}},
		{bundle.ChangeRequest{By: "Bo", Comments: []bundle.Comment{{Path: "a.txt", Text: "why?"}}},
			"Changes requested by Bo: a comment on your changes.", []string{"- a.txt: why?\n"}},
		{bundle.ChangeRequest{By: "Bo", Comments: []bundle.Comment{{Path: "a.txt", Text: "x"}, {Path: "b.txt", Line: 3, Text: "y"}}},
			"Changes requested by Bo: 2 comments on your changes.", []string{"- b.txt:3: y\n"}},
	} {
		msg := records.ChangesMessage("r1", tc.cr)
		if first, _, _ := strings.Cut(msg, "\n"); first != tc.first {
			t.Errorf("first line %q, want %q", first, tc.first)
		}
		for _, h := range tc.has {
			if !strings.Contains(msg, h) {
				t.Errorf("%q lacks %q:\n%s", tc.first, h, msg)
			}
		}
	}
}
