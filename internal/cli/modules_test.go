package cli

import (
	"archive/zip"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// writeModule lays out a module version the way a GOPROXY serves it, in
// the folder proxy (a file:// proxy).
func writeModule(t *testing.T, proxy, path, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, path, "@v")
	writeTree(t, dir, map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		version + ".mod":  files["go.mod"],
	})
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, text := range files {
		w, err := z.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A Go module with dependencies builds in the sandbox, which has no
// network: proctor downloads the modules its go.mod requires, verified
// against its go.sum, into a layer every run of that go.mod and go.sum
// sees as its module cache. A go.sum that does not match what the proxy
// serves keeps nothing: the warm says so, and the build finds the module
// missing (GOPROXY=off), not a forged copy.
func TestAModulesDependenciesAreThereOffline(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go here")
	}
	proxy := t.TempDir()
	writeModule(t, proxy, "example.org/dep", "v1.0.0", map[string]string{
		"go.mod": "module example.org/dep\n\ngo 1.21\n",
		"dep.go": "// Package dep answers.\npackage dep\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
	})
	// The user's own module cache is empty; their GOPROXY is the folder.
	t.Setenv("GOPROXY", (&url.URL{Scheme: "file", Path: proxy}).String())
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod")
	suite := t.TempDir()
	fixture := map[string]string{
		"go.mod":      "module example.org/use\n\ngo 1.21\n\nrequire example.org/dep v1.0.0\n",
		"use.go":      "// Package use uses dep.\npackage use\n\nimport \"example.org/dep\"\n\n// Twice is twice the answer.\nfunc Twice() int { return 2 * dep.Answer() }\n",
		"use_test.go": "package use\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n\tif Twice() != 84 {\n\t\tt.Fatal(Twice())\n\t}\n}\n",
	}
	for _, id := range []string{"uses-dep", "forged-sum"} {
		files := map[string]string{
			"scenario.yaml": "id: " + id + "\ntask: Say done.\nbudgets: {max_messages: 4, wall_clock_s: 120}\nchecks:\n  - name: builds\n    kind: command\n    command: go test ./...\n    timeout_s: 110\n",
			"model.yaml":    "steps:\n  - reply: {content: done}\n",
		}
		for name, text := range fixture {
			files["fixture/"+name] = text
		}
		writeTree(t, filepath.Join(suite, id), files)
		tidy := exec.Command(goBin, "mod", "tidy")
		tidy.Dir = filepath.Join(suite, id, "fixture")
		if out, err := tidy.CombinedOutput(); err != nil {
			t.Fatalf("go mod tidy: %v\n%s", err, out)
		}
	}
	sum := filepath.Join(suite, "forged-sum", "fixture", "go.sum")
	raw, _ := os.ReadFile(sum)
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") {
			lines[i] = f[0] + " " + f[1] + " h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
		}
	}
	os.WriteFile(sum, []byte(strings.Join(lines, "\n")), 0o644)

	cache, data := t.TempDir(), t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "XDG_CACHE_HOME": cache}
	r := invoke(t, env, "scenario", "run", suite)
	verdicts := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "verdict "); ok {
			id, v, _ := strings.Cut(rest, " #1: ")
			verdicts[id], _, _ = strings.Cut(v, " ")
		}
	}
	if verdicts["uses-dep"] != "passed" || verdicts["forged-sum"] != "failed" {
		t.Fatalf("verdicts %v, want uses-dep passed and forged-sum failed:\n%s%s", verdicts, r.stdout, r.stderr)
	}
	all := ""
	runs, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
	for _, dir := range runs {
		raw, _ := os.ReadFile(filepath.Join(dir, bundle.EventsFile))
		all += string(raw)
		verdict, _ := os.ReadFile(filepath.Join(dir, bundle.VerdictFile))
		all += string(verdict)
	}
	for _, want := range []string{"the modules downloaded and verified in", "the modules not downloaded: go mod download", "checksum mismatch", "module lookup disabled by GOPROXY=off"} {
		if !strings.Contains(all, want) {
			t.Errorf("the runs' records do not say %q", want)
		}
	}
	layers, _ := filepath.Glob(filepath.Join(cache, "proctor", "toolcache", "*", "go-mod", "example.org", "dep@v1.0.0", "dep.go"))
	if len(layers) != 1 {
		t.Fatalf("the store holds the module in %v, want one layer (the verified one)", layers)
	}
}
