package records_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
)

// A comment quotes the lines it is on: one, a deleted one, or a range of
// one hunk (quoted as diff lines when it holds deleted and kept ones).
func TestACommentQuotesTheLinesItIsOn(t *testing.T) {
	files, err := patch.Parse("diff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n four\n@@ -10,1 +10,2 @@\n ten\n+eleven\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		span  string // "" for the whole file
		quote string
		where string
		err   string
	}{
		{"", "2\neleven", "a.go", ""},
		{"2", "2", "a.go:2", ""},
		{"L2", "two", "a.go old line 2", ""},
		{"3-4", "three\nfour", "a.go lines 3 to 4", ""},
		{"L2-3", "-two\n+2\n three", "a.go lines 2 (old) to 3", ""},
		{"1-2", " one\n-two\n+2", "a.go lines 1 to 2", ""},
		{"L9", "", "", "a.go old line 9 is not in the run's diff"},
		{"4-1", "", "", "a.go lines 4 to 1 (one hunk's lines, the first before the last) is not in the run's diff"},
		{"4-11", "", "", "(one hunk's lines"},
	} {
		c := bundle.Comment{Path: "a.go", Text: "x"}
		if tc.span != "" {
			s, err := patch.ParseSpan(tc.span)
			if err != nil {
				t.Fatal(err)
			}
			c = records.OnSpan(c, s)
			if back := records.Span(c); back != s {
				t.Errorf("%s: placed and read back as %v", tc.span, back)
			}
		}
		q, err := records.Quote(files, c)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: quote %q, err %v; want %q", tc.span, q, err, tc.err)
			}
			continue
		}
		if err != nil || q != tc.quote || records.Where(c) != tc.where {
			t.Errorf("%s: quote %q at %q, err %v; want %q at %q", tc.span, q, records.Where(c), err, tc.quote, tc.where)
		}
	}
	for _, bad := range []bundle.Comment{
		{Path: "b.go", Line: 1},
		{Path: "a.go", Line: 2, Side: "left"},
		{Path: "a.go", Line: 2, StartLine: 1, StartSide: "LEFT"},
		{Path: "a.go", Line: -2},
		{Path: "a.go", StartLine: 2},
	} {
		if q, err := records.Quote(files, bad); err == nil {
			t.Errorf("%+v quoted as %q", bad, q)
		}
	}
}

// A thread is resolved by a person and opened again; only comments that
// are there can be.
func TestAThreadIsResolvedAndOpenedAgain(t *testing.T) {
	data := records.Data{Dir: t.TempDir()}
	id := "20261206-100000-resolv"
	dir := filepath.Join(data.Dir, "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteJSON(filepath.Join(dir, bundle.ReceiptFile), bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id}); err != nil {
		t.Fatal(err)
	}
	c := bundle.Comments{Schema: bundle.CommentsSchema, Requests: []bundle.ChangeRequest{{By: "dana", Comments: []bundle.Comment{{Path: "a.txt", Line: 2, Text: "why?"}, {Path: "a.txt", Line: 3, Text: "and?"}}}}}
	if err := bundle.WriteJSON(filepath.Join(dir, bundle.CommentsFile), c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resolved := func() []string {
		rs, err := data.ChangeRequests(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range rs[0].Comments {
			if c.Resolved == nil {
				out = append(out, "")
			} else {
				out = append(out, c.Resolved.By)
			}
		}
		return out
	}
	if err := data.Resolve(ctx, id, 0, 1, "lee"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resolved(), ","); got != ",lee" {
		t.Fatalf("resolved by %q, want only the second, by lee", got)
	}
	if err := data.Resolve(ctx, id, 0, 1, ""); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(resolved(), ","); got != "," {
		t.Fatalf("after opening again: %q", got)
	}
	for _, at := range [][2]int{{0, 2}, {1, 0}, {-1, 0}, {0, -1}} {
		if err := data.Resolve(ctx, id, at[0], at[1], "lee"); !errors.Is(err, records.ErrNoComment) {
			t.Errorf("request %d comment %d: %v", at[0], at[1], err)
		}
	}
}
