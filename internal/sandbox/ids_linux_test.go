package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What a run's commands wrote is proctor's user's again when the run ends,
// with no setuid or setgid bit, whatever modes and owners the commands
// left; a link is given back itself, never what it points to. A layer is
// LayerID's (as root), open to every id, with no setuid or setgid bit.
func TestReclaimGivesBackWhatARunWrote(t *testing.T) {
	for _, shared := range []bool{false, true} {
		dir := t.TempDir()
		outside := filepath.Join(t.TempDir(), "outside")
		os.WriteFile(outside, []byte("x"), 0o600)
		syscall.Chmod(outside, 0o4755)
		files := map[string]uint32{"suid": 0o4755, "sgid": 0o2711, "private": 0o600, "sub/both": 0o6700}
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		for name, mode := range files {
			p := filepath.Join(dir, name)
			os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600)
			if err := syscall.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
		syscall.Chmod(filepath.Join(dir, "sub"), 0o2000) // a folder its command closed, setgid
		os.Symlink(outside, filepath.Join(dir, "link"))
		if os.Geteuid() == 0 {
			filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { os.Lchown(p, FirstID+7, FirstID+7); return nil })
		}
		var id *ID // root's range, or the user's own id
		settle, owner := id.Reclaim, os.Geteuid()
		if shared {
			settle = id.ShareLayer
			if os.Geteuid() == 0 {
				owner = LayerID
			}
		}
		if err := settle(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			st := info.Sys().(*syscall.Stat_t)
			if int(st.Uid) != owner {
				t.Errorf("%s is %d:%d, want %d's", p, st.Uid, st.Gid, owner)
			}
			if info.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				t.Errorf("%s keeps %v", p, info.Mode())
			}
			if shared && info.Mode().IsRegular() && info.Mode().Perm()&0o666 != 0o666 {
				t.Errorf("shared: %s is %v, not readable and writable by all", p, info.Mode())
			}
			if shared && info.IsDir() && info.Mode().Perm() != 0o777 {
				t.Errorf("shared: %s is %v, not open to all", p, info.Mode())
			}
			return nil
		})
		if info, _ := os.Stat(filepath.Join(dir, "suid")); shared && info.Mode() != 0o777 {
			t.Errorf("shared: the setuid file is %v, want 0777", info.Mode())
		}
		if info, _ := os.Stat(outside); info.Mode()&os.ModeSetuid == 0 {
			t.Error("Reclaim changed the file a link points to, outside the run's folders")
		}
		if info, _ := os.Stat(filepath.Join(dir, "private")); !shared && info.Mode().Perm() != 0o600 {
			t.Errorf("not shared: a private file's mode changed to %v", info.Mode())
		}
	}
}

// Two runs at once never share an id: as root, an id of proctor's range,
// clear of /etc/subuid's ranges; as a user who is not root, one of the
// user's subordinate ids where the host has them, else the user's own id
// (the same for every run), and why.
func TestEachLiveRunLeasesAnIDOfItsOwn(t *testing.T) {
	var held []*ID
	defer func() {
		for _, id := range held {
			id.Release()
		}
	}()
	seen := map[int]bool{}
	for range 20 {
		id, err := LeaseID(context.Background(), os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, id)
		if os.Geteuid() != 0 {
			sub := userSubordinate()
			switch {
			case len(sub.ranges) == 0 && (!id.Own || id.ID != os.Getuid() || id.Why == ""):
				t.Fatalf("as user %d with no subordinate ids: %+v, want the user's own id and why", os.Getuid(), id)
			case len(sub.ranges) > 0 && (id.Own || !sub.ranges.has(id.ID) || seen[id.ID] || id.ID == os.Getuid()):
				t.Fatalf("as user %d with subordinate ids %v: lease %d: %+v (seen %v)", os.Getuid(), sub.ranges, len(held), id, seen)
			}
			seen[id.ID] = true
			continue
		}
		if id.Own || id.ID < FirstID || id.ID >= FirstID+IDCount || id.ID == LayerID || id.ID == defaultID || seen[id.ID] {
			t.Fatalf("lease %d: %+v (seen %v)", len(held), id, seen)
		}
		if subordinateRanges("/etc/subuid", "/etc/subgid").has(id.ID) {
			t.Fatalf("id %d is in a subordinate range", id.ID)
		}
		seen[id.ID] = true
	}
	if os.Geteuid() == 0 {
		// The leases are in a folder of root's alone.
		dir, err := idLocks("/run", "proctor/ids", "proctor-ids")
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Fatalf("the folder of leases %s: %v %v", dir, info.Mode(), err)
		}
	}
}

func TestParseSubordinate(t *testing.T) {
	r := parseSubordinate("alice:100000:65536\n# comment\nbad line\nbob:165536:65536\ndockremap:1900000:10\nneg:-1:5\n")
	for _, tc := range []struct {
		id   int
		want bool
	}{{99999, false}, {100000, true}, {165535, true}, {231071, true}, {231072, false}, {1900009, true}, {1900010, false}} {
		if r.has(tc.id) != tc.want {
			t.Errorf("has(%d) = %v, want %v", tc.id, !tc.want, tc.want)
		}
	}
}

func TestSubordinateRangesOfAUser(t *testing.T) {
	subuid := "alice:100000:65536\n1000:300000:10\nbob:165536:65536\n"
	subgid := "alice:100010:65536\n"
	uids := subordinateOf(subuid, "alice", 1000)
	if len(uids) != 2 || uids[0] != [2]int{100000, 65536} || uids[1] != [2]int{300000, 10} {
		t.Fatalf("alice's (uid 1000) subuid ranges: %v", uids)
	}
	common := uids.intersect(subordinateOf(subgid, "alice", 1000))
	if len(common) != 1 || common[0] != [2]int{100010, 65526} {
		t.Fatalf("in both files: %v", common)
	}
	less := common.without(100010, 100020, 165535, 7)
	for _, tc := range []struct {
		id   int
		want bool
	}{{100010, false}, {100011, true}, {100020, false}, {100021, true}, {165534, true}, {165535, false}} {
		if less.has(tc.id) != tc.want {
			t.Errorf("without: has(%d) = %v, want %v (%v)", tc.id, !tc.want, tc.want, less)
		}
	}
	if less.count() != 65526-3 || less.nth(0) != 100011 || less.nth(less.count()-1) != 165534 || less.nth(less.count()) != -1 {
		t.Fatalf("count %d, first %d, last %d of %v", less.count(), less.nth(0), less.nth(less.count()-1), less)
	}
	if got := subordinateOf(subuid, "carol", 1001); len(got) != 0 {
		t.Fatalf("carol has none: %v", got)
	}
}

// A run's commands run as the id it leased — root's range, or a user's
// subordinate id where the host can map one — and what they write is that
// id's while they run, in the workspace and the cache's upper folder.
// Once the run ends (Reclaim; a subordinate id's after each command
// already) it is proctor's user's again, without setuid bits. What a
// command that proctor never saw end left (a kill -9), which a user who
// is not root cannot remove, RemoveAll removes.
func TestACommandRunsAsItsRunsID(t *testing.T) {
	if _, err := ProbeHost(context.Background(), os.Args[0], "", 0, nil); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	id, err := LeaseID(context.Background(), os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer id.Release()
	t.Logf("the run's id: %s", id)
	s := newScene(t)
	cacheAt := filepath.Join(s.tmp, "gocache")
	upper := filepath.Join(t.TempDir(), "upper")
	os.Chmod(filepath.Dir(upper), 0o755)
	p := s.policy
	p.ID = id.ID
	p.Caches = []Cache{{At: cacheAt, Upper: upper}}
	if err := UpperFolders(upper, p.ID); err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(id.ID)
	script := `set -e
[ "$(id -u)" = ` + me + ` ] || { echo "runs as $(id -u)"; exit 1; }
mkdir -p sub && echo a > sub/a.txt && cp /bin/true sub/suid && chmod 755 sub/suid
chmod 4755 sub/suid 2>/dev/null || true
echo c > ` + cacheAt + `/c.txt
[ "$(stat -c %u sub/a.txt . ` + cacheAt + `/c.txt | sort -u)" = ` + me + ` ] || { stat -c "%n %u" sub/a.txt . ` + cacheAt + `/c.txt; exit 1; }
echo works`
	res, err := Command{Argv: []string{"bash", "-c", script}, Dir: s.ws, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + s.tmp},
		Confine: &Confinement{Policy: p, Helper: os.Args[0]}, Timeout: time.Minute}.Run(context.Background())
	if err != nil || res.Code != 0 || !strings.Contains(string(res.Output), "works") {
		t.Fatalf("%v %d: %s", err, res.Code, res.Output)
	}
	owner := func(p string) int {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return int(info.Sys().(*syscall.Stat_t).Uid)
	}
	between := id.ID // root's run keeps its files until Reclaim
	if p.subordinate() {
		between = os.Geteuid()
	}
	for _, f := range []string{filepath.Join(s.ws, "sub", "a.txt"), filepath.Join(upper, "upper", "c.txt")} {
		if got := owner(f); got != between {
			t.Fatalf("%s is %d's after the command, want %d's", f, got, between)
		}
	}
	if err := id.Reclaim(context.Background(), s.ws, s.tmp, upper); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(s.ws, "sub", "a.txt"), filepath.Join(s.ws, "sub", "suid"), filepath.Join(upper, "upper", "c.txt")} {
		if got := owner(f); got != os.Geteuid() {
			t.Fatalf("%s is %d's after Reclaim, want proctor's user's %d", f, got, os.Geteuid())
		}
	}
	if info, _ := os.Stat(filepath.Join(s.ws, "sub", "suid")); info.Mode()&os.ModeSetuid != 0 {
		t.Fatalf("the setuid bit survived: %v", info.Mode())
	}

	// A command whose end proctor never saw: started, mapped, killed.
	left := filepath.Join(t.TempDir(), "left")
	os.MkdirAll(left, 0o755)
	os.Chmod(filepath.Dir(left), 0o755)
	lp := p
	lp.Write, lp.Caches = []string{left}, nil
	c := Command{Argv: []string{"bash", "-c", "mkdir -p d/e && echo x > d/e/f && chmod 500 d/e d && echo made"}, Dir: left, Env: []string{"PATH=/usr/bin:/bin"},
		Confine: &Confinement{Policy: lp, Helper: os.Args[0]}}
	cmd, alive, report, sc, err := c.build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer alive.Close()
	defer report.Close()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if sc != nil {
		if err := sc.mapped(context.Background(), cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Wait() // the command ended, and proctor with it: nothing gave its files back
	if !strings.Contains(out.String(), "made") {
		t.Fatalf("the command did not run: %s", out.String())
	}
	if got := owner(filepath.Join(left, "d")); got != id.ID {
		t.Fatalf("the folder left is %d's, want the run's id %d's", got, id.ID)
	}
	if err := RemoveAll(context.Background(), os.Args[0], left); err != nil {
		t.Fatalf("remove what the run's id left: %v", err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", left, err)
	}
}
