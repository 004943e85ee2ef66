package gate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// A change approved on a host is applied to a checkout from the recorded
// diff alone, with the local gate's rules: every file as the run started
// from it, only the paths the recorded diff names, and no link out of the
// tree unless the reviewer accepted that file part by part. Whatever is
// refused, nothing is written.
func TestApplyRecorded(t *testing.T) {
	base := map[string]string{"a.txt": "old\n", "b.txt": "keep\n"}
	change := testutil.RecordedDiff(t, base, map[string]string{"a.txt": "new\n", "b.txt": "keep\n", "c.txt": "made\n"})
	other := testutil.RecordedDiff(t, map[string]string{"a.txt": "old\n", "other.txt": "x\n"}, map[string]string{"a.txt": "new\n", "other.txt": "y\n"})
	linkOut := testutil.RecordedDiff(t, base, map[string]string{"a.txt": "old\n", "b.txt": "keep\n", "keylink": "-> /root/.ssh/id_rsa"})
	made := testutil.RecordedDiff(t, map[string]string{"a.txt": "old\n"}, map[string]string{"a.txt": "old\n", "made.txt": "new\n"})
	short := shortIndexLines(change)
	linkIn := testutil.RecordedDiff(t, base, map[string]string{"a.txt": "old\n", "b.txt": "keep\n", "alink": "-> a.txt"})
	for _, tc := range []struct {
		name               string
		tree               map[string]string
		original, accepted string
		partsAccepted      []string
		want               map[string]string // the tree after ("" absent)
		err                string
	}{
		{name: "the whole change", tree: base, original: change, accepted: change,
			want: map[string]string{"a.txt": "new\n", "c.txt": "made\n"}},
		{name: "a file not as the run started", tree: map[string]string{"a.txt": "changed here\n", "b.txt": "keep\n"}, original: change, accepted: change,
			want: map[string]string{"a.txt": "changed here\n", "c.txt": ""}, err: "a.txt"},
		{name: "a path the recorded diff does not name", tree: map[string]string{"a.txt": "old\n", "b.txt": "keep\n", "other.txt": "x\n"}, original: change, accepted: other,
			want: map[string]string{"a.txt": "old\n", "other.txt": "x\n"}, err: "touches other.txt, which the recorded diff does not"},
		{name: "a new file the recorded diff does not name", tree: base, original: change, accepted: made,
			want: map[string]string{"a.txt": "old\n", "made.txt": ""}, err: "touches made.txt, which the recorded diff does not"},
		{name: "a recorded diff with short index lines", tree: base, original: short, accepted: short,
			want: map[string]string{"a.txt": "old\n", "c.txt": ""}, err: "does not say what [a.txt] were before the run"},
		{name: "a link out of the tree", tree: base, original: linkOut, accepted: linkOut,
			want: map[string]string{"keylink": ""}, err: "keylink -> /root/.ssh/id_rsa"},
		{name: "a link out of the tree, accepted part by part", tree: base, original: linkOut, accepted: linkOut, partsAccepted: []string{"keylink"},
			want: map[string]string{"keylink": "-> /root/.ssh/id_rsa"}},
		{name: "a link inside the tree", tree: base, original: linkIn, accepted: linkIn,
			want: map[string]string{"alink": "-> a.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := t.TempDir()
			for p, text := range tc.tree {
				os.WriteFile(filepath.Join(tree, p), []byte(text), 0o644)
			}
			_, err := gate.ApplyRecorded(context.Background(), tree, tc.original, tc.accepted, tc.partsAccepted)
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want one naming %q", err, tc.err)
			}
			for p, want := range tc.want {
				full := filepath.Join(tree, p)
				var got string
				if target, err := os.Readlink(full); err == nil {
					got = "-> " + target
				} else if raw, err := os.ReadFile(full); err == nil {
					got = string(raw)
				} else if !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s is %q, want %q", p, got, want)
				}
			}
		})
	}
}

// shortIndexLines abbreviates the blob ids of diff's index lines, as git
// diff does without --full-index: they no longer say what a file was.
func shortIndexLines(diff string) string {
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "index "); ok {
			ids, mode, hasMode := strings.Cut(rest, " ")
			from, to, _ := strings.Cut(ids, "..")
			lines[i] = "index " + from[:7] + ".." + to[:7]
			if hasMode {
				lines[i] += " " + mode
			}
		}
	}
	return strings.Join(lines, "\n")
}
