package records_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
		path     string
		line     int
		want     bool
		rangeEnd int // the comment is on lines line to rangeEnd
	}{
		{"notes.txt", 10, true, 0},  // the line itself
		{"notes.txt", 12, true, 0},  // two lines below the change
		{"notes.txt", 8, true, 0},   // two above
		{"notes.txt", 13, false, 0}, // three below, untouched
		{"notes.txt", 5, false, 0},
		{"notes.txt", 0, true, 0},  // the file
		{"notes.txt", 20, true, 0}, // the line added after 18 is within two
		{"notes.txt", 16, true, 0},
		{"notes.txt", 15, false, 0},
		{"other.txt", 7, true, 0},    // deleted: the whole file
		{"top.txt", 1, true, 0},      // a line added before it
		{"top.txt", 2, true, 0},      // within two of the new first line
		{"top.txt", 4, false, 0},     //
		{"old.txt", 3, false, 0},     // renamed, its lines unchanged
		{"old.txt", 0, true, 0},      // but the file changed
		{"renamed.txt", 0, false, 0}, // comments name the commented run's path
		{"absent.txt", 0, false, 0},
		{"notes.txt", 1, true, 8},   // a range ending two above the change
		{"notes.txt", 1, false, 7},  // and one ending three above
		{"notes.txt", 13, true, 17}, // a range to two above the added line
		{"notes.txt", 13, false, 15},
		{"notes.txt", 3, true, 30}, // a range around the change
	} {
		to := max(tc.rangeEnd, tc.line)
		if got := records.Addressed(files, tc.path, tc.line, to); got != tc.want {
			t.Errorf("%s:%d-%d addressed = %v, want %v", tc.path, tc.line, to, got, tc.want)
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

// A reply joins its comment's thread; replies written at once are all
// kept; a reply to a comment that is not there, or with no text, is
// refused and changes nothing.
func TestRepliesJoinTheCommentsThread(t *testing.T) {
	data := records.Data{Dir: t.TempDir()}
	dir := filepath.Join(data.Dir, "runs", "20261206-100000-thread")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: "20261206-100000-thread"}
	if err := bundle.WriteJSON(filepath.Join(dir, bundle.ReceiptFile), rc); err != nil {
		t.Fatal(err)
	}
	c := bundle.Comments{Schema: bundle.CommentsSchema, Requests: []bundle.ChangeRequest{{By: "dana", Comments: []bundle.Comment{{Path: "a.txt", Line: 2, Text: "why?"}}}}}
	if err := bundle.WriteJSON(filepath.Join(dir, bundle.CommentsFile), c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := data.Reply(ctx, rc.RunID, 0, 0, bundle.Reply{By: "lee", Text: fmt.Sprintf("reply %d", i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, bad := range []struct {
		request, comment int
		text             string
	}{{0, 1, "x"}, {1, 0, "x"}, {-1, 0, "x"}, {0, 0, "  "}, {0, 0, strings.Repeat("x", records.MaxComment+1)}} {
		if err := data.Reply(ctx, rc.RunID, bad.request, bad.comment, bundle.Reply{By: "lee", Text: bad.text}); err == nil {
			t.Errorf("reply to request %d comment %d with %d characters was taken", bad.request, bad.comment, len(bad.text))
		}
	}
	rs, err := data.ChangeRequests(dir)
	if err != nil || len(rs) != 1 || rs[0].Index != 0 {
		t.Fatalf("requests %+v, %v", rs, err)
	}
	if got := len(rs[0].Comments[0].Replies); got != 20 {
		t.Fatalf("%d replies kept of 20 written at once", got)
	}
}

// Only a scenario run that has ended, with a base, and in no session yet,
// goes on as a session from its page.
func TestWhichRunsContinueAsASession(t *testing.T) {
	d := records.Data{Dir: t.TempDir()}
	ended := time.Now()
	base := bundle.Receipt{RunID: "20261207-000000-aaaaaa", Kind: bundle.KindScenario, Status: bundle.StatusFailed, EndedAt: &ended, Source: bundle.Source{CommitSHA: "abc"}}
	for _, tc := range []struct {
		name string
		edit func(*bundle.Receipt)
		want bool
	}{
		{"a failed scenario run", func(*bundle.Receipt) {}, true},
		{"a passed one", func(rc *bundle.Receipt) { rc.Status = bundle.StatusPassed }, true},
		{"one still working", func(rc *bundle.Receipt) { rc.EndedAt, rc.Status = nil, bundle.StatusRunning }, false},
		{"one that errored", func(rc *bundle.Receipt) { rc.Status = bundle.StatusError }, false},
		{"a task run", func(rc *bundle.Receipt) { rc.Kind = bundle.KindTask }, false},
		{"one without a base", func(rc *bundle.Receipt) { rc.Source.CommitSHA = "" }, false},
		{"one in a session", func(rc *bundle.Receipt) { rc.SessionID = "sess-x" }, false},
	} {
		rc := base
		tc.edit(&rc)
		if got := d.Continuable(rc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	os.MkdirAll(d.SessionsDir(), 0o755)
	os.WriteFile(filepath.Join(d.SessionsDir(), "sess-"+base.RunID+".json"), []byte("{}"), 0o644)
	if d.Continuable(base) {
		t.Error("a run made a session already is offered again")
	}
}
