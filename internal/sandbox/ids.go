package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/proctor-dev/proctor/internal/flock"
)

// ID is the host id a run's commands run as, held until Release.
type ID struct {
	ID int
	// Own: the id is proctor's user's own (a user who is not root), which
	// that user's other runs share.
	Own  bool
	lock *flock.Lock
}

// Release lets the id go for another run; the run's files are given back
// first (Reclaim).
func (id *ID) Release() {
	if id != nil && id.lock != nil {
		id.lock.Unlock()
		id.lock = nil
	}
}

// String says which id it is, for the run's walls.
func (id *ID) String() string {
	if id.Own {
		return fmt.Sprintf("id %d (proctor's user's own: not root, no ids of the run's own)", id.ID)
	}
	return fmt.Sprintf("id %d (the run's own)", id.ID)
}

// idRanges are ranges of ids, [start, start+count).
type idRanges [][2]int

func (r idRanges) has(id int) bool {
	for _, s := range r {
		if id >= s[0] && id < s[0]+s[1] {
			return true
		}
	}
	return false
}

// subordinateRanges are the ranges of ids the files (/etc/subuid's form:
// name:start:count) give users; a file that is not there gives none.
func subordinateRanges(files ...string) idRanges {
	var out idRanges
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		out = append(out, parseSubordinate(string(raw))...)
	}
	return out
}

// parseSubordinate reads /etc/subuid's lines; a line it cannot read is
// passed over.
func parseSubordinate(text string) idRanges {
	var out idRanges
	for _, line := range strings.Split(text, "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		if len(f) != 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		start, err1 := strconv.Atoi(f[1])
		count, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && start >= 0 && count > 0 {
			out = append(out, [2]int{start, count})
		}
	}
	return out
}
