package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Readable are folders (whole) and files.
type Readable struct{ Dirs, Files []string }

// HostFiles keeps what of the host's /etc every user may read (readable):
// walking /etc costs a confined command more than anything else its init
// does, so a process that confines many commands walks it at most once a
// refresh period, and again at once when /etc itself changes. A file that
// was made closed to others since is still closed by its mode: the
// command is never its owner, nor root on the host.
type HostFiles struct {
	mu    sync.Mutex
	at    time.Time // when etc was read
	mtime time.Time // /etc's then
	etc   Readable
}

// hostFilesRefresh is how long HostFiles trusts a walk of /etc.
const hostFilesRefresh = 10 * time.Second

// Etc is what of /etc every user may read; a nil h walks it now.
func (h *HostFiles) Etc() Readable {
	if h == nil {
		d, f := readable("/etc")
		return Readable{Dirs: d, Files: f}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var mtime time.Time
	if info, err := os.Stat("/etc"); err == nil {
		mtime = info.ModTime()
	}
	if h.at.IsZero() || time.Since(h.at) > hostFilesRefresh || !mtime.Equal(h.mtime) {
		d, f := readable("/etc")
		h.etc, h.at, h.mtime = Readable{Dirs: d, Files: f}, time.Now(), mtime
	}
	return h.etc
}

// readable lists what under dir every user of the host may read, in as
// few paths as it can: dir itself when all of it is, else the parts of it
// that are (folders whole where they can be, files one by one). Links are
// left out: what they lead to is allowed or not where it is. The command
// does not run as a host file's owner, so this is a second wall behind
// file modes: /etc/shadow, host keys and /etc/ssl/private are left out.
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
