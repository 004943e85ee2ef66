package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/proctor-dev/proctor/internal/flock"
)

// The ids a run's commands run as when proctor is root: each run leases
// one of these, which no other live run on the host holds, so that no
// run's process can signal, trace or write another's. They are ids no
// account has, below 2^21 (tar's headers hold them), and any of them in a
// range of /etc/subuid or /etc/subgid (another user's containers, Docker's
// userns-remap) is passed over.
const (
	FirstID = 1_900_000
	IDCount = 100_000
)

// LayerID owns the toolchain caches' layers when proctor is root: every
// command's namespace maps it besides the command's own id, so that its
// overlay can copy a layer's file up for the command (an unmapped owner
// cannot be copied up). No command runs as it. defaultID is the id of a
// command whose policy names none (a test, a probe). Runs lease the ids
// below both.
const (
	LayerID   = FirstID + IDCount - 1
	defaultID = FirstID + IDCount - 2
	leased    = IDCount - 2
)

// commandID is the host id the commands of this process run as when
// their policy names none.
func commandID() (uid, gid int) {
	if os.Geteuid() == 0 {
		return defaultID, defaultID
	}
	return os.Getuid(), os.Getgid()
}

// ids are the host ids the command runs as: the policy's (root's range,
// or a user's subordinate id, the same number for its group), else the
// process's default — as a user who is not root, the user's own.
func (p Policy) ids() (uid, gid int) {
	if p.ID > 0 && (os.Geteuid() == 0 || p.ID != os.Getuid()) {
		return p.ID, p.ID
	}
	return commandID()
}

// written are the folders the command may write and its caches' upper
// folders: what its id owns while it runs.
func (p Policy) written() []string {
	dirs := slices.Clone(p.Write)
	for _, c := range p.Caches {
		dirs = append(dirs, c.Upper)
	}
	return dirs
}

// subordinate reports whether the command runs as one of the user's
// subordinate ids (not root; the id is not the user's own): its namespace
// is mapped by newuidmap and newgidmap, and its init gives it its folders.
func (p Policy) subordinate() bool {
	uid, _ := p.ids()
	return os.Geteuid() != 0 && uid != os.Getuid()
}

// LeaseID takes an id for a run, which no live run of any proctor on the
// host holds (an flock on a file of a folder of the user's, which the
// kernel drops however the holder ends). As root it is an id of proctor's
// range. A user who is not root gets one of their subordinate ids when
// the host can map them (userSubordinate), tried at once by giving back
// nothing through helper (the proctor binary); else the user's own id,
// and Why says what the host lacks.
func LeaseID(ctx context.Context, helper string) (*ID, error) {
	if os.Geteuid() == 0 {
		return lease(ctx, idRanges{{FirstID, leased}}, subordinateRanges("/etc/subuid", "/etc/subgid"), "/run", "proctor/ids", "proctor-ids")
	}
	own := &ID{ID: os.Getuid(), Own: true}
	sub := userSubordinate()
	if len(sub.ranges) == 0 {
		own.Why = sub.why
		return own, nil
	}
	id, err := lease(ctx, sub.ranges, nil, filepath.Join("/run/user", strconv.Itoa(os.Getuid())), "proctor-ids", "proctor-ids-"+strconv.Itoa(os.Getuid()))
	if err != nil {
		return nil, err
	}
	if err := sub.settleIn(ctx, helper, idRanges{{id.ID, 1}}, false); err != nil {
		id.Release()
		own.Why = fmt.Sprintf("the subordinate ids of /etc/subuid could not be mapped: %v", err)
		return own, nil
	}
	id.sub, id.helper = &sub, helper
	return id, nil
}

// lease takes an id of free that taken has not, holding its lock in the
// folder of leases (idLocks).
func lease(ctx context.Context, free, taken idRanges, base, at, name string) (*ID, error) {
	dir, err := idLocks(base, at, name)
	if err != nil {
		return nil, err
	}
	n := free.count()
	start := rand.IntN(n)
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("lease an id for the run: %w", context.Cause(ctx))
		}
		id := free.nth((start + i) % n)
		if taken.has(id) {
			continue
		}
		l, err := flock.TryLock(filepath.Join(dir, strconv.Itoa(id)), true)
		if errors.Is(err, flock.ErrLocked) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lease an id for the run: %w", err)
		}
		return &ID{ID: id, lock: l}, nil
	}
	return nil, fmt.Errorf("lease an id for the run: all %d ids of %v are held by live runs", n, free)
}

// idLocks is the host's folder of id leases: at under base when base is
// there (root's /run/proctor/ids, a user's /run/user/UID/proctor-ids),
// else name in the temp folder; this user's alone — a folder another user
// made or could write is refused.
func idLocks(base, at, name string) (string, error) {
	dir := filepath.Join(base, at)
	if info, err := os.Stat(base); err != nil || !info.IsDir() {
		dir = filepath.Join("/tmp", name) // not TMPDIR: every proctor of the user shares it
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("make the folder of the runs' ids %s: %w", dir, err)
	}
	me := uint32(os.Geteuid())
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		info, err := os.Lstat(d)
		if err != nil {
			return "", fmt.Errorf("the folder of the runs' ids %s: %w", dir, err)
		}
		st, _ := info.Sys().(*syscall.Stat_t)
		sticky := info.Mode()&os.ModeSticky != 0 && d != dir
		mine := st != nil && (st.Uid == me || (st.Uid == 0 && d != dir))
		if !info.IsDir() || !mine || (info.Mode().Perm()&0o022 != 0 && !sticky) || (d == dir && info.Mode().Perm() != 0o700) {
			return "", fmt.Errorf("the folder of the runs' ids %s: %s is not a folder only you may change (remove it, or make it yours, mode 0700)", dir, d)
		}
	}
	return dir, nil
}

// own makes the folders a command may write the command's (uid, gid):
// every file and folder in them that is not owned by it is given to it
// (links themselves, never what they point to). A user who is not root
// owns them already. Nothing of a run runs while proctor prepares its
// next command, so nothing changes the folders under the walk.
func own(dirs []string, uid, gid int) error {
	if uid == os.Geteuid() {
		return nil
	}
	for _, dir := range dirs {
		err := walkOwned(dir, func(p string, d fs.DirEntry, st *syscall.Stat_t) error {
			if int(st.Uid) == uid && int(st.Gid) == gid {
				return nil
			}
			if err := os.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("give %s to the sandbox's id %d: %w", dir, uid, err)
		}
	}
	return nil
}

// Reclaim gives back what a run's commands wrote in dirs, once none of
// them runs any more: every file and folder is proctor's user's again,
// and none keeps a setuid or setgid bit — whatever the command did
// inside, nothing it left can make another user (or another run's id)
// its own. A user's subordinate id is given back from inside a namespace
// of the user's ids.
func (id *ID) Reclaim(ctx context.Context, dirs ...string) error {
	if id != nil && id.sub != nil {
		return id.sub.settleIn(ctx, id.helper, idRanges{{id.ID, 1}}, false, dirs...)
	}
	return settle(os.Geteuid(), os.Getegid(), false, dirs)
}

// ShareLayer makes what a warm wrote in dirs a toolchain cache layer that
// every later run works in through its overlay, as ids of their own:
// owned by LayerID (proctor's user when it is not root), no setuid or
// setgid bit, and every file and folder readable and writable by all —
// Go's cache makes files in its folders and opens its files to write them
// again, and the overlay copies them up into the run's own folder;
// nothing reaches the layer. No other user reaches it on the host: the
// store's folder is proctor's user's alone (toolcache.In).
func (id *ID) ShareLayer(ctx context.Context, dirs ...string) error {
	switch {
	case os.Geteuid() == 0:
		return settle(LayerID, LayerID, true, dirs)
	case id != nil && id.sub != nil:
		return id.sub.settleIn(ctx, id.helper, idRanges{{id.ID, 1}}, true, dirs...)
	}
	return settle(os.Geteuid(), os.Getegid(), true, dirs)
}

// settle gives every file and folder of dirs to uid and gid (links
// themselves, never what they point to) and strips setuid and setgid
// bits; open also opens them to all.
func settle(uid, gid int, open bool, dirs []string) error {
	for _, dir := range dirs {
		err := walkOwned(dir, func(p string, d fs.DirEntry, st *syscall.Stat_t) error {
			if int(st.Uid) != uid || int(st.Gid) != gid {
				if err := os.Lchown(p, uid, gid); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			mode := st.Mode & 0o7777
			want := mode &^ (syscall.S_ISUID | syscall.S_ISGID)
			if d.IsDir() {
				want |= 0o700 // a folder the command closed is walked too
			}
			if open {
				want |= 0o666
				if d.IsDir() || mode&0o111 != 0 {
					want |= 0o777
				}
			}
			if want != mode {
				if err := syscall.Chmod(p, want); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("take back %s from the run's id: %w", dir, err)
		}
	}
	return nil
}

// walkOwned walks dir (a folder that is not there is nothing to walk),
// giving each entry's stat; an entry gone since it was listed is passed
// over.
func walkOwned(dir string, fn func(p string, d fs.DirEntry, st *syscall.Stat_t) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone since it was listed
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		return fn(p, d, st)
	})
}
