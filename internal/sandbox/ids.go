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
	// that user's other runs share; Why says why the run has none of its
	// own.
	Own  bool
	Why  string
	lock *flock.Lock
	// sub: the id is one of the user's subordinate ids (a user who is not
	// root), given back through helper.
	sub    *subordinate
	helper string
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
	if id.sub != nil {
		return fmt.Sprintf("id %d (the run's own, of the user's subordinate ids)", id.ID)
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

// subordinate is what this user may map: the ids both files give the user
// (not the user's own id, nor root's), and the two helpers; why says what
// is missing when there is nothing.
type subordinate struct {
	ranges               idRanges
	newuidmap, newgidmap string
	why                  string
}

// intersect is the ids both r and o have.
func (r idRanges) intersect(o idRanges) idRanges {
	var out idRanges
	for _, a := range r {
		for _, b := range o {
			lo, hi := max(a[0], b[0]), min(a[0]+a[1], b[0]+b[1])
			if lo < hi {
				out = append(out, [2]int{lo, hi - lo})
			}
		}
	}
	return out
}

// without is r less the ids named.
func (r idRanges) without(ids ...int) idRanges {
	out := r
	for _, id := range ids {
		var next idRanges
		for _, s := range out {
			if id < s[0] || id >= s[0]+s[1] {
				next = append(next, s)
				continue
			}
			if id > s[0] {
				next = append(next, [2]int{s[0], id - s[0]})
			}
			if end := s[0] + s[1]; id+1 < end {
				next = append(next, [2]int{id + 1, end - id - 1})
			}
		}
		out = next
	}
	return out
}

// count is how many ids r has.
func (r idRanges) count() int {
	n := 0
	for _, s := range r {
		n += s[1]
	}
	return n
}

// nth is r's n-th id (0 ≤ n < count).
func (r idRanges) nth(n int) int {
	for _, s := range r {
		if n < s[1] {
			return s[0] + n
		}
		n -= s[1]
	}
	return -1
}

// subordinateOf are the ranges /etc/subuid's text gives the user of that
// name or number.
func subordinateOf(text, name string, uid int) idRanges {
	var out idRanges
	for _, line := range strings.Split(text, "\n") {
		owner, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if owner != "" && (owner == name || owner == strconv.Itoa(uid)) {
			out = append(out, parseSubordinate(line)...)
		}
	}
	return out
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
