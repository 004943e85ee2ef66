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
