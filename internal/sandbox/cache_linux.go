package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// takenCache is a cache's host folders taken for the view: its layers
// and its upper folder (Upper), or, for a cache with no layers, the
// folder its writes go to (Upper/upper) alone.
type takenCache struct {
	at     string
	layers []taken
	upper  taken
	plain  bool
}

func (c *takenCache) close() {
	for _, t := range append(c.layers, c.upper) {
		if t.fd >= 0 {
			unix.Close(t.fd)
		}
	}
}

// takeCache takes a cache's layers (read-only) and its upper folder for
// the view, as the id that can reach them.
func takeCache(c Cache) (takenCache, error) {
	out := takenCache{at: filepath.Clean(c.At), upper: taken{fd: -1}}
	for _, l := range c.Layers {
		t, err := take(l, "", readOnly)
		if err != nil {
			out.close()
			return takenCache{}, fmt.Errorf("view: the cache layer %s: %w", l, err)
		}
		if !t.dir {
			unix.Close(t.fd)
			out.close()
			return takenCache{}, fmt.Errorf("view: the cache layer %s is not a folder", l)
		}
		out.layers = append(out.layers, t)
	}
	upper := c.Upper
	if out.plain = len(c.Layers) == 0; out.plain {
		upper = filepath.Join(c.Upper, "upper")
	}
	t, err := take(upper, "", readWrite)
	if err == nil && !t.dir {
		unix.Close(t.fd)
		err = errors.New("not a folder")
	}
	if err != nil {
		out.close()
		return takenCache{}, fmt.Errorf("view: the cache folder %s: %w", c.Upper, err)
	}
	out.upper = t
	return out, nil
}

// mount puts the cache at its place below root: its layers and upper
// folder are put in a staging folder of the view's own root (n is the
// cache's number), the overlay is mounted from there (it keeps private
// copies of those mounts), and the staging mounts are detached again, so
// that the view holds only the overlay.
// A cache with no layers is its upper's folder, bound in its place.
func (c takenCache) mount(root string, n int) error {
	if c.plain {
		// Nothing to see through: the folder its writes go to is the
		// cache, as an overlay over an empty layer would show it, for a
		// bind's cost instead of an overlay's.
		up := c.upper
		up.at = c.at
		if err := os.MkdirAll(root+c.at, 0o700); err != nil {
			return fmt.Errorf("view: the cache %s must be below a folder the command may write: %w", c.at, err)
		}
		return up.put(root)
	}
	stage := fmt.Sprintf("/run/proctor/cache/%d", n)
	var lower []string
	for i, l := range c.layers {
		l.at = stage + "/layer" + strconv.Itoa(i)
		if err := l.put(root); err != nil {
			return err
		}
		lower = append(lower, root+l.at)
	}
	if len(lower) == 0 {
		// The overlay needs a layer: an empty folder of the view's root.
		empty := root + stage + "/empty"
		if err := os.MkdirAll(empty, 0o755); err != nil {
			return fmt.Errorf("view: %w", err)
		}
		lower = append(lower, empty)
	}
	up := c.upper
	up.at = stage + "/upper"
	if err := up.put(root); err != nil {
		return err
	}
	at := root + c.at
	if err := os.MkdirAll(at, 0o700); err != nil {
		return fmt.Errorf("view: the cache %s must be below a folder the command may write: %w", c.at, err)
	}
	opts := "lowerdir=" + strings.Join(lower, ":") + ",upperdir=" + root + up.at + "/upper,workdir=" + root + up.at + "/work,userxattr"
	if err := unix.Mount("overlay", at, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("view: mount the cache %s (overlay): %w", c.at, err)
	}
	for _, d := range append(lower[:len(c.layers):len(c.layers)], root+up.at) {
		if err := unix.Unmount(d, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("view: detach %s: %w", strings.TrimPrefix(d, root), err)
		}
	}
	if err := os.RemoveAll(root + stage); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	return nil
}

// UpperFolders makes the upper and work folders of a cache's Upper, given
// to the command's id (Policy.ID: as root, the run's; 0, the default);
// Command does before each command.
func UpperFolders(upper string, id int) error {
	uid, gid := Policy{ID: id}.ids()
	for _, d := range []string{upper, filepath.Join(upper, "upper"), filepath.Join(upper, "work")} {
		info, err := os.Lstat(d)
		if err == nil && info.IsDir() {
			if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid {
				continue
			}
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("make the cache folder %s: %w", d, err)
		}
		if uid != os.Geteuid() && os.Geteuid() == 0 { // a subordinate id's init gives them to it
			if err := os.Lchown(d, uid, gid); err != nil {
				return fmt.Errorf("give the cache folder %s to the sandbox's id %d: %w", d, uid, err)
			}
		}
	}
	return nil
}
