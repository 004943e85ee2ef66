package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/sandbox"
)

// A scenario's checks warm the toolchain caches once, on its fixture
// before any agent: every later confined command sees what they wrote.
// An agent that writes into the caches — a new file, an entry changed —
// writes only into its own run's: the next run, whichever agent it runs,
// sees the caches as the trusted work left them, and no byte of an agent
// reaches the store.
func TestAnAgentsCacheWriteNeverReachesTheNextRun(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	data, scen := t.TempDir(), filepath.Join(t.TempDir(), "warm-probe")
	writeTree(t, scen, map[string]string{
		"fixture/a.txt": "old\n",
		"scenario.yaml": `id: warm-probe
task: Say done.
budgets: {max_messages: 4, wall_clock_s: 60}
checks:
  - name: warms
    kind: command
    command: 'if [ -e "$GOCACHE/warm-mark" ]; then grep -qx warm "$GOCACHE/warm-mark" && grep -qx warm "$npm_config_cache/_cacache/entry" && ! ls "$GOCACHE" "$npm_config_cache" | grep -q poison; else echo warm > "$GOCACHE/warm-mark" && mkdir -p "$npm_config_cache/_cacache" && echo warm > "$npm_config_cache/_cacache/entry"; fi'
`,
		"model.yaml": "steps:\n  - reply: {content: done}\n",
	})
	env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}
	var layers []string
	for i := range 2 {
		before, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
		r := invoke(t, env, "scenario", "run", scen)
		if r.code != 0 {
			t.Fatalf("scenario run %d: %+v", i, r)
		}
		got, _ := filepath.Glob(filepath.Join(data, "toolcache", "[0-9]*"))
		if len(got) != 1 || (layers != nil && got[0] != layers[0]) {
			t.Fatalf("after scenario run %d the store holds %v, want the first run's one warm (%v)", i, got, layers)
		}
		layers = got
		// The first run warms in a stage of its own, with its events; the
		// second has nothing to warm, and no such stage.
		after, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
		var events []byte
		for _, dir := range after {
			if !slices.Contains(before, dir) {
				events, _ = os.ReadFile(filepath.Join(dir, bundle.EventsFile))
			}
		}
		warmed := regexp.MustCompile(`"type":"stage.finished","data":\{"stage":"warming_caches","duration_ms":\d+,"detail":"toolchain caches warmed in`).Match(events)
		if started := strings.Contains(string(events), `"stage":"warming_caches","detail":"the scenario's setup and checks`); started != (i == 0) || warmed != (i == 0) {
			t.Fatalf("scenario run %d: a warm stage started %v and ended %v:\n%s", i, started, warmed, events)
		}
	}
	mark := filepath.Join(layers[0], "go-build", "warm-mark")
	if got, err := os.ReadFile(mark); err != nil || string(got) != "warm\n" {
		t.Fatalf("the warm's layer: %q %v", got, err)
	}

	// Each agent in turn tries to poison the caches: a new entry, the warm
	// entry changed, one removed, npm's cache too. A plain run sees no
	// scenario's warm at all (only the trusted standard library's layer,
	// for a Go module), nor what an earlier agent wrote.
	probe := `{ cat "$GOCACHE/warm-mark"; cat "$npm_config_cache/_cacache/entry"; ls "$GOCACHE" "$npm_config_cache"; } > seen.txt 2>&1
echo poison > "$GOCACHE/poison"; echo poisoned > "$GOCACHE/warm-mark"; rm -f "$npm_config_cache/_cacache/entry"; echo poison > "$npm_config_cache/poison"
echo changed >> a.txt
`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": hostileScript})
	for round := range 2 {
		for _, a := range hostileAgents {
			src := t.TempDir()
			writeTree(t, src, map[string]string{"a.txt": "old\n", "attack.sh": probe})
			before, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
			invoke(t, env, append([]string{"run", "--dir", src, "--task", "poison the caches"}, a.args(filepath.Join(dir, "model.yaml"))...)...)
			after, _ := filepath.Glob(filepath.Join(data, "runs", "*"))
			if len(after) != len(before)+1 {
				t.Fatalf("round %d, %s: no new run", round, a.name)
			}
			var ran string
			for _, r := range after {
				if !strings.Contains(strings.Join(before, "\n"), r) {
					ran = r
				}
			}
			seen, err := os.ReadFile(filepath.Join(ran, "workspace", "seen.txt"))
			if err != nil {
				t.Fatalf("round %d, %s: the agent's probe did not run: %v", round, a.name, err)
			}
			if s := string(seen); strings.Contains(s, "warm\n") || strings.Contains(s, "poison") {
				t.Fatalf("round %d, %s: the agent saw the caches as\n%s\nwant no scenario's warm entries and no poison", round, a.name, s)
			}
		}
	}
	if got, err := os.ReadFile(mark); err != nil || string(got) != "warm\n" {
		t.Fatalf("the warm's layer after the agents: %q %v", got, err)
	}
	// The scenario's own run still sees its warm, unpoisoned (its check
	// says so).
	if r := invoke(t, env, "scenario", "run", scen); r.code != 0 {
		t.Fatalf("the scenario after the agents: %+v", r)
	}
	filepath.WalkDir(filepath.Join(data, "toolcache"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "poison") {
			t.Errorf("an agent's write reached the store: %s", p)
		}
		return nil
	})
	// The runs' own folders went with them.
	if left, _ := filepath.Glob(filepath.Join(data, "tmp", "run-*")); len(left) != 0 {
		t.Errorf("runs left their private folders: %v", left)
	}
}

// A confined run makes its private folder (temp, home, its caches' writes)
// and leases its id only when its first command starts: a run of tools
// alone does neither.
func TestARunMakesItsPrivateFolderOnlyForACommand(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"tools.yaml":   "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"new\\n\"}}]}\n  - reply: {content: done}\n",
		"command.yaml": "steps:\n  - reply: {tool_calls: [{name: run_command, arguments: {command: \"sh probe.sh\"}}]}\n  - reply: {content: done}\n",
	})
	for _, c := range []struct {
		script string
		made   bool
	}{{"tools.yaml", false}, {"command.yaml", true}} {
		data, src := t.TempDir(), t.TempDir()
		writeTree(t, src, map[string]string{"a.txt": "old\n", "probe.sh": `ls -d "$TMPDIR" "$HOME" > seen.txt` + "\n"})
		invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, "run", "--dir", src, "--task", "go", "--script", filepath.Join(dir, c.script), "--allow", "sh probe.sh")
		// (The runner's probe of the walls leaves no folder either.)
		if left, _ := filepath.Glob(filepath.Join(data, "tmp", "*")); !c.made && len(left) > 0 {
			t.Errorf("%s: a run of tools alone made a private folder: %v", c.script, left)
		}
		// Nor does it lease an id for commands it never ran.
		if rc, _ := onlyReceipt(t, data); rc.Walls == nil || (rc.Walls.ID != 0) != c.made {
			t.Errorf("%s: the receipt's walls %+v: want an id only for a run that ran a command", c.script, rc.Walls)
		}
		if c.made {
			seen, _ := os.ReadFile(filepath.Join(onlyRun(t, data), "workspace", "seen.txt"))
			if !strings.Contains(string(seen), filepath.Join(data, "tmp", "run-")) {
				t.Errorf("the command's TMPDIR and HOME were not its run's private folder: %q", seen)
			}
			if left, _ := filepath.Glob(filepath.Join(data, "tmp", "run-*")); len(left) != 0 {
				t.Errorf("the run left its private folder: %v", left)
			}
		}
	}
}

// The store is the user's, not a data folder's: a new data folder of the
// same user starts with the layers an earlier one's runs made (each still
// seen only by the runs of its key), and warms nothing again.
func TestANewDataFolderStartsWarm(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	cache, scen := t.TempDir(), filepath.Join(t.TempDir(), "warm-once")
	writeTree(t, scen, map[string]string{
		"fixture/a.txt": "old\n",
		"scenario.yaml": `id: warm-once
task: Say done.
budgets: {max_messages: 4, wall_clock_s: 60}
checks:
  - name: warms
    kind: command
    command: 'test -e "$GOCACHE/mark" || echo warm > "$GOCACHE/mark"'
`,
		"model.yaml": "steps:\n  - reply: {content: done}\n",
	})
	for i, data := range []string{t.TempDir(), t.TempDir()} {
		env := map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH"), "XDG_CACHE_HOME": cache}
		if r := invoke(t, env, "scenario", "run", scen); r.code != 0 {
			t.Fatalf("data folder %d: %+v", i, r)
		}
		runs, _ := filepath.Glob(filepath.Join(data, "runs", "*", bundle.EventsFile))
		if len(runs) != 1 {
			t.Fatalf("data folder %d holds the runs %v, want one", i, runs)
		}
		events, _ := os.ReadFile(runs[0])
		if warmed := strings.Contains(string(events), `"stage":"warming_caches"`); warmed != (i == 0) {
			t.Fatalf("data folder %d: a warm stage %v, want %v:\n%s", i, warmed, i == 0, events)
		}
		if own, _ := filepath.Glob(filepath.Join(data, "toolcache")); len(own) != 0 {
			t.Fatalf("data folder %d has a store of its own: %v", i, own)
		}
	}
	if layers, _ := filepath.Glob(filepath.Join(cache, "proctor", "toolcache", "[0-9]*", "go-build", "mark")); len(layers) != 1 {
		t.Fatalf("the user's store holds the warms %v, want one", layers)
	}
}

func TestToolcacheStore(t *testing.T) {
	root := t.TempDir()
	unwritable := filepath.Join(root, "unwritable")
	os.Mkdir(unwritable, 0o500)
	if f, err := os.Create(filepath.Join(unwritable, "probe")); err == nil { // root writes anyway
		f.Close()
		os.Remove(filepath.Join(unwritable, "probe"))
		unwritable = filepath.Join(root, "a-file")
		os.WriteFile(unwritable, nil, 0o600)
	}
	data := filepath.Join(root, "data")
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // "" : an error
	}{
		{"the variable", map[string]string{"PROCTOR_TOOLCACHE_DIR": root + "/ci", "XDG_CACHE_HOME": root + "/x", "HOME": root + "/h"}, root + "/ci"},
		{"a variable that cannot be used is an error", map[string]string{"PROCTOR_TOOLCACHE_DIR": "relative"}, ""},
		{"the XDG cache folder", map[string]string{"XDG_CACHE_HOME": root + "/x", "HOME": root + "/h"}, root + "/x/proctor/toolcache"},
		{"a relative XDG folder is not one", map[string]string{"XDG_CACHE_HOME": "x", "HOME": root + "/h"}, root + "/h/.cache/proctor/toolcache"},
		{"the home's", map[string]string{"HOME": root + "/h"}, root + "/h/.cache/proctor/toolcache"},
		{"a home proctor cannot write: the data folder's", map[string]string{"HOME": unwritable}, data + "/toolcache"},
		{"no home: the data folder's", map[string]string{}, data + "/toolcache"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := toolcacheStore(func(k string) string { return c.env[k] }, data)
			if c.want == "" {
				if err == nil || !strings.Contains(err.Error(), "PROCTOR_TOOLCACHE_DIR") {
					t.Fatalf("got %s, %v; want an error naming PROCTOR_TOOLCACHE_DIR", s.Dir, err)
				}
				return
			}
			if err != nil || s.Dir != c.want {
				t.Fatalf("got %s, %v; want %s", s.Dir, err, c.want)
			}
		})
	}
}
