package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Cache is a toolchain cache (Go's build cache, npm's, pip's) a command
// sees warm and copy-on-write: an overlay at At of read-only Layers —
// folders that only trusted work filled — under a folder of the command's
// own. The command reads everything the layers hold and writes only into
// Upper; no write of it reaches a layer, so nothing it writes reaches
// another run or the user's own cache. The host's layers and Upper are
// not in the view: only the overlay is.
type Cache struct {
	At     string   // where the command sees it, below a folder it may write (its env var names it)
	Layers []string // read-only folders it sees through, the top one first; none: it starts empty
	// Upper is a folder of the command's id, on one file system, holding
	// the overlay's upper (what the command wrote: "upper") and its work
	// folder ("work"). proctor keeps it for the run's later commands, or
	// keeps it as a new layer when trusted work wrote it.
	Upper string
}

// cacheFlag is a cache as the helper's flag: its folders joined by
// commas, At and Upper first.
func (c Cache) flag() string {
	return strings.Join(append([]string{c.At, c.Upper}, c.Layers...), ",")
}

// parseCache reads a --cache flag.
func parseCache(v string) (Cache, error) {
	parts := strings.Split(v, ",")
	if len(parts) < 2 {
		return Cache{}, fmt.Errorf("--cache %q: want AT,UPPER[,LAYER…]", v)
	}
	return Cache{At: parts[0], Upper: parts[1], Layers: parts[2:]}, nil
}

// check refuses a cache the overlay cannot take: a folder that is not an
// absolute path, or whose name holds a character of the overlay's
// options (a comma, a colon, a backslash) or the helper's flag.
func (c Cache) check() error {
	for _, d := range append([]string{c.At, c.Upper}, c.Layers...) {
		switch {
		case !filepath.IsAbs(d):
			return fmt.Errorf("cache folder %q: want an absolute path", d)
		case strings.ContainsAny(d, ",:\\\n"):
			return fmt.Errorf("cache folder %q: a cache's folder may not hold a comma, a colon or a backslash (the overlay's options use them); move proctor's data folder", d)
		}
	}
	return nil
}
