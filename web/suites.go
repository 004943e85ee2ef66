package web

import (
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/derive"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// SuitesPage is the view model of the suites list.
type SuitesPage struct {
	Meta      Meta
	Suites    []store.SuiteSummary
	Scenarios []ScenarioRow // scenarios of the folders the server may launch
	Models    Models        // profiles a suite may be run against instead of each scenario's own
	Agents    []string      // agents a suite may be run with instead of each scenario's own
	Values    SuiteValues
	Errors    map[string]string
}

// ScenarioRow is a scenario the Suites page lists: where it came from, when
// a run was made a scenario (proctor scenario from, Make a scenario).
type ScenarioRow struct {
	ID, Description, MadeFrom string
	Turns, Checks             int
}

// ScenarioMadePage shows a scenario just made from a run.
type ScenarioMadePage struct {
	Meta Meta
	Made derive.Made
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
	Queued     []jobs.Job // runs of the suite waiting in the launch queue, not in the matrix yet
	BaselineOf []string   // the baselines that name this suite
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
		if c.Stage != "" && string(c.Stage) != string(c.Status) {
			return humanStatus(c.Status) + ": " + humanStatus(c.Stage) // "running: warming caches"
		}
		return humanStatus(c.Status)
	case "cell-broken":
		return "broken"
	case "cell-pass":
		return "passed"
	}
	word := "failed" // a verdict's word; a run that ended in error or was interrupted says so, as its page does
	if c.Status == bundle.StatusError || c.Status == bundle.StatusInterrupted {
		word = humanStatus(c.Status)
	}
	if c.Aborted != "" {
		return word + ": " + c.Aborted
	}
	return word
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
	Suites   []store.ScenarioSuite // its recent suites, newest first
}

// SuiteLine is a line of a scenario's recent suites.
type SuiteLine struct {
	Suite, Agent, Model, Started string
	Rate                         string
	Percent                      int // of the bar
	Class                        string
}

// SuiteLines are the scenario's recent suites as lines.
func (p ScenarioPage) SuiteLines() []SuiteLine {
	var out []SuiteLine
	for _, ss := range p.Suites {
		s := suite.StatsOf(store.CompareSide{Count: ss.Count, Runs: ss.Runs, Passed: ss.Passed})
		l := SuiteLine{Suite: ss.Suite, Agent: ss.Agent, Model: ss.Model, Started: formatTime(ss.Started), Rate: suite.RateText(s),
			Percent: int(100 * s.Rate), Class: "cell-fail"}
		switch {
		case ss.Runs < ss.Count:
			l.Class = "cell-running"
		case s.PassK:
			l.Class = "cell-pass"
		case suite.Flaky(ss.Passed, ss.Runs):
			l.Class = "cell-broken"
		}
		out = append(out, l)
	}
	return out
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

// ModelRow is a line of a suite's table of agents × models.
type ModelRow struct {
	Agent, Model string
	Rate         string // pass rate with its interval
	PassK        string // scenarios passing every repeat, of all
	Cost         string // a run's mean
	Total        string // every run's
	Seconds      string // a run's mean wall time
	Tokens       string // a run's mean
}

// ModelRows are the suite's runs by agent and model.
func (p SuitePage) ModelRows() []ModelRow {
	var out []ModelRow
	for _, m := range p.Matrix.Models {
		s := m.Stats()
		r := ModelRow{Agent: m.Agent, Model: m.Model, Rate: suite.RateText(s), PassK: itoa(m.AllPass) + " of " + itoa(m.Scenarios),
			Cost: suite.CostText(s.Cost), Tokens: formatCount(int64(s.Tokens)), Seconds: "—"}
		if s.Cost != nil {
			total := m.Cost
			r.Total = formatCost(&total)
		} else {
			r.Total = formatCost(nil)
		}
		if s.Seconds != nil {
			r.Seconds = formatSeconds(*s.Seconds)
		}
		out = append(out, r)
	}
	return out
}

// CostChart is a server-rendered SVG plot of pass rate (with its interval)
// against a run's mean cost, one point per agent and model.
type CostChart struct {
	Width, Height            int
	Left, Top, Right, Bottom int // the plot area
	Points                   []CostPoint
	XTicks, YTicks           []ChartTick
	Unpriced                 []string // agents and models with no price: not plotted
}

// CostPoint is an agent with a model in the chart.
type CostPoint struct {
	X, Y, Low, High int // Low and High: the interval's ends
	Label, Title    string
	LabelX          int
	Anchor          string // text-anchor of the label
}

// ChartTick is an axis tick.
type ChartTick struct {
	At    int
	Label string
}

// CostChart lays out the chart of the suite's agents and models.
func (p SuitePage) CostChart() CostChart {
	ch := CostChart{Width: 720, Height: 320, Left: 64, Top: 16, Right: 560, Bottom: 276}
	type point struct {
		label string
		s     suite.SideStats
		cost  float64
	}
	var pts []point
	top := 0.0
	for _, m := range p.Matrix.Models {
		s := m.Stats()
		label := m.Agent + " · " + m.Model
		if s.Cost == nil || m.Runs == 0 {
			ch.Unpriced = append(ch.Unpriced, label)
			continue
		}
		pts = append(pts, point{label: label, s: s, cost: *s.Cost})
		top = max(top, *s.Cost)
	}
	top = niceCeil(top * 1.1)
	x := func(c float64) int { return ch.Left + int(c/top*float64(ch.Right-ch.Left)) }
	y := func(r float64) int { return ch.Bottom - int(r*float64(ch.Bottom-ch.Top)) }
	decimals := max(2, 1-int(math.Floor(math.Log10(top/4)))) // enough to tell the ticks apart
	for i := 0; i <= 4; i++ {
		c := top * float64(i) / 4
		ch.XTicks = append(ch.XTicks, ChartTick{At: x(c), Label: "$" + strconv.FormatFloat(c, 'f', decimals, 64)})
		ch.YTicks = append(ch.YTicks, ChartTick{At: y(float64(i) / 4), Label: itoa(25*i) + "%"})
	}
	for _, pt := range pts {
		cp := CostPoint{X: x(pt.cost), Y: y(pt.s.Rate), Low: y(pt.s.Low), High: y(pt.s.High), Label: pt.label, Anchor: "start",
			Title: pt.label + ": " + suite.RateText(pt.s) + " at " + suite.CostText(pt.s.Cost) + " a run"}
		cp.LabelX = cp.X + 9
		if cp.X > (ch.Left+ch.Right)/2 {
			cp.LabelX, cp.Anchor = cp.X-9, "end"
		}
		ch.Points = append(ch.Points, cp)
	}
	return ch
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (a tiny cost, or
// none, is a scale of a tenth of a cent).
func niceCeil(v float64) float64 {
	if v <= 0.001 {
		return 0.001
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
