package web

import (
	"net/url"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/runview"
)

// RunPairPage is the view model of two runs side by side.
type RunPairPage struct {
	Meta Meta
	*runview.Pair
	SideA, SideB RunPage // each run as its own page shows it
	// Lazy: a diff too large to show here; its files are listed, each
	// linked to its run's page.
	Lazy bool
}

// NewRunPairPage lays out a pair of runs.
func NewRunPairPage(m Meta, p *runview.Pair) RunPairPage {
	out := RunPairPage{Meta: m, Pair: p, SideA: RunPage{Meta: m, View: p.A}, SideB: RunPage{Meta: m, View: p.B}}
	if Inline(p.A.Files) && Inline(p.B.Files) {
		out.SideA.Diff, out.SideB.Diff = BuildDiff(p.A.Files), BuildDiff(p.B.Files)
	} else {
		out.SideA.Diff, out.SideB.Diff, out.Lazy = ListDiff(p.A.Files), ListDiff(p.B.Files), true
	}
	return out
}

// Files are the pair's files, each with its diff in either run (nil: not
// changed there, or not listed in a large diff).
func (p RunPairPage) Files() []PairFile {
	side := func(d []DiffFile, i int) *DiffFile {
		if i < 0 || i >= len(d) {
			return nil
		}
		return &d[i]
	}
	out := make([]PairFile, 0, len(p.Pair.Files))
	for _, f := range p.Pair.Files {
		pf := PairFile{FilePair: f, A: side(p.SideA.Diff, f.A), B: side(p.SideB.Diff, f.B)}
		switch {
		case f.A < 0:
			pf.Note = "only the second run changed it"
		case f.B < 0:
			pf.Note = "only the first run changed it"
		case f.Same:
			pf.Note = "the same change in both"
		default:
			pf.Note = "changed differently"
		}
		out = append(out, pf)
	}
	return out
}

// PairFile is a file of the pair with its diff in each run.
type PairFile struct {
	runview.FilePair
	A, B *DiffFile
	Note string
}

// checkLabel is a check's result in words ("—": the run has no such
// check).
func checkLabel(c *bundle.CheckResult) (label, class string) {
	switch {
	case c == nil:
		return "—", ""
	case c.Broken:
		return "broken", "st-error"
	case c.Passed:
		return "passed", "st-passed"
	}
	return "failed", "st-failed"
}

// pairURL is the page of two runs side by side.
func pairURL(a, b string) string {
	return "/compare/runs?a=" + url.QueryEscape(a) + "&b=" + url.QueryEscape(b)
}
