package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/sandbox"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// stay is what a hostile agent runs: it notes its id, tries to leave a setuid
// copy of a shell and to open its workspace to everyone, and waits a
// little so that two runs overlap.
const stay = "id -u > id.txt; cp /bin/sh suid; chmod 4755 suid; echo $? > chmod.txt; chmod 0777 .; sleep 2\n"

// strangerScript is an agent that runs stay.sh.
const strangerScript = `steps:
  - reply: {tool_calls: [{name: run_command, arguments: {command: "sh stay.sh"}}]}
  - reply: {content: done}
`

// Runs are strangers: two runs at once — of two data folders, as two
// proctor processes would — run as ids of their own (as root), neither
// can leave a setuid file behind, and what each wrote is proctor's user's
// again when it ends, in a data folder no other local user can enter.
func TestRunsAreStrangers(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": strangerScript})
	datas := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	results := make([]result, len(datas))
	var wg sync.WaitGroup
	for i, data := range datas {
		src := t.TempDir()
		writeTree(t, src, map[string]string{"a.txt": "old\n", "stay.sh": stay})
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = invoke(t, map[string]string{"PROCTOR_DATA": data, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")},
				"run", "--dir", src, "--task", "try to stay", "--script", filepath.Join(dir, "model.yaml"), "--allow", "sh stay.sh")
		}()
	}
	wg.Wait()
	ids := map[int]bool{}
	for i, data := range datas {
		if results[i].code != ExitOK || testing.Verbose() {
			t.Logf("run %d: %s%s", i, results[i].stdout, results[i].stderr)
		}
		if results[i].code != ExitOK {
			t.Fatalf("run %d: %+v", i, results[i])
		}
		rc, _ := onlyReceipt(t, data)
		ws := filepath.Join(data, "runs", rc.RunID, "workspace")
		raw, err := os.ReadFile(filepath.Join(ws, "id.txt"))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
		if rc.Walls == nil || rc.Walls.ID != id {
			t.Fatalf("run %d ran as %d; its walls say %+v", i, id, rc.Walls)
		}
		if os.Geteuid() == 0 {
			if id < sandbox.FirstID || id >= sandbox.FirstID+sandbox.IDCount || rc.Walls.IDShared || ids[id] {
				t.Fatalf("run %d ran as %d (shared %v; the other runs' %v)", i, id, rc.Walls.IDShared, ids)
			}
		} else if subordinateIDs() {
			if id == os.Getuid() || rc.Walls.IDShared || ids[id] {
				t.Fatalf("as user %d with subordinate ids, run %d ran as %d (shared %v; the other runs' %v)", os.Getuid(), i, id, rc.Walls.IDShared, ids)
			}
		} else if id != os.Getuid() || !rc.Walls.IDShared {
			t.Fatalf("as user %d, run %d ran as %d (shared %v)", os.Getuid(), i, id, rc.Walls.IDShared)
		}
		ids[id] = true
		if raw, _ := os.ReadFile(filepath.Join(ws, "chmod.txt")); strings.TrimSpace(string(raw)) == "0" {
			t.Errorf("run %d: chmod 4755 worked inside", i)
		}
		filepath.Walk(ws, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			st := info.Sys().(*syscall.Stat_t)
			if int(st.Uid) != os.Geteuid() || info.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				t.Errorf("run %d left %s as %d with mode %v", i, p, st.Uid, info.Mode())
			}
			return nil
		})
		for _, d := range []string{data, filepath.Join(data, "runs")} {
			if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v %v, want mode 0700", d, info.Mode(), err)
			}
		}
		// Another local user reaches nothing a run left.
		if os.Geteuid() == 0 {
			probe := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", filepath.Join(ws, "id.txt"))
			if out, err := probe.CombinedOutput(); err == nil {
				t.Errorf("the user nobody read a run's workspace: %s", out)
			}
		}
	}
}

// A proctor killed with -9 while it warms the toolchain caches leaves its
// private folder and its warm; the next run — any confined run — removes
// both as it starts.
func TestKill9DuringAWarmLeavesNothingAfterTheNextRun(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	data, scen := t.TempDir(), filepath.Join(t.TempDir(), "slow-setup")
	writeTree(t, scen, map[string]string{
		"scenario.yaml":   "id: slow-setup\ntask: do nothing\nchecks:\n  - {name: there, kind: file_exists, path: a.txt}\n",
		"setup":           "#!/bin/sh\nmkdir -p \"$GOCACHE\" && echo warm > \"$GOCACHE/warm\"\nsleep 60\n",
		"model.yaml":      "steps:\n  - reply: {content: done}\n",
		"fixture/a.txt":   "old\n",
		"fixture/go.mod":  "module x\n",
		"fixture/main.go": "package main\n",
	})
	os.Chmod(filepath.Join(scen, "setup"), 0o755)
	store := filepath.Join(data, "toolcache") // the store this test watches
	cmd := proctorChild(t, []string{"PROCTOR_DATA=" + data, "PROCTOR_TOOLCACHE_DIR=" + store}, "scenario", "run", scen)
	defer cmd.Process.Kill()
	testutil.Eventually(t, 15*time.Minute, "the warm at work", func() bool {
		m, _ := filepath.Glob(filepath.Join(data, "toolcache", ".warm-*", ".go-build", "upper", "warm"))
		if len(m) == 1 {
			return true
		}
		// A subordinate id's cache folders are its own, closed to the user
		// until the command ends: they are the id's once its command started.
		m, _ = filepath.Glob(filepath.Join(data, "toolcache", ".warm-*", ".go-build"))
		if len(m) == 1 && subordinateIDs() {
			info, err := os.Lstat(m[0])
			return err == nil && int(info.Sys().(*syscall.Stat_t).Uid) != os.Geteuid()
		}
		return false
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left := func() []string {
		var out []string
		for _, pattern := range []string{filepath.Join(data, "tmp", "*"), filepath.Join(data, "toolcache", ".warm-*")} {
			m, _ := filepath.Glob(pattern)
			out = append(out, m...)
		}
		return out
	}
	if len(left()) < 2 {
		t.Fatalf("the killed warm left %v: the test proves nothing", left())
	}
	dir, src := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": commandScript})
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PROCTOR_TOOLCACHE_DIR": store, "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")},
		"run", "--dir", src, "--task", "touch a file", "--script", filepath.Join(dir, "model.yaml"), "--allow", "touch")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	if l := left(); len(l) > 0 {
		t.Fatalf("after the next run, still there: %v", l)
	}
}

// A scenario's setup fills its own warm layer only: what a hostile
// scenario's setup put in Go's cache (a patched testing, here a marker
// in its place) is seen by no other scenario's run and no plain run, in
// the same suite or after it.
func TestAScenariosWarmReachesNoOtherRun(t *testing.T) {
	if _, err := sandbox.ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	data, suite := t.TempDir(), t.TempDir()
	clean := `test ! -e "$GOCACHE/poisoned-testing"`
	writeTree(t, suite, map[string]string{
		"a-hostile/scenario.yaml": "id: a-hostile\ntask: do nothing\nchecks:\n  - {name: there, kind: file_exists, path: a.txt}\n",
		"a-hostile/setup":         "#!/bin/sh\nmkdir -p \"$GOCACHE\" && echo 'func (c *common) Fail() {}' > \"$GOCACHE/poisoned-testing\"\n",
		"a-hostile/model.yaml":    "steps:\n  - reply: {content: done}\n",
		"a-hostile/fixture/a.txt": "old\n",
		"b-victim/scenario.yaml":  "id: b-victim\ntask: do nothing\nchecks:\n  - {name: clean-cache, kind: command, command: '" + clean + "'}\n",
		"b-victim/model.yaml":     "steps:\n  - reply: {content: done}\n",
		"b-victim/fixture/a.txt":  "old\n",
	})
	os.Chmod(filepath.Join(suite, "a-hostile", "setup"), 0o755)
	env := map[string]string{"PROCTOR_DATA": data, "PROCTOR_TOOLCACHE_DIR": filepath.Join(data, "toolcache"), "HOME": os.Getenv("HOME"), "PATH": os.Getenv("PATH")}
	for round := range 2 {
		if r := invoke(t, env, "scenario", "run", suite); r.code != ExitOK {
			t.Fatalf("round %d: the victim saw the hostile scenario's cache: %+v", round, r)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(data, "toolcache", "*", "go-build", "poisoned-testing")); len(m) != 1 {
		t.Fatalf("the hostile warm's layer holds %v: the test proves nothing", m)
	}
	dir, src := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {content: done}\n"})
	writeTree(t, src, map[string]string{"a.txt": "old\n"})
	r := invoke(t, env, "run", "--dir", src, "--task", "nothing", "--script", filepath.Join(dir, "model.yaml"), "--check", clean)
	if r.code != ExitOK {
		t.Fatalf("a plain run saw the hostile scenario's cache: %+v", r)
	}
}

// subordinateIDs reports whether the tests run as a user who is not root
// and has subordinate ids to run runs as (task nonroot's second pass sets
// PROCTOR_TEST_SUBORDINATE_IDS=1): a run then must not share the user's id.
func subordinateIDs() bool {
	return os.Geteuid() != 0 && os.Getenv("PROCTOR_TEST_SUBORDINATE_IDS") == "1"
}
