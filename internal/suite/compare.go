package suite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/proctor-dev/proctor/internal/store"
)

// Wilson is the 95% Wilson score interval of a pass rate: passed of runs
// (0, 1 when there is no run). Unlike passed/runs ± a normal error, it stays
// inside [0, 1] and is honest about a handful of repeats: 3 of 3 is
// 44%–100%.
func Wilson(passed, runs int) (lo, hi float64) {
	if runs <= 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	n, p := float64(runs), float64(passed)/float64(runs)
	mid := (p + z*z/(2*n)) / (1 + z*z/n)
	half := z / (1 + z*z/n) * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return max(0, mid-half), min(1, mid+half)
}

// FailOn is the condition that makes a comparison fail a CI job.
type FailOn string

// The conditions a comparison can fail on.
const (
	FailNever      FailOn = "none"
	FailRegression FailOn = "regression" // a scenario regressed
	FailFlaky      FailOn = "flaky"      // …or became flaky
	FailAny        FailOn = "any"        // …or the head does not pass every repeat of every scenario the base ran
)

// FailOns are the values of FailOn.
func FailOns() []string {
	return []string{string(FailNever), string(FailRegression), string(FailFlaky), string(FailAny)}
}

// ParseFailOn reads a FailOn.
func ParseFailOn(s string) (FailOn, error) {
	if !slices.Contains(FailOns(), s) {
		return "", fmt.Errorf("want one of %s; got %q", strings.Join(FailOns(), ", "), s)
	}
	return FailOn(s), nil
}

// CompareRequest asks for a page of a comparison.
type CompareRequest struct {
	Base, Head string // suite ids
	Class      string // "" every class; else one of store.CompareClasses
	Page       int    // 1-based; 0 every row (for the CLI)
}

// Compared is two suites compared: a page of rows, what needs a look first,
// and the totals of all of them.
type Compared struct {
	*store.Comparison
	BaseID, HeadID string
	Class          string
	Page           int // 0: every row is in Rows
	Pages          int
}

// ErrSameSuite is a comparison of a suite with itself.
var ErrSameSuite = errors.New("the base and the head are the same suite: compare two different suites")

// ErrBadClass is a class that is none of store.CompareClasses.
var ErrBadClass = errors.New("class: want one of " + strings.Join(store.CompareClasses(), ", "))

// Compare compares suite q.Head with suite q.Base in the index (counted by
// SQL: a page of rows is read, never every row).
func Compare(ctx context.Context, st *store.Store, q CompareRequest) (*Compared, error) {
	if q.Base == q.Head {
		return nil, ErrSameSuite
	}
	if q.Class != "" && !slices.Contains(store.CompareClasses(), q.Class) {
		return nil, fmt.Errorf("%w; got %q", ErrBadClass, q.Class)
	}
	sq := store.CompareQuery{Base: q.Base, Head: q.Head, Class: q.Class}
	if q.Page > 0 {
		sq.Offset, sq.Limit = (q.Page-1)*RowsPerPage, RowsPerPage
	}
	cmp, err := st.CompareSuites(ctx, sq)
	if err != nil {
		return nil, err
	}
	c := &Compared{Comparison: cmp, BaseID: q.Base, HeadID: q.Head, Class: q.Class, Page: q.Page, Pages: 1}
	if q.Page > 0 {
		shown := c.Shown()
		c.Pages = max(1, (shown+RowsPerPage-1)/RowsPerPage)
		if q.Page > c.Pages { // past the end: the last page
			return Compare(ctx, st, CompareRequest{Base: q.Base, Head: q.Head, Class: q.Class, Page: c.Pages})
		}
	}
	return c, nil
}

// Shown is how many rows the class filter lets through.
func (c *Compared) Shown() int {
	if c.Class != "" {
		return c.Classes[c.Class]
	}
	return c.All()
}

// All is how many rows the comparison has, of every class.
func (c *Compared) All() int {
	n := 0
	for _, k := range c.Classes {
		n += k
	}
	return n
}

// Fails reports whether the comparison holds condition on: a scenario
// regressed; for flaky, also one became flaky; for any, also the head did
// not pass every repeat of a scenario, or did not run (or finish) one the
// base ran.
func (c *Compared) Fails(on FailOn) bool {
	switch on {
	case FailAny:
		if c.Classes[store.Removed]+c.Classes[store.Pending] > 0 || c.Head.AllPass < c.Head.Rows {
			return true
		}
		fallthrough
	case FailFlaky:
		if c.Classes[store.NewlyFlaky] > 0 {
			return true
		}
		fallthrough
	case FailRegression:
		return c.Classes[store.Regressed] > 0
	}
	return false
}

// SideStats are a side of a row (or a suite's totals) as the comparison shows
// them: the pass rate with its interval, and the mean tokens, cost and
// wall time of a run.
type SideStats struct {
	Present bool // the suite ran it
	Runs    int  // runs with a verdict
	Passed  int
	Rate    float64 // Passed/Runs
	Low     float64 // Wilson interval of Rate
	High    float64
	PassK   bool     // every repeat passed
	Tokens  float64  // a run's mean
	Cost    *float64 // a run's mean; nil when a run has no price
	Seconds *float64 // a run's mean; nil when no run ended
}

// StatsOf is a side's stats.
func StatsOf(s store.CompareSide) SideStats {
	st := SideStats{Present: s.Count > 0, Runs: s.Runs, Passed: s.Passed, PassK: PassK(s.Passed, s.Runs)}
	if s.Runs > 0 {
		st.Rate = float64(s.Passed) / float64(s.Runs)
	}
	st.Low, st.High = Wilson(s.Passed, s.Runs)
	if s.Count > 0 {
		st.Tokens = float64(s.Tokens) / float64(s.Count)
		if s.Priced == s.Count {
			v := s.Cost / float64(s.Count)
			st.Cost = &v
		}
	}
	if s.Ended > 0 {
		v := float64(s.Millis) / 1000 / float64(s.Ended)
		st.Seconds = &v
	}
	return st
}

// Delta is head minus base of a mean; nil when either is unknown.
func Delta(base, head *float64) *float64 {
	if base == nil || head == nil {
		return nil
	}
	d := *head - *base
	return &d
}

// Links are the runs a row links to on each side: for the head, its first
// failing run (with the check that failed first) or else a run; for the
// base, a passing run (what the head's failure is compared with) or else a
// run.
type Links struct {
	BaseRun, HeadRun, FailedCheck string
}

// LinksOf are row r's links.
func LinksOf(r store.CompareRow) Links {
	l := Links{BaseRun: r.Base.PassRun, HeadRun: r.Head.FailRun, FailedCheck: r.Head.FailCheck}
	if l.BaseRun == "" {
		l.BaseRun = r.Base.AnyRun
	}
	if l.HeadRun == "" {
		l.HeadRun = r.Head.AnyRun
	}
	return l
}
