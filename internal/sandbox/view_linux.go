package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// devices are the device files a command sees in its /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// proxySocketInView is where the model proxy's socket is in the view.
const proxySocketInView = "/run/proctor/proxy.sock"

const (
	readOnly  = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	readWrite = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
)

// enterView makes the root of this mount namespace a view of only the
// folders the policy names — the system's, the read allow-list, the files
// it may run, and the folders it may write — with a /proc of the
// namespace's own, a /dev of a few devices and a bounded /dev/shm, and a
// /run that holds only the model proxy's socket. Everything but the
// folders it may write and /dev/shm is read-only, and
// nothing is setuid or a device but /dev's few: whatever the command's
// id, it changes no mode, owner, time or attribute of a host file. There
// is no /sys. Nothing else of the host is there to be reached by path:
// not a unix socket in the home folder, /run or /tmp, not another run's
// files. Landlock still decides what may be read or written in the view.
//
// The host's folders are taken (open_tree) as the id that started the
// init, which can reach every folder the policy names (root's reaches
// folders only root may enter); then, started by root, the init becomes
// the command's id (become ≥ 0), which owns what it makes in the view's
// own file systems, and builds the view from what it took.
func (p Policy) enterView(become int) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("view: make the mounts private: %w", err)
	}
	got, caches, err := p.takeHost()
	defer func() {
		for _, t := range got {
			if t.fd >= 0 {
				unix.Close(t.fd)
			}
		}
		for _, c := range caches {
			c.close()
		}
	}()
	if err != nil {
		return err
	}
	// The command's id has a name in the view's /etc/passwd and /etc/group
	// (its own copies when the host's have no line for it: proctor's id as
	// root, or a user a container was started as with no account).
	id := become
	if id < 0 {
		id = os.Getuid()
	}
	accounts, err := accountFiles(id)
	if err != nil {
		return err
	}
	if become >= 0 {
		if err := becomeID(become); err != nil {
			return err
		}
	}

	if err := buildView(got, caches, accounts); err != nil {
		return err
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("view: the working folder %s is not in the view: %w", cwd, err)
	}
	return nil
}

// takeHost takes what of the host the view holds: the policy's folders,
// the devices, the model proxy's socket and the caches. What it took is
// returned with an error too, to be closed.
func (p Policy) takeHost() (got []taken, caches []takenCache, err error) {
	for _, b := range p.binds() {
		t, err := take(b.path, b.path, b.attr)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a system folder this host does not have is left out
		}
		if err != nil {
			return got, caches, err
		}
		got = append(got, t)
	}
	for _, name := range devices {
		t, err := take("/dev/"+name, "/dev/"+name, unix.MOUNT_ATTR_NOSUID)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return got, caches, err
		}
		got = append(got, t)
	}
	if p.Proxy != nil {
		t, err := take(filepath.Clean(p.Proxy.Socket), proxySocketInView, readOnly)
		if err != nil {
			return got, caches, fmt.Errorf("view: the model proxy's socket: %w", err)
		}
		got = append(got, t)
	}
	for _, c := range p.Caches {
		t, err := takeCache(c)
		if err != nil {
			return got, caches, atWall(WallCaches, err)
		}
		caches = append(caches, t)
	}
	return got, caches, nil
}

// buildView makes the view of what was taken, with the account files, and
// makes it the root: read-only, nosuid, with the namespace's own /proc.
func buildView(got []taken, caches []takenCache, accounts map[string][]byte) error {
	// A tmpfs (over the host's /tmp, in this namespace only) holds the
	// view's root, another tmpfs, and the view's own account files beside
	// it; the view then becomes the root, and the rest is detached.
	const base, root = "/tmp", "/tmp/view"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("view: mount its base: %w", err)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("view: mount its root: %w", err)
	}
	// /tmp is an empty, read-only folder (a command's TMPDIR is its run's
	// private temp folder), with the policy's folders below it (that
	// folder, when the data folder is under /tmp) put into it.
	if err := os.Mkdir(root+"/tmp", 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := mkdev(root); err != nil {
		return err
	}
	for _, t := range got {
		if err := t.put(root); err != nil {
			return err
		}
	}
	for i, c := range caches {
		if err := c.mount(root, i); err != nil {
			return atWall(WallCaches, err)
		}
	}
	for name, content := range accounts {
		own := filepath.Join(base, name)
		if err := os.WriteFile(own, content, 0o644); err != nil {
			return fmt.Errorf("view: %w", err)
		}
		t, err := take(own, "/etc/"+name, readOnly)
		if err != nil {
			return err
		}
		err = t.put(root)
		unix.Close(t.fd)
		if err != nil {
			return err
		}
	}
	if err := os.MkdirAll(root+"/proc", 0o555); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("proc", root+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return atWall(WallProc, fmt.Errorf("view: mount the namespace's own /proc: %w", err))
	}
	if err := pivot(root); err != nil {
		return err
	}
	// The root and /dev are the init's own tmpfs: read-only too.
	for _, d := range []string{"/", "/dev"} {
		if err := setattr(d, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID, false); err != nil {
			return err
		}
	}
	return nil
}

// taken is a host path taken for the view: a copy of its mount (fd, from
// open_tree) with its attributes set, or a link made again as the same
// link.
type taken struct {
	at   string // where it goes in the view
	fd   int    // -1 for a link
	dir  bool
	link string
}

// take takes the host path src for the view's path at, with the mount
// attributes attr. A src that does not exist is fs.ErrNotExist.
func take(src, at string, attr uint64) (taken, error) {
	info, err := os.Lstat(src)
	if err != nil {
		return taken{}, err
	}
	t := taken{at: at, fd: -1, dir: info.IsDir()}
	if info.Mode()&fs.ModeSymlink != 0 {
		if t.link, err = os.Readlink(src); err != nil {
			return taken{}, fmt.Errorf("view: %w", err)
		}
		return t, nil
	}
	t.fd, err = unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return taken{}, fmt.Errorf("view: take %s: %w", src, err)
	}
	if err := unix.MountSetattr(t.fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
		unix.Close(t.fd)
		return taken{}, fmt.Errorf("view: make %s %s: %w", src, attrNames(attr), err)
	}
	return t, nil
}

// put puts what was taken at its place below root: a folder onto a
// folder, anything else onto an empty file, a link as a link (unless a
// folder put before already holds it).
func (t taken) put(root string) error {
	dst := root + t.at
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	switch {
	case t.fd < 0:
		if _, err := os.Lstat(dst); err == nil {
			return nil
		}
		return os.Symlink(t.link, dst)
	case t.dir:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	default:
		if _, err := os.Lstat(dst); err != nil {
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return fmt.Errorf("view: %w", err)
			}
			f.Close()
		}
	}
	if err := unix.MoveMount(t.fd, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("view: put %s: %w", t.at, err)
	}
	return nil
}

// aBind is a path of the host in the view, with its mount attributes.
type aBind struct {
	path string
	attr uint64
}

// binds are the host paths of the view in the order they are bound: a
// folder before the folders below it (a bind below another lands on top
// of it, with attributes of its own), a folder to read before the same
// folder to write, and files (bound alone, their folders left out) last.
func (p Policy) binds() []aBind {
	var dirs []aBind
	add := func(paths []string, attr uint64) {
		for _, d := range paths {
			if d = filepath.Clean(d); filepath.IsAbs(d) && !hostOnly(d) {
				dirs = append(dirs, aBind{d, attr})
			}
		}
	}
	add(System, readOnly)
	add(p.Read, readOnly)
	add(p.Write, readWrite)
	slices.SortStableFunc(dirs, func(a, b aBind) int { return strings.Count(a.path, "/") - strings.Count(b.path, "/") })
	files := len(dirs)
	add(p.Run, readOnly)
	slices.SortStableFunc(dirs[files:], func(a, b aBind) int { return strings.Compare(a.path, b.path) })
	return dirs
}

// hostOnly reports whether a path is one the view never takes from the
// host: its root, and /proc, /sys, /dev, /run and what is below them.
func hostOnly(path string) bool {
	if path == "/" {
		return true
	}
	for _, d := range []string{"/proc", "/sys", "/dev", "/run"} {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// mkdev makes the view's /dev (a tmpfs: the few devices are put there
// later, /dev/fd and the standard streams as links, a /dev/shm of its
// own) and its /run, where the model proxy's socket is put.
func mkdev(root string) error {
	for _, d := range []string{root + "/dev", root + "/run/proctor"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := unix.Mount("tmpfs", root+"/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("view: mount /dev: %w", err)
	}
	for link, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+"/dev/"+link); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := os.Mkdir(root+"/dev/shm", 0o1777); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("tmpfs", root+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("view: mount /dev/shm: %w", err)
	}
	return nil
}

// accountFiles are the view's /etc/passwd and /etc/group when the command
// runs as id (≥ 0) and the host's files have no line for it: copies with
// a line that names it, as programs expect of the user they run as
// (Node's os.userInfo, git's ident). An id the host knows keeps the
// host's files.
func accountFiles(id int) (map[string][]byte, error) {
	if id < 0 {
		return nil, nil
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = "/"
	}
	out := map[string][]byte{}
	for _, f := range []struct{ name, line string }{
		{"passwd", fmt.Sprintf("proctor:x:%d:%d:proctor sandbox:%s:/bin/sh\n", id, id, home)},
		{"group", fmt.Sprintf("proctor:x:%d:\n", id)},
	} {
		raw, err := os.ReadFile("/etc/" + f.name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("view: %w", err)
		}
		if hasID(raw, id) {
			continue
		}
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			raw = append(raw, '\n')
		}
		out[f.name] = append(raw, f.line...)
	}
	return out, nil
}

// hasID reports whether a passwd or group file has a line for id.
func hasID(raw []byte, id int) bool {
	want := strconv.Itoa(id)
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		if f := strings.Split(sc.Text(), ":"); len(f) > 2 && f[2] == want {
			return true
		}
	}
	return false
}

// setattr sets mount attributes on the mount at path (and, recursive,
// every mount below it).
func setattr(path string, attr uint64, recursive bool) error {
	var flags uint
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("view: make %s %s: %w", strings.TrimPrefix(path, "/view"), attrNames(attr), err)
	}
	return nil
}

func attrNames(attr uint64) string {
	var out []string
	for _, a := range []struct {
		bit  uint64
		name string
	}{{unix.MOUNT_ATTR_RDONLY, "read-only"}, {unix.MOUNT_ATTR_NOSUID, "nosuid"}, {unix.MOUNT_ATTR_NODEV, "nodev"}} {
		if attr&a.bit != 0 {
			out = append(out, a.name)
		}
	}
	return strings.Join(out, ", ")
}

// pivot makes root the root, with the old root put below it and then
// detached: the view holds nothing but what was put into it.
func pivot(root string) error {
	if err := os.Chdir(root); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := os.Mkdir(".old", 0o700); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.PivotRoot(".", ".old"); err != nil {
		return fmt.Errorf("view: pivot_root to %s: %w", root, err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Unmount("/.old", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("view: detach the host's root: %w", err)
	}
	return os.Remove("/.old")
}
