package run_test

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
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
		if got := run.Addressed(files, tc.path, tc.line); got != tc.want {
			t.Errorf("%s:%d addressed = %v, want %v", tc.path, tc.line, got, tc.want)
		}
	}
}
