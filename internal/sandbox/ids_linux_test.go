package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
		settle, owner := Reclaim, os.Geteuid()
		if shared {
			settle = ShareLayer
			if os.Geteuid() == 0 {
				owner = LayerID
			}
		}
		if err := settle(dir); err != nil {
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

// Two runs at once never share an id (as root); the id is in proctor's
// range, clear of /etc/subuid's ranges. An ordinary user's runs run as the
// user, and say so.
func TestEachLiveRunLeasesAnIDOfItsOwn(t *testing.T) {
	var held []*ID
	defer func() {
		for _, id := range held {
			id.Release()
		}
	}()
	seen := map[int]bool{}
	for range 20 {
		id, err := LeaseID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, id)
		if os.Geteuid() != 0 {
			if !id.Own || id.ID != os.Getuid() {
				t.Fatalf("as user %d: %+v", os.Getuid(), id)
			}
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
		dir, err := idLocks()
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
