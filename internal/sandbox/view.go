package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// devices are the device files a command sees in its /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// enterView makes the root of this mount namespace a view of only the
// folders the policy names — the system's, the read allow-list and the
// folders it may write — with a /proc of the namespace's own, a /dev of a
// few devices, and an empty /run and /tmp (a command's TMPDIR is its
// run's private temp folder).
// Nothing else of the host is there to be reached by path: not a unix
// socket in the home folder, /run or /tmp, not another run's files.
// Landlock still decides what may be read or written in the view.
func (p Policy) enterView() error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("view: make the mounts private: %w", err)
	}
	// A tmpfs becomes the root, the host's root moves below it (/host),
	// the view is built in /view from it, and then becomes the root.
	base := "/tmp"
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("view: mount its base: %w", err)
	}
	for _, d := range []string{"host", "view"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := pivot(base, "host"); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/view", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("view: mount its root: %w", err)
	}
	// /tmp first: the policy's folders below it (a run's private temp
	// folder) are bound into it.
	if err := os.Mkdir("/view/tmp", 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("tmpfs", "/view/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("view: mount /tmp: %w", err)
	}
	var dirs []string
	for _, d := range slices.Concat(System, p.Read, p.Write) {
		dirs = append(dirs, filepath.Clean(d))
	}
	// A folder before the folders below it: a bind below another lands on
	// top of it.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, d := range dirs {
		if d == "/proc" || d == "/run" || !filepath.IsAbs(d) {
			continue
		}
		if err := bind("/host"+d, "/view"+d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err // a system folder this host does not have is left out
		}
	}
	// Files after every folder: a file in a folder bound above is there
	// already, and one elsewhere is bound alone, its folder left out.
	for _, f := range p.Run {
		if f = filepath.Clean(f); !filepath.IsAbs(f) {
			continue
		}
		if err := bind("/host"+f, "/view"+f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll("/view/proc", 0o555); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("proc", "/view/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("view: mount the namespace's own /proc: %w", err)
	}
	if err := devAndRun(); err != nil {
		return err
	}
	if err := pivot("/view", "host"); err != nil {
		return err
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("view: the working folder %s is not in the view: %w", cwd, err)
	}
	return nil
}

// devAndRun makes the view's /dev (a few devices, /dev/fd, /dev/shm) and
// its empty /run.
func devAndRun() error {
	for _, d := range []string{"/view/dev", "/view/run"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := unix.Mount("tmpfs", "/view/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("view: mount /dev: %w", err)
	}
	for _, name := range devices {
		if err := bind("/host/dev/"+name, "/view/dev/"+name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for link, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, "/view/dev/"+link); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := os.Mkdir("/view/dev/shm", 0o1777); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if err := unix.Mount("tmpfs", "/view/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("view: mount /dev/shm: %w", err)
	}
	return nil
}

// bind makes dst show src: a folder bound (with what is mounted below
// it), a file bound onto an empty file, a link made again as the same
// link. A src that does not exist is fs.ErrNotExist.
func bind(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return fmt.Errorf("view: %w", err)
		}
		if _, err := os.Lstat(dst); err == nil {
			return nil // already there, through a folder bound before
		}
		return os.Symlink(target, dst)
	case info.IsDir():
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
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("view: bind %s: %w", strings.TrimPrefix(src, "/host"), err)
	}
	return nil
}

// pivot makes newRoot the root, with the old root below it at put (a
// folder of newRoot), then detaches the old root when put is "host" of
// the view: the view then holds nothing but what was bound into it.
func pivot(newRoot, put string) error {
	if err := os.Chdir(newRoot); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if newRoot == "/view" {
		if err := os.Mkdir(put, 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
	}
	if err := unix.PivotRoot(".", put); err != nil {
		return fmt.Errorf("view: pivot_root to %s: %w", newRoot, err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if newRoot != "/view" {
		return nil
	}
	if err := unix.Unmount("/"+put, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("view: detach the host's root: %w", err)
	}
	return os.Remove("/" + put)
}

// readable lists what under dir every user of the host may read, in as
// few paths as it can: dir itself when all of it is, else the parts of it
// that are (folders whole where they can be, files one by one). A
// command runs as root in CI and on many hosts, and root without
// capabilities still reads a file it owns that others may not
// (/etc/shadow, a host key): such a file is left out of what it may read.
// Links are left out too: what they lead to is allowed or not where it is.
func readable(dir string) (dirs, files []string) {
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm()&0o005 != 0o005 {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	whole := true
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil {
			whole = false
			continue
		}
		switch mode := info.Mode(); {
		case mode&fs.ModeSymlink != 0:
		case mode.IsDir():
			d, f := readable(p)
			if len(d) != 1 || d[0] != p {
				whole = false
			}
			dirs, files = append(dirs, d...), append(files, f...)
		case mode.Perm()&0o004 != 0:
			files = append(files, p)
		default:
			whole = false
		}
	}
	if whole {
		return []string{dir}, nil
	}
	return dirs, files
}
