package bundle_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormatsDocMatchesSamples keeps the examples in docs/formats.md equal to
// the sample bundles, which the other tests prove valid.
func TestFormatsDocMatchesSamples(t *testing.T) {
	f, err := os.Open("../../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var file, fence string
	var body strings.Builder
	checked := 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case file == "" && strings.HasPrefix(line, "```") && strings.Contains(line, "file="):
			fence = line[:strings.LastIndex(line, "`")+1]
			_, file, _ = strings.Cut(line, "file=")
			body.Reset()
		case file != "" && line == fence:
			want, err := os.ReadFile(filepath.Join(samples, file))
			if err != nil {
				t.Fatalf("docs/formats.md shows %s, which is not a sample: %v", file, err)
			}
			if body.String() != string(want) {
				t.Errorf("docs/formats.md shows a different %s than testdata/bundles has", file)
			}
			checked++
			file = ""
		case file != "":
			body.WriteString(line + "\n")
		}
	}
	if checked != 7 {
		t.Fatalf("checked %d examples, want 7 (one per file kind)", checked)
	}
}
