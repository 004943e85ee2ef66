package gate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/gate"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// hostileRun is a finished run whose agent made links (to a key outside
// the source, climbing out of it, and inside it to a folder and a file)
// and a file whose name is not UTF-8.
func hostileRun(t *testing.T) (runDir, src, key string) {
	t.Helper()
	key = filepath.Join(t.TempDir(), ".ssh", "id_probe")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("PROBE-PRIVATE-KEY\n"), 0o600)
	src = filepath.Join(t.TempDir(), "src")
	for name, content := range map[string]string{
		"a.txt":     "a\n",
		"sub/f.txt": "f\n",
		"mk.sh": "ln -s " + key + " keylink\nln -s ../outside up\nln -s sub dirlink\nln -s a.txt filelink\n" +
			"printf 'not utf-8\\n' > \"$(printf 'bad\\377\\376.txt')\"\necho more >> a.txt\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755)
		os.WriteFile(filepath.Join(src, name), []byte(content), 0o644)
	}
	s, err := script.Parse("s.yaml", []byte("steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"sh mk.sh\"}}]}\n  - reply: {content: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&run.Runner{DataDir: t.TempDir()}).Run(context.Background(), run.Spec{SourceDir: src, Task: "make links", Model: run.ModelChoice{Script: s},
		Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: []string{"sh mk.sh"}}})
	if err != nil || res.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("run: %v %+v", err, res.Receipt)
	}
	return res.Dir, src, key
}

// choices accepts every part of the run's diff but those of the paths in
// reject.
func choices(t *testing.T, runDir string, reject ...string) []patch.Choice {
	t.Helper()
	diff, _ := os.ReadFile(filepath.Join(runDir, bundle.DiffFile))
	files, err := patch.Parse(string(diff))
	if err != nil {
		t.Fatal(err)
	}
	var out []patch.Choice
	for _, p := range patch.Parts(files) {
		out = append(out, patch.Choice{File: p.File, Hunk: p.Hunk, Accept: !contains(reject, p.Path)})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func byParts(c []patch.Choice) gate.Reviewer {
	return gate.ReviewerFunc(func(context.Context, gate.Proposal) (gate.Verdict, error) {
		return gate.Verdict{Approved: true, By: "ana", Reason: "by parts", Parts: c}, nil
	})
}

// A link is applied as a link, never followed: the source gets the link
// the reviewer saw, not the key it points at. Links that leave the source
// need an accept of their own; links inside it, to a folder or a file,
// apply; a name that is not UTF-8 is applied byte for byte, and the
// receipt says applied only for what was.
func TestLinksAreAppliedAsLinksAndNamesAsBytes(t *testing.T) {
	ctx := context.Background()
	bad := "bad\xff\xfe.txt"
	t.Run("a whole approval with links that leave the source is refused", func(t *testing.T) {
		runDir, src, _ := hostileRun(t)
		_, err := gate.Review(ctx, runDir, approve("ana"), opts(runDir))
		var le *gate.LinkError
		if !errors.As(err, &le) || len(le.Links) != 2 || !strings.Contains(err.Error(), "keylink -> ") || !strings.Contains(err.Error(), "up -> ../outside") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Lstat(filepath.Join(src, "keylink")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("something was applied: %v", err)
		}
		if rc := receiptOf(t, runDir); rc.Review != nil {
			t.Fatalf("the run was marked reviewed: %+v", rc.Review)
		}
	})
	t.Run("accepted one by one, every link is a link", func(t *testing.T) {
		runDir, src, key := hostileRun(t)
		rv, err := gate.Review(ctx, runDir, byParts(choices(t, runDir)), opts(runDir))
		if err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{"keylink": key, "up": "../outside", "dirlink": "sub", "filelink": "a.txt"} {
			got, err := os.Readlink(filepath.Join(src, link))
			if err != nil || got != target {
				t.Errorf("%s: a link to %q, want %q (%v)", link, got, target, err)
			}
		}
		if data, _ := os.ReadFile(filepath.Join(src, "dirlink", "f.txt")); string(data) != "f\n" {
			t.Errorf("the folder link does not lead to the folder: %q", data)
		}
		if data, _ := os.ReadFile(filepath.Join(src, bad)); string(data) != "not utf-8\n" {
			t.Errorf("the file named in bytes that are not UTF-8: %q", data)
		}
		if data, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(data) != "a\nmore\n" {
			t.Errorf("a.txt = %q", data)
		}
		if !rv.Applied || !contains(rv.Changed, `"bad\377\376.txt"`) || len(rv.Changed) != 6 {
			t.Fatalf("review = %+v", rv)
		}
		if rc := receiptOf(t, runDir); !contains(rc.Changed, `"bad\377\376.txt"`) {
			t.Fatalf("the receipt's changed = %q", rc.Changed)
		}
	})
	t.Run("links that leave the source rejected, the rest applied", func(t *testing.T) {
		runDir, src, _ := hostileRun(t)
		rv, err := gate.Review(ctx, runDir, byParts(choices(t, runDir, "keylink", "up")), opts(runDir))
		if err != nil {
			t.Fatal(err)
		}
		for _, gone := range []string{"keylink", "up"} {
			if _, err := os.Lstat(filepath.Join(src, gone)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was applied though rejected", gone)
			}
		}
		if got, _ := os.Readlink(filepath.Join(src, "dirlink")); got != "sub" || !rv.Applied {
			t.Fatalf("dirlink -> %q, review %+v", got, rv)
		}
	})
}
