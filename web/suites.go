package web

import (
	"slices"
	"sort"
	"strconv"

	"github.com/proctor-dev/proctor/internal/store"
)

// SuitesPage is the view model of the suites list.
type SuitesPage struct {
	Meta      Meta
	Suites    []store.SuiteSummary
	Scenarios []string // scenario folders the server may launch
	Models    Models   // profiles a suite may be run against instead of each scenario's own
	Values    SuiteValues
	Errors    map[string]string
}

// SuiteValues are what the suite form was sent with, shown again with its
// errors; the zero value is a first visit.
type SuiteValues struct {
	Sent      bool
	Scenarios []string
	Tags      string
	Repeat    string
	Parallel  string
	Model     string
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

// SuitePage is the view model of one suite: a matrix of scenario (and
// model) by repeat.
type SuitePage struct {
	Meta    Meta
	Suite   string
	Rows    []MatrixRow
	Repeats int
	Running int
	Passed  int
	Total   int
	AllPass int // rows whose every repeat passed (pass^k)
}

// MatrixRow is one scenario (with one model) across its repeats.
type MatrixRow struct {
	Scenario string
	Model    string
	Cells    []store.Cell // by repeat; a zero RunID is a repeat not run
	Passed   int
	Broken   int
	Runs     int
}

// Flaky reports mixed results over the repeats.
func (r MatrixRow) Flaky() bool { return r.Passed > 0 && r.Passed < r.Runs }

// PassK reports whether every repeat passed.
func (r MatrixRow) PassK() bool { return r.Runs > 0 && r.Passed == r.Runs }

// BuildMatrix arranges a suite's cells into rows.
func BuildMatrix(cells []store.Cell) ([]MatrixRow, int) {
	byKey := map[string]*MatrixRow{}
	var keys []string
	repeats := 0
	for _, c := range cells {
		k := c.Scenario + "\x00" + c.Model
		r := byKey[k]
		if r == nil {
			r = &MatrixRow{Scenario: c.Scenario, Model: c.Model}
			byKey[k] = r
			keys = append(keys, k)
		}
		for len(r.Cells) < c.Repeat {
			r.Cells = append(r.Cells, store.Cell{})
		}
		if c.Repeat >= 1 {
			r.Cells[c.Repeat-1] = c
		}
		repeats = max(repeats, c.Repeat)
		if c.HasVerdict {
			r.Runs++
			if c.Passed {
				r.Passed++
			}
			if c.Broken {
				r.Broken++
			}
		}
	}
	sort.Strings(keys)
	var rows []MatrixRow
	for _, k := range keys {
		r := byKey[k]
		for len(r.Cells) < repeats {
			r.Cells = append(r.Cells, store.Cell{})
		}
		rows = append(rows, *r)
	}
	return rows, repeats
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
