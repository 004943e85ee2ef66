package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// proctor review --request-changes sends the summary and the line comments
// (with the code quoted) as the agent's next message, in a session made of
// the run; the new run links back and shows only its own change.
func TestReviewRequestsChangesAsTheNextTurn(t *testing.T) {
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "one\n"})
	writeTree(t, dir, map[string]string{
		"first.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\ntwo\\n\"}}]}\n  - reply: {content: added two}\n",
		"next.yaml": "steps:\n  - expect: {last_contains: \"a.txt:2: spell it TWO\\n  > two\"}\n    reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\nTWO\\n\"}}]}\n" +
			"  - reply: {content: shouted}\n",
	})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	r := invoke(t, env, "run", "--dir", src, "--task", "add two", "--script", filepath.Join(dir, "first.yaml"))
	if r.code != ExitOK {
		t.Fatalf("run: %+v", r)
	}
	first := regexp.MustCompile(`runs/(\S+)`).FindStringSubmatch(r.stdout)[1]
	for _, bad := range [][]string{
		{"review", first},
		{"review", "--comment", "a.txt:two:x", "--script", filepath.Join(dir, "next.yaml"), first},
		{"review", "--comment", "a.txt:9:x", "--script", filepath.Join(dir, "next.yaml"), first},
		{"review", "--comment", "b.txt:1:x", "--script", filepath.Join(dir, "next.yaml"), first},
		{"review", "--comment", "a.txt:2-1:x", "--script", filepath.Join(dir, "next.yaml"), first},
		{"review", "--comment", "a.txt:L5:x", "--script", filepath.Join(dir, "next.yaml"), first},
		{"review", "--comment", "a.txt:-2:x", "--script", filepath.Join(dir, "next.yaml"), first},
	} {
		if r := invoke(t, env, bad...); r.code != ExitUsage {
			t.Errorf("%v: %+v, want a usage error", bad, r)
		}
	}
	r = invoke(t, env, "review", "--request-changes", "Shout the new line.", "--comment", "a.txt:2:spell it TWO", "--comment", "a.txt:1-2:both lines", "--script", filepath.Join(dir, "next.yaml"), first)
	if r.code != ExitOK || !strings.Contains(r.stdout, "status: awaiting review") {
		t.Fatalf("review: %+v", r)
	}
	next := regexp.MustCompile(`goes on with run (\S+)`).FindStringSubmatch(r.stdout)[1]
	b, err := bundle.ReadRun(filepath.Join(data, "runs", next), bundle.DefaultLimits())
	if err != nil || b.Receipt.Addresses != first || b.Receipt.SessionID != "sess-"+first {
		t.Fatalf("the new run: %+v %v", b.Receipt, err)
	}
	diff, _ := os.ReadFile(filepath.Join(data, "runs", next, bundle.DiffFile))
	if !strings.Contains(string(diff), "-two\n+TWO") || strings.Contains(string(diff), "+one") {
		t.Fatalf("the new run's diff is not only its own change:\n%s", diff)
	}
	raw, _ := os.ReadFile(filepath.Join(data, "runs", first, bundle.CommentsFile))
	var c bundle.Comments
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Requests) != 1 || c.Requests[0].NextRun != next || c.Requests[0].Comments[0].Quote != "two" ||
		c.Requests[0].Comments[1].StartLine != 1 || c.Requests[0].Comments[1].Line != 2 || c.Requests[0].Comments[1].Quote != "one\ntwo" {
		t.Fatalf("comments.json: %s %v", raw, err)
	}
	// The first run still awaits review (a session's runs are applied in
	// order, it first).
	fb, _ := bundle.ReadRun(filepath.Join(data, "runs", first), bundle.DefaultLimits())
	if fb.Receipt.Review != nil || fb.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("the first run: %+v", fb.Receipt)
	}
}
