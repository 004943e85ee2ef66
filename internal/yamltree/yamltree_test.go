package yamltree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// diff describes the first difference between two trees, leaving out
// comments (which Parse does not keep); "" when they are the same.
func diff(got, want *yaml.Node, path string) string {
	if got.Kind != want.Kind || got.Style != want.Style || got.Tag != want.Tag || got.Value != want.Value ||
		got.Line != want.Line || got.Column != want.Column || got.Anchor != want.Anchor || (got.Alias == nil) != (want.Alias == nil) ||
		len(got.Content) != len(want.Content) {
		return fmt.Sprintf("%s: got {kind %d style %d tag %q value %q at %d:%d, %d children}, want {kind %d style %d tag %q value %q at %d:%d, %d children}",
			path, got.Kind, got.Style, got.Tag, got.Value, got.Line, got.Column, len(got.Content),
			want.Kind, want.Style, want.Tag, want.Value, want.Line, want.Column, len(want.Content))
	}
	for i := range got.Content {
		if d := diff(got.Content[i], want.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// checkSame fails when the common-part reader took data and read it
// otherwise than go-yaml, or took data go-yaml refuses.
func checkSame(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	got, fast := parseCommon(data)
	if !fast {
		return false
	}
	var want yaml.Node
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatalf("took %q, which go-yaml refuses: %v", data, err)
	}
	if d := diff(&got, &want, ""); d != "" {
		t.Fatalf("read %q otherwise than go-yaml:\n%s", data, d)
	}
	return true
}

func TestCommonPart(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		fast       bool
	}{
		{"scalars of every kind", "id: case-1\nn: 12\nf: 1.5\nneg: -3\nb: true\nnothing: ~\ndate: 2026-12-02\ntext: Write new into a.txt, then stop.\nurl: http://x/y?z\nhash: a#b\n", true},
		{"comments and blank lines", "# head\n\nid: x   # trailing\n\n  # indented\nn: 1\n# foot\n", true},
		{"quoted", "a: \"new\\n\\t\\\"q\\\" \\u00e9\\x41\\U0001F600\"\nb: 'it''s'\nc: \"\"\nd: ''\n", true},
		{"nested mapping", "budgets:\n  max_messages: 4\n  wall_clock_s: 60\napprovals:\n  default: deny\n", true},
		{"lists", "tags: [a, b]\nturns:\n  - first\n  - second\nchecks:\n- kind: file_exists\n  path: a.txt\n- {kind: command, run: go test ./...}\n", true},
		{"flow in flow", "steps:\n  - reply: {content: done, tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n", true},
		{"literal blocks", "task: |\n  Fix the bug.\n\n  Then run:\n    go test ./...\n\nnote: |-\n  kept\n  # not a comment\nlast: |\n  no break", true},
		{"unicode", "task: Fix café — naïve “quotes” 🙂\nk: [é, ü]\n", true},
		{"list of mappings with nesting", "rules:\n  - tool: run_command\n    args:\n      command: go test\n    decision: approve\n  - tool: write_file\n    decision: deny\n", true},
		{"empty flows", "a: []\nb: {}\n", true},
		{"nested literal", "a:\n  b: |\n    x  \n     y\n    # kept\n\n  c: 1\n", true},
		{"literal in a list item's mapping", "steps:\n  - reply: |\n      long text\n    tool: x\n", true},
		{"literal less indented later", "a: |\n    x\n  y\n", false},
		{"literal then a stray indented line", "a: |\n  x\n b: 1\n", false},
		{"literal with a blank line of extra spaces", "a: |\n  x\n      \n  y\n", false},
		// Left to go-yaml:
		{"document marker", "---\nid: x\n", false},
		{"anchor and alias", "a: &x 1\nb: *x\n", false},
		{"tag", "a: !!str 1\n", false},
		{"folded block", "a: >\n  x\n", false},
		{"keep chomping", "a: |+\n  x\n\n", false},
		{"empty value", "a:\nb: 1\n", false},
		{"multi-line plain", "a: one\n  two\n", false},
		{"multi-line quoted", "a: \"one\n  two\"\n", false},
		{"tab", "a:\tx\n", false},
		{"carriage return", "a: x\r\n", false},
		{"quoted key", "\"a\": x\n", false},
		{"merge key", "<<: {a: 1}\n", false},
		{"colon in plain", "a: b: c\n", false},
		{"top-level list", "- a\n- b\n", false},
		{"top-level scalar", "hello\n", false},
		{"empty", "", false},
		{"only comments", "# nothing\n", false},
		{"bad indentation", "a:\n  b: 1\n c: 2\n", false},
		{"trailing comma", "a: [x, y,]\n", false},
		{"flow across lines", "a: [x,\n  y]\n", false},
		{"key that is not text", "1: x\n", false},
		{"odd escape", "a: \"\\N\"\n", false},
		{"JSON's escaped slash", "a: \"\\/\"\n", false},
		{"syntax error", "a: [x\n", false},
		{"long flow line", "a: [" + strings.Repeat("x, ", 20000) + "x]\n", true},
		{"long line past ASCII", "a: [" + strings.Repeat("é, ", 2000) + "é]\n", false},
		{"deep flow", "a: " + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + "\n", false},
		{"deep enough flow", "a: " + strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2) + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fast := checkSame(t, []byte(tc.yaml)); fast != tc.fast {
				t.Fatalf("read by the common-part reader = %v, want %v", fast, tc.fast)
			}
			// Parse answers as yaml.Unmarshal does either way.
			got, err := Parse([]byte(tc.yaml))
			var want yaml.Node
			wantErr := yaml.Unmarshal([]byte(tc.yaml), &want)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("err = %v, want %v", err, wantErr)
			}
			if d := diff(&got, &want, ""); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// yamlFiles are the YAML files of the repository's examples and test
// data: what people write.
func yamlFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, root := range []string{"../../examples", "../scenario/testdata", "../script/testdata", "../../testdata"} {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) == 0 {
		tb.Fatal("no YAML files found")
	}
	return files
}

// The examples and test data read alike both ways, and the examples all
// take the common-part reader.
func TestRepositoryFiles(t *testing.T) {
	fast := 0
	for _, f := range yamlFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ok := checkSame(t, data)
		if ok {
			fast++
		} else if strings.Contains(f, "examples") {
			t.Errorf("%s is not read by the common-part reader", f)
		}
	}
	t.Logf("%d of %d files read by the common-part reader", fast, len(yamlFiles(t)))
}

func FuzzParse(f *testing.F) {
	for _, file := range yamlFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSame(t, data)
	})
}

// BenchmarkParse compares go-yaml with Parse on a scenario and a model
// script as people write them.
func BenchmarkParse(b *testing.B) {
	data := []byte(`id: fix-the-bug
description: The agent fixes an off-by-one error and the tests pass.
tags: [go, bugfix]
task: |
  The test in calc/ fails. Find the bug and fix it;
  do not change the test.
git: false
budgets:
  max_messages: 20
  wall_clock_s: 120
checks:
  - {kind: file_contains, path: calc/calc.go, text: "a + b"}
  - kind: only_paths_changed
    paths: [calc/calc.go]
  - {kind: command, run: go test ./...}
steps:
  - reply: {content: done, tool_calls: [{name: write_file, arguments: {path: a.txt, content: "new\n"}}]}
  - reply: {content: done}
`)
	var base float64
	b.Run("go-yaml", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var n yaml.Node
			if err := yaml.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := parseCommon(data); !ok {
				b.Fatal("not read by the common-part reader")
			}
		}
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "ratio-to-go-yaml")
		}
	})
}
