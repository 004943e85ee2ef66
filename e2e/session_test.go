//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// A session's later runs once waited for review forever (the gate compared
// them against the session workspace). In the browser: the second run
// says to review the first; then both apply to the source, in order.
func TestSessionRunsApplyInOrderFromTheBrowser(t *testing.T) {
	a := startApp(t)
	src := filepath.Join(t.TempDir(), "notes")
	must(t, os.MkdirAll(src, 0o755))
	must(t, os.WriteFile(filepath.Join(src, "README.md"), []byte("notes\n"), 0o644))
	r := &run.Runner{DataDir: a.DataDir, Environ: os.Environ(), Index: index.Into(a.Store)}
	step := func(task, yaml, session string) *run.Result {
		sc, err := script.Parse("s.yaml", []byte(yaml))
		must(t, err)
		spec := run.Spec{Task: task, Model: run.ModelChoice{Script: sc}, Bounds: bounds.Defaults(), Session: session}
		if session == "new" {
			spec.SourceDir = src
		}
		res, err := r.Run(context.Background(), spec)
		must(t, err)
		if res.Receipt.Status != bundle.StatusAwaitingReview {
			t.Fatalf("%s: %s", task, res.Receipt.Status)
		}
		return res
	}
	first := step("start a changelog", "steps:\n  - reply:\n      tool_calls: [{name: write_file, arguments: {path: CHANGELOG.md, content: \"v1\\n\"}}]\n  - reply: {content: done}\n", "new")
	second := step("date it", "steps:\n  - reply:\n      tool_calls: [{name: edit_file, arguments: {path: CHANGELOG.md, search: \"v1\", replace: \"v1 (2026-12-03)\"}}]\n  - reply: {content: done}\n", first.Receipt.SessionID)

	page := newPage(t)
	goTo(t, page, a.URL+"/runs/"+second.RunID)
	must(t, page.Locator("#approve").Click())
	must(t, expect.Locator(page.Locator("#review-box .notice.bad")).ToContainText("review run "+first.RunID+" of this session first"))
	screenshot(t, page, "session-out-of-order")
	if _, err := os.Stat(filepath.Join(src, "CHANGELOG.md")); err == nil {
		t.Fatal("the second run was applied before the first")
	}
	for _, id := range []string{first.RunID, second.RunID} {
		goTo(t, page, a.URL+"/runs/"+id)
		must(t, page.Locator("#approve").Click())
		must(t, expect.Locator(page.Locator("#review")).ToContainText("Approved by e2e"))
	}
	data, err := os.ReadFile(filepath.Join(src, "CHANGELOG.md"))
	must(t, err)
	if string(data) != "v1 (2026-12-03)\n" {
		t.Fatalf("the source holds %q, want both runs' changes", data)
	}
}
