package web

import (
	"net/url"
	"strconv"

	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// ComparePage is the view model of two suites compared; with no
// comparison, the form that picks the two.
type ComparePage struct {
	Meta Meta
	// Cmp is nil while the two suites are being picked.
	Cmp        *suite.Compared
	Base, Head string // what the form was sent with (a suite id or a baseline's name)
	// BaseName and HeadName are the baselines the suites were named by ("" none).
	BaseName, HeadName string
	Suites             []store.SuiteSummary // recent suites, to pick from
	Baselines          []suite.Baseline
	Problem            string // why there is no comparison yet ("" while none was asked for)
}

// CompareTotal is a line of the totals: label, base, head and the change.
type CompareTotal struct {
	Label, Base, Head, Change string
	Worse                     bool // the change is for the worse
}

// Totals are the comparison's totals line by line.
func (p ComparePage) Totals() []CompareTotal {
	b, h := p.Cmp.Totals()
	pct := func(r float64) string { return strconv.FormatFloat(100*r, 'f', 0, 64) + "%" }
	rate := func(t suite.TotalsJSON) string {
		return itoa(t.Passed) + "/" + itoa(t.Runs) + " (" + pct(t.PassRate) + ", " + pct(t.Interval[0]) + "–" + pct(t.Interval[1]) + ")"
	}
	dRate := h.PassRate - b.PassRate
	dPassK := float64(h.PassK - b.PassK)
	dTokens := float64(h.Tokens - b.Tokens)
	dSeconds := h.Seconds - b.Seconds
	dCost := suite.Delta(b.CostUSD, h.CostUSD)
	cost := CompareTotal{Label: "Cost", Base: suite.CostText(b.CostUSD), Head: suite.CostText(h.CostUSD), Change: suite.SignedText(dCost, "$")}
	cost.Worse = dCost != nil && *dCost > 0
	return []CompareTotal{
		{Label: "Pass rate", Base: rate(b), Head: rate(h), Change: signedPoints(dRate), Worse: dRate < 0},
		{Label: "pass^k (every repeat passed)", Base: itoa(b.PassK) + " of " + itoa(b.Rows), Head: itoa(h.PassK) + " of " + itoa(h.Rows), Change: suite.SignedText(&dPassK, "scenarios"), Worse: dPassK < 0},
		{Label: "Tokens", Base: formatCount(b.Tokens), Head: formatCount(h.Tokens), Change: suite.SignedText(&dTokens, "tokens"), Worse: dTokens > 0},
		cost,
		{Label: "Wall time (runs summed)", Base: formatSeconds(b.Seconds), Head: formatSeconds(h.Seconds), Change: suite.SignedText(&dSeconds, "s"), Worse: dSeconds > 0},
	}
}

func signedPoints(d float64) string {
	s := strconv.FormatFloat(100*d, 'f', 1, 64) + " points"
	switch {
	case d > 0:
		return "+" + s
	case d == 0:
		return "±" + s
	}
	return s
}

func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + "s" }

// CompareTab is a class of rows as a filter link.
type CompareTab struct {
	Class, Label string
	Count        int
	URL          string
	Current      bool
}

// Tabs are the classes with rows, and "every row".
func (p ComparePage) Tabs() []CompareTab {
	tabs := []CompareTab{{Label: "every scenario", Count: p.Cmp.All(), URL: p.URL("", 1), Current: p.Cmp.Class == ""}}
	for _, c := range store.CompareClasses() {
		if n := p.Cmp.Classes[c]; n > 0 {
			tabs = append(tabs, CompareTab{Class: c, Label: classLabel(c), Count: n, URL: p.URL(c, 1), Current: p.Cmp.Class == c})
		}
	}
	return tabs
}

// classLabel is a class in words on the page.
func classLabel(c string) string {
	if c == store.Pending {
		return "no verdict yet"
	}
	return suite.ClassLabel(c)
}

// URL is the link to page n of the comparison showing class ("" every
// class), naming the suites as the form did.
func (p ComparePage) URL(class string, n int) string {
	q := url.Values{}
	q.Set("base", orDefault(p.Base, p.Cmp.BaseID))
	q.Set("head", orDefault(p.Head, p.Cmp.HeadID))
	if class != "" {
		q.Set("class", class)
	}
	if n > 1 {
		q.Set("page", itoa(n))
	}
	return "/compare?" + q.Encode()
}

// CompareRowView is a row as the page shows it.
type CompareRowView struct {
	Class, Label, Name, Scenario string
	Base, Head                   CompareSideView
	FailedCheck                  string
	Tokens, Cost, Seconds        string // head minus base, a run's mean
	CostWorse                    bool
}

// CompareSideView is a side of a row.
type CompareSideView struct {
	Rate  string
	PassK string // "" when the suite did not run it
	Run   string
}

// Rows are the page's rows.
func (p ComparePage) Rows() []CompareRowView {
	out := make([]CompareRowView, 0, len(p.Cmp.Rows))
	for _, r := range p.Cmp.Rows {
		l := suite.LinksOf(r)
		b, h := suite.StatsOf(r.Base), suite.StatsOf(r.Head)
		v := CompareRowView{Class: r.Class, Label: classLabel(r.Class), Name: suite.RowName(r), Scenario: r.Scenario,
			Base: sideView(b, l.BaseRun), Head: sideView(h, l.HeadRun)}
		if r.Class != store.Fixed && r.Class != store.Unchanged {
			v.FailedCheck = l.FailedCheck
		}
		if b.Present && h.Present {
			tb, th := b.Tokens, h.Tokens
			v.Tokens = suite.SignedText(suite.Delta(&tb, &th), "tokens")
			d := suite.Delta(b.Cost, h.Cost)
			v.Cost, v.CostWorse = suite.SignedText(d, "$"), d != nil && *d > 0
			v.Seconds = suite.SignedText(suite.Delta(b.Seconds, h.Seconds), "s")
		}
		out = append(out, v)
	}
	return out
}

func sideView(s suite.SideStats, run string) CompareSideView {
	v := CompareSideView{Rate: suite.RateText(s), Run: run}
	if s.PassK {
		v.PassK = "pass^k"
	}
	return v
}

// Chosen reports whether the picker's suite id is the one sent as which.
func (p ComparePage) Chosen(which, id string) bool {
	if which == "base" {
		return p.Base == id
	}
	return p.Head == id
}

// APIURL is the same page of the comparison from the JSON API.
func (p ComparePage) APIURL() string {
	return "/api/v1" + p.URL(p.Cmp.Class, p.Cmp.Page)
}
