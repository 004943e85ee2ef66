//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// A run with a diff of thousands of files lists them, and opening one
// loads its hunks (HTMX) without reloading the page.
func TestLargeDiffLoadsAFileWhenOpened(t *testing.T) {
	const id = "20261201-141005-s4d5tb"
	root := t.TempDir()
	must(t, os.CopyFS(filepath.Join(root, id), os.DirFS("../testdata/bundles/runs/"+id)))
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "diff --git a/pkg/f%04d.go b/pkg/f%04d.go\n--- a/pkg/f%04d.go\n+++ b/pkg/f%04d.go\n@@ -1,2 +1,2 @@\n package p\n-var x = %d\n+var x = %d\n", i, i, i, i, i, i+1)
	}
	must(t, os.WriteFile(filepath.Join(root, id, bundle.DiffFile), []byte(b.String()), 0o644))
	a := startApp(t, root)
	page := newPage(t)
	goTo(t, page, a.URL+"/runs/"+id+"#diff")
	must(t, expect.Locator(page.Locator("#diff-large")).ToContainText("2,000 files"))
	file := page.Locator("#file-5")
	if n, _ := file.Locator("table.diff").Count(); n != 0 {
		t.Fatal("a closed file's hunks are already on the page")
	}
	must(t, file.Locator("summary").Click())
	must(t, expect.Locator(file.Locator("table.diff")).ToContainText("var x = 6"))
	must(t, file.ScrollIntoViewIfNeeded())
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join("screenshots", "large-diff.png"))})
	must(t, err)
}
