package main

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// module is the import path the packages are under.
const module = "github.com/proctor-dev/proctor/"

// The imports go the way docs/architecture.md says: every package is in its
// table of layers, and imports only packages of lower layers.
func TestImportsFollowTheDocumentedLayers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]int{}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([a-z/, ]+) \|$`)
	// A name is a package under internal/, or a top-level one: web,
	// cmd/proctor, /migrations, /static.
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		n, _ := strconv.Atoi(m[1])
		for _, p := range strings.Split(m[2], ", ") {
			switch {
			case strings.HasPrefix(p, "/"):
				p = p[1:]
			case p != "cmd/proctor" && p != "web":
				p = "internal/" + p
			}
			if _, dup := layer[p]; dup {
				t.Errorf("docs/architecture.md lists %s twice", p)
			}
			layer[p] = n
		}
	}
	if len(layer) < 10 {
		t.Fatalf("docs/architecture.md: no table of layers found (%d packages)", len(layer))
	}
	dirs, _ := filepath.Glob("../../internal/*")
	dirs = append(dirs, "../../web", "../../cmd/proctor", "../../migrations", "../../static")
	for _, dir := range dirs {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			continue // not a package
		}
		name := strings.TrimPrefix(filepath.ToSlash(dir), "../../")
		own, ok := layer[name]
		if !ok {
			t.Errorf("%s is not in docs/architecture.md's table of layers: add it", name)
			continue
		}
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			l, ok := layer[dep]
			if !ok {
				t.Errorf("%s imports %s, which is not in docs/architecture.md's table of layers: add it", name, dep)
				continue
			}
			if l >= own {
				t.Errorf("%s (layer %d) imports %s (layer %d): the documented direction says it may not", name, own, dep, l)
			}
		}
	}
}

// Every process proctor starts is started one way (internal/proc): no
// other package calls os/exec's constructors. (internal/testutil builds
// the tests' own programs.)
func TestEveryProcessStartsThroughProc(t *testing.T) {
	spawn := regexp.MustCompile(`\bexec\.Command(Context)?\(`)
	for _, root := range []string{"../../internal", "../../web", "."} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || strings.HasSuffix(path, "internal/proc") || strings.HasSuffix(path, "internal/testutil")):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(src), "\n") {
				if spawn.MatchString(line) {
					t.Errorf("%s:%d starts a process with os/exec: use proc.Command", path, i+1)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
