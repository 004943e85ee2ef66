package web

import (
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// SuitesPage is the view model of the suites list.
type SuitesPage struct {
	Meta      Meta
	Suites    []store.SuiteSummary
	Scenarios []string // scenario folders the server may launch
	Models    Models   // profiles a suite may be run against instead of each scenario's own
	Agents    []string // agents a suite may be run with instead of each scenario's own
	Values    SuiteValues
	Errors    map[string]string
}

// SuiteValues are what the suite form was sent with, shown again with its
// errors; the zero value is a first visit.
type SuiteValues struct {
	Sent      bool
	Scenarios []string `form:"scenarios"`
	Tags      string   `form:"tags"`
	Repeat    string   `form:"repeat"`
	Model     string   `form:"model"`
	Agent     string   `form:"agent"`
}

// Chosen reports whether scenario id is selected: all of them on a first
// visit, else the ones sent.
func (v SuiteValues) Chosen(id string) bool { return !v.Sent || slices.Contains(v.Scenarios, id) }

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// SuitePage is the view model of one suite: a page of its matrix of
// scenario (by agent and model) by repeat, the rows that need a look first.
type SuitePage struct {
	Meta Meta
	suite.View
	// Working: runs of the suite have no verdict yet (or none is indexed
	// yet); the page follows them.
	Working    bool
	Queued     int      // runs of the suite waiting in the launch queue
	BaselineOf []string // the baselines that name this suite
}

// compareWithURL is the form comparing suite id (the head) with a base to
// pick.
func compareWithURL(id string) string { return "/compare?head=" + url.QueryEscape(id) }

// PageURL is the link to page n of the suite with the same filter.
func (p SuitePage) PageURL(n int) string {
	q := url.Values{}
	if p.Filter.Status != "" {
		q.Set("status", p.Filter.Status)
	}
	if p.Filter.Name != "" {
		q.Set("name", p.Filter.Name)
	}
	if p.Filter.Tag != "" {
		q.Set("tag", p.Filter.Tag)
	}
	if n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return suiteURL(p.Matrix.Suite)
	}
	return suiteURL(p.Matrix.Suite) + "?" + q.Encode()
}

// cellClass is the colour of a matrix cell.
func cellClass(c store.Cell) string {
	switch {
	case c.RunID == "":
		return "cell-none"
	case !c.HasVerdict:
		return "cell-running"
	case c.Broken:
		return "cell-broken"
	case c.Passed:
		return "cell-pass"
	}
	return "cell-fail"
}

func cellLabel(c store.Cell) string {
	switch cellClass(c) {
	case "cell-none":
		return "not run"
	case "cell-running":
		return humanStatus(c.Status)
	case "cell-broken":
		return "broken"
	case "cell-pass":
		return "passed"
	}
	if c.Aborted != "" {
		return "failed: " + c.Aborted
	}
	return "failed"
}

func rate(passed, runs int) string {
	if runs == 0 {
		return "—"
	}
	return strconv.Itoa(passed) + "/" + strconv.Itoa(runs) + " (" + strconv.Itoa(100*passed/runs) + "%)"
}

// ScenarioPage is the view model of a scenario's history.
type ScenarioPage struct {
	Meta     Meta
	Scenario string
	Cells    []store.Cell // oldest first
	Chart    Chart
}

// Chart is a small server-rendered SVG: one row of squares per model, one
// square per run, oldest on the left.
type Chart struct {
	Width, Height int
	Rows          []ChartRow
}

// ChartRow is one model's runs in the chart.
type ChartRow struct {
	Model string
	Y     int
	Rate  string
	Marks []ChartMark
}

// ChartMark is one run in the chart.
type ChartMark struct {
	X     int
	Class string
	Title string
	URL   string
}

const (
	chartLabel = 200
	chartBox   = 14
	chartGap   = 3
	chartRow   = 24
)

// BuildChart lays out a scenario's runs by model.
func BuildChart(cells []store.Cell) Chart {
	var models []string
	byModel := map[string][]store.Cell{}
	for _, c := range cells {
		if _, ok := byModel[c.Model]; !ok {
			models = append(models, c.Model)
		}
		byModel[c.Model] = append(byModel[c.Model], c)
	}
	sort.Strings(models)
	ch := Chart{Height: max(len(models), 1)*chartRow + 8}
	widest := 0
	for i, m := range models {
		row := ChartRow{Model: m, Y: 4 + i*chartRow}
		passed, runs := 0, 0
		for j, c := range byModel[m] {
			row.Marks = append(row.Marks, ChartMark{X: chartLabel + j*(chartBox+chartGap), Class: cellClass(c),
				Title: c.RunID + " — " + cellLabel(c) + " — " + formatTime(c.Started), URL: runURL(c.RunID)})
			if c.HasVerdict {
				runs++
				if c.Passed {
					passed++
				}
			}
		}
		row.Rate = rate(passed, runs)
		widest = max(widest, len(row.Marks))
		ch.Rows = append(ch.Rows, row)
	}
	ch.Width = chartLabel + max(widest, 1)*(chartBox+chartGap) + 120
	return ch
}
