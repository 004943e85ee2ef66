package review_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/review"
)

const formDiff = "diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n four\n@@ -10,1 +10,2 @@\n ten\n+eleven\n" +
	"diff --git a/b.go b/b.go\n--- a/b.go\n+++ b/b.go\n@@ -1 +1 @@\n-x\n+y\n"

// A hunk takes several comments, on any of its lines (deleted ones too)
// and on ranges, each where the reviewer put it, in the diff's order.
func TestFormCommentsAreWhereTheReviewerPutThem(t *testing.T) {
	files, err := patch.Parse(formDiff)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{
		"comment.0.0.2": {"the range"}, "line.0.0.2": {"L2-3"},
		"comment.0.0.0": {"on three"}, "line.0.0.0": {"3"},
		"comment.0.0.1": {"on the deleted line"}, "line.0.0.1": {"L2"},
		"comment.0.0.3": {"   "}, "line.0.0.3": {"1"}, // empty: left out
		"comment.1.0": {"an older form's comment"}, "line.1.0": {"1"},
		"comment.0.1.0": {"the hunk"},
	}
	got, err := review.FormComments(form, files)
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, c := range got {
		where = append(where, records.Where(c)+" "+c.Text)
	}
	want := "a.go old line 2 on the deleted line|a.go:3 on three|a.go lines 2 (old) to 3 the range|a.go the hunk|b.go:1 an older form's comment"
	if strings.Join(where, "|") != want {
		t.Fatalf("comments\n%s\nwant\n%s", strings.Join(where, "|"), want)
	}
	for _, c := range got {
		if _, err := records.Quote(files, c); err != nil && c.Line != 0 {
			t.Errorf("%s: %v", records.Where(c), err)
		}
	}
	for _, bad := range []url.Values{
		{"comment.0.5.0": {"x"}},
		{"comment.2.0.0": {"x"}},
		{"comment.0.0.0": {"x"}, "line.0.0.0": {"two"}},
		{"comment.0.0.0": {"x"}, "line.0.0.0": {"-2"}},
	} {
		var invalid *review.Invalid
		if _, err := review.FormComments(bad, files); !errors.As(err, &invalid) {
			t.Errorf("%v: err %v, want an *Invalid naming the field", bad, err)
		}
	}
}

// A comment's suggestion is a change to the lines of the new file it is
// on; several in a hunk are each applied, and one on a deleted line is
// refused with the field that holds it.
func TestFormPartsTakeEverySuggestionOfAHunk(t *testing.T) {
	form := url.Values{
		"part.0.0":      {"accept"},
		"part.0.1":      {"reject"},
		"comment.0.0.0": {"```suggestion\nTWO\n```"}, "line.0.0.0": {"2"},
		"comment.0.0.1": {"both\n```suggestion\n3-4\n```"}, "line.0.0.1": {"3-4"},
		"comment.0.0.2": {"no suggestion here"}, "line.0.0.2": {"L2"},
		"comment.0.1.0": {"```suggestion\nignored: the hunk is rejected\n```"}, "line.0.1.0": {"11"},
	}
	parts, err := review.FormParts(form)
	if err != nil {
		t.Fatal(err)
	}
	var accepted *patch.Choice
	for i := range parts {
		if parts[i].Hunk == 0 {
			accepted = &parts[i]
		} else if len(parts[i].Suggest) != 0 {
			t.Errorf("a rejected hunk got suggestions %+v", parts[i].Suggest)
		}
	}
	if accepted == nil || len(accepted.Suggest) != 2 {
		t.Fatalf("parts %+v", parts)
	}
	sel, err := patch.Select(formDiff, parts)
	if err != nil || len(sel.Edits) != 1 || sel.Edits[0].Applied != "one\nTWO\n3-4" {
		t.Fatalf("edits %+v, err %v", sel.Edits, err)
	}
	form.Set("comment.0.0.2", "```suggestion\nback\n```")
	var invalid *review.Invalid
	if _, err := review.FormParts(form); !errors.As(err, &invalid) || invalid.Field != "line.0.0.2" || !strings.Contains(err.Error(), "not on a deleted line") {
		t.Fatalf("a suggestion on a deleted line: %v", err)
	}
}
