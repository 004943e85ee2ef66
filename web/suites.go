package web

import (
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

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
// scenario (and model) by repeat, the rows that need a look first.
type SuitePage struct {
	Meta   Meta
	Suite  string
	Matrix *Matrix
	Filter MatrixFilter
	Rows   []MatrixRow // this page's rows of the filtered matrix
	Shown  int         // rows that pass the filter
	Page   int         // 1-based
	Pages  int
	// Working: runs of the suite have no verdict yet (or none is indexed
	// yet); the page follows them.
	Working bool
	Queued  int // runs of the suite waiting in the launch queue
}

// MatrixRowsPerPage is how many rows a suite page shows.
const MatrixRowsPerPage = 50

// MatrixFilter narrows a suite's matrix: by what its rows show and by part
// of the scenario's name.
type MatrixFilter struct {
	Status string // "", broken, failing, flaky, passing, running
	Name   string
	Tag    string // rows of scenarios with this tag
}

// MatrixStatuses are the values of MatrixFilter.Status.
func MatrixStatuses() []string { return []string{"broken", "failing", "flaky", "passing", "running"} }

// Matrix is a suite's rows, sorted so that what needs a look comes first
// (broken checks, then by pass rate, lowest first; then by name), with its
// totals.
type Matrix struct {
	Rows    []MatrixRow
	Repeats int
	Running int // runs without a verdict yet
	Passed  int
	Total   int
	AllPass int      // rows whose every repeat passed (pass^k)
	Tags    []string // every tag of the suite's scenarios, sorted
}

// NewMatrix builds the matrix of a suite's cells.
func NewMatrix(cells []store.Cell) *Matrix {
	m := &Matrix{}
	m.Rows, m.Repeats = BuildMatrix(cells)
	for _, c := range cells {
		m.Total++
		if !c.HasVerdict {
			m.Running++
		} else if c.Passed {
			m.Passed++
		}
	}
	for _, r := range m.Rows {
		if r.PassK() {
			m.AllPass++
		}
		for _, t := range r.Tags {
			if !slices.Contains(m.Tags, t) {
				m.Tags = append(m.Tags, t)
			}
		}
	}
	slices.Sort(m.Tags)
	sort.SliceStable(m.Rows, func(i, j int) bool {
		a, b := m.Rows[i], m.Rows[j]
		if (a.Broken > 0) != (b.Broken > 0) {
			return a.Broken > 0
		}
		if ra, rb := a.rate(), b.rate(); ra != rb {
			return ra < rb
		}
		return false // BuildMatrix sorted them by name
	})
	return m
}

// rate is the share of repeats that passed; a row with no verdict yet
// sorts last.
func (r MatrixRow) rate() float64 {
	if r.Runs == 0 {
		return 2
	}
	return float64(r.Passed) / float64(r.Runs)
}

// Running reports whether a repeat of the row has no verdict yet.
func (r MatrixRow) Running() bool {
	for _, c := range r.Cells {
		if c.RunID != "" && !c.HasVerdict {
			return true
		}
	}
	return false
}

func (r MatrixRow) is(status string) bool {
	switch status {
	case "broken":
		return r.Broken > 0
	case "failing":
		return r.Runs > 0 && r.Passed < r.Runs
	case "flaky":
		return r.Flaky()
	case "passing":
		return r.PassK()
	case "running":
		return r.Running()
	}
	return true
}

// Page returns the rows of page n (1-based) that pass f, how many pass it,
// and the number of pages (at least 1).
func (m *Matrix) Page(f MatrixFilter, n int) ([]MatrixRow, int, int) {
	name := strings.ToLower(strings.TrimSpace(f.Name))
	n = max(n, 1)
	from := (n - 1) * MatrixRowsPerPage
	var rows []MatrixRow
	shown := 0
	for i := range m.Rows {
		r := &m.Rows[i]
		if !r.is(f.Status) || (name != "" && !strings.Contains(strings.ToLower(r.Scenario), name)) ||
			(f.Tag != "" && !slices.Contains(r.Tags, f.Tag)) {
			continue
		}
		if shown >= from && shown < from+MatrixRowsPerPage {
			rows = append(rows, *r)
		}
		shown++
	}
	pages := max(1, (shown+MatrixRowsPerPage-1)/MatrixRowsPerPage)
	if n > pages { // past the end: the last page
		return m.Page(f, pages)
	}
	return rows, shown, pages
}

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
		return suiteURL(p.Suite)
	}
	return suiteURL(p.Suite) + "?" + q.Encode()
}

// MatrixRow is one scenario (with one agent and one model) across its
// repeats.
type MatrixRow struct {
	Scenario string
	Agent    string
	Model    string
	Cells    []store.Cell // by repeat; a zero RunID is a repeat not run
	Passed   int
	Broken   int
	Runs     int
	Tags     []string // the tags its runs were recorded with
}

// Flaky reports mixed results over the repeats.
func (r MatrixRow) Flaky() bool { return suite.Flaky(r.Passed, r.Runs) }

// PassK reports whether every repeat passed.
func (r MatrixRow) PassK() bool { return suite.PassK(r.Passed, r.Runs) }

// BuildMatrix arranges a suite's cells into rows.
func BuildMatrix(cells []store.Cell) ([]MatrixRow, int) {
	byKey := map[string]*MatrixRow{}
	var keys []string
	repeats := 0
	for _, c := range cells {
		k := c.Scenario + "\x00" + c.Agent + "\x00" + c.Model
		r := byKey[k]
		if r == nil {
			r = &MatrixRow{Scenario: c.Scenario, Agent: c.Agent, Model: c.Model}
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
		for _, t := range c.Tags {
			if !slices.Contains(r.Tags, t) {
				r.Tags = append(r.Tags, t)
			}
		}
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
