package suite

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

// Row is a suite's runs of one scenario by one agent with one model.
type Row store.SuiteRow

// PassK reports whether every repeat with a verdict passed.
func (r Row) PassK() bool { return PassK(r.Passed, r.Runs) }

// Flaky reports mixed results over the repeats.
func (r Row) Flaky() bool { return Flaky(r.Passed, r.Runs) }

// rate is the share of repeats that passed; a row with no verdict yet
// sorts last.
func (r Row) rate() float64 {
	if r.Runs == 0 {
		return 2
	}
	return float64(r.Passed) / float64(r.Runs)
}

// Is reports whether the row shows status (one of Statuses; "" is any).
func (r Row) Is(status string) bool {
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
		return r.Running > 0
	}
	return true
}

// Statuses are the values of Filter.Status.
func Statuses() []string { return []string{"broken", "failing", "flaky", "passing", "running"} }

// Filter narrows a suite's matrix: by what its rows show, by part of the
// scenario's name and by tag.
type Filter struct {
	Status string // "" or one of Statuses
	Name   string
	Tag    string
}

// Check names what is wrong with f, or returns nil.
func (f Filter) Check() error {
	if f.Status != "" && !slices.Contains(Statuses(), f.Status) {
		return fmt.Errorf("status: want one of %s; got %q", strings.Join(Statuses(), ", "), f.Status)
	}
	return nil
}

// Matrix is a suite's rows, sorted so that what needs a look comes first
// (broken checks, then by pass rate, lowest first; then by name), with its
// totals. It is shared between readers: do not change it.
type Matrix struct {
	Suite   string
	Rows    []Row
	Repeats int
	Running int // runs without a verdict yet
	Passed  int
	Total   int
	AllPass int      // rows whose every repeat passed (pass^k)
	Tags    []string // every tag of the suite's scenarios, sorted
	Cost    float64  // of the runs with a price
	Priced  int      // runs with a price
	// Models are the suite's runs by agent and model, by agent then
	// model.
	Models []ModelStats
}

// ModelStats are a suite's runs by one agent with one model.
type ModelStats struct {
	Agent, Model string
	Scenarios    int // rows
	AllPass      int // rows whose every repeat passed (pass^k)
	Runs         int // runs with a verdict
	Passed       int
	Count        int // runs
	Cost         float64
	Priced       int
	Tokens       int64
	Millis       int64
	Ended        int
}

// Stats are m's pass rate with its interval, and a run's mean cost,
// tokens and time.
func (m ModelStats) Stats() SideStats {
	return StatsOf(store.CompareSide{Count: m.Count, Runs: m.Runs, Passed: m.Passed, Tokens: m.Tokens, Cost: m.Cost, Priced: m.Priced, Millis: m.Millis, Ended: m.Ended})
}

// CostUSD is what the suite's runs cost; nil when a run has no price.
func (m *Matrix) CostUSD() *float64 {
	if m.Total == 0 || m.Priced < m.Total {
		return nil
	}
	return &m.Cost
}

// NewMatrix sorts a suite's rows (as the index counts them) and totals
// them.
func NewMatrix(id string, rows []store.SuiteRow) *Matrix {
	m := &Matrix{Suite: id, Rows: make([]Row, len(rows))}
	type pair struct{ agent, model string }
	byModel := map[pair]*ModelStats{}
	for i, sr := range rows {
		r := Row(sr)
		m.Rows[i] = r
		m.Repeats = max(m.Repeats, r.Repeats)
		m.Total += r.Runs + r.Running
		m.Running += r.Running
		m.Passed += r.Passed
		m.Cost, m.Priced = m.Cost+r.Cost, m.Priced+r.Priced
		if r.PassK() {
			m.AllPass++
		}
		ms := byModel[pair{r.Agent, r.Model}]
		if ms == nil {
			ms = &ModelStats{Agent: r.Agent, Model: r.Model}
			byModel[pair{r.Agent, r.Model}] = ms
		}
		ms.Scenarios++
		if r.PassK() {
			ms.AllPass++
		}
		ms.Runs, ms.Passed, ms.Count = ms.Runs+r.Runs, ms.Passed+r.Passed, ms.Count+r.Runs+r.Running
		ms.Cost, ms.Priced, ms.Tokens = ms.Cost+r.Cost, ms.Priced+r.Priced, ms.Tokens+r.Tokens
		ms.Millis, ms.Ended = ms.Millis+r.Millis, ms.Ended+r.Ended
		for _, t := range r.Tags {
			if !slices.Contains(m.Tags, t) {
				m.Tags = append(m.Tags, t)
			}
		}
	}
	slices.Sort(m.Tags)
	for _, ms := range byModel {
		m.Models = append(m.Models, *ms)
	}
	sort.Slice(m.Models, func(i, j int) bool {
		a, b := m.Models[i], m.Models[j]
		return a.Agent < b.Agent || (a.Agent == b.Agent && a.Model < b.Model)
	})
	sort.SliceStable(m.Rows, func(i, j int) bool {
		a, b := m.Rows[i], m.Rows[j]
		if (a.Broken > 0) != (b.Broken > 0) {
			return a.Broken > 0
		}
		if ra, rb := a.rate(), b.rate(); ra != rb {
			return ra < rb
		}
		return false // the index gave them by name
	})
	return m
}

// RowsPerPage is how many rows a page of a matrix shows.
const RowsPerPage = 50

// Page returns the rows of page n (1-based; past the end is the last page)
// that pass f, how many pass it, the page number and the number of pages
// (at least 1).
func (m *Matrix) Page(f Filter, n int) (rows []Row, shown, page, pages int) {
	name := strings.ToLower(strings.TrimSpace(f.Name))
	match := func(r *Row) bool {
		return r.Is(f.Status) && (name == "" || strings.Contains(strings.ToLower(r.Scenario), name)) &&
			(f.Tag == "" || slices.Contains(r.Tags, f.Tag))
	}
	all := f.Status == "" && name == "" && f.Tag == ""
	if all {
		shown = len(m.Rows)
	} else {
		for i := range m.Rows {
			if match(&m.Rows[i]) {
				shown++
			}
		}
	}
	pages = max(1, (shown+RowsPerPage-1)/RowsPerPage)
	page = min(max(n, 1), pages)
	from := (page - 1) * RowsPerPage
	if all {
		return m.Rows[from:min(from+RowsPerPage, shown):min(from+RowsPerPage, shown)], shown, page, pages
	}
	seen := 0
	for i := range m.Rows {
		if r := &m.Rows[i]; match(r) {
			if seen >= from {
				rows = append(rows, *r)
				if len(rows) == RowsPerPage {
					break
				}
			}
			seen++
		}
	}
	return rows, shown, page, pages
}

// RowCells is a row with its runs by repeat (a zero RunID is a repeat not
// run).
type RowCells struct {
	Row
	Cells []store.Cell
}

// View is what a page of a suite shows.
type View struct {
	Matrix *Matrix
	Filter Filter
	Rows   []RowCells
	Shown  int // rows that pass the filter
	Page   int // 1-based
	Pages  int
}

// Matrices reads suites' matrices from the index. A matrix is counted by
// SQL once per change of the index (or once a second while it changes, as
// it does while a suite runs), by one reader at a time: the others wait for
// it, so that many people opening a big suite at once cost one count. The
// runs of the pages read are kept with it.
type Matrices struct {
	st *store.Store

	mu    sync.Mutex
	built map[string]*built
}

type built struct {
	done    chan struct{} // closed when matrix or err is set
	matrix  *Matrix
	err     error
	version int64
	at      time.Time
	pages   map[pageKey][]RowCells // guarded by Matrices.mu
}

type pageKey struct {
	f Filter
	n int
}

// NewMatrices reads matrices from st.
func NewMatrices(st *store.Store) *Matrices {
	return &Matrices{st: st, built: map[string]*built{}}
}

// get returns what is built of suite id, counting it if it is not yet or
// the index has changed.
func (ms *Matrices) get(ctx context.Context, id string) (*built, error) {
	version, err := ms.st.Version(ctx)
	if err != nil {
		return nil, err
	}
	ms.mu.Lock()
	b := ms.built[id]
	if b != nil {
		select {
		case <-b.done:
			if b.err != nil || (b.version != version && time.Since(b.at) >= time.Second) {
				b = nil // a failure, or the index changed: count again
			}
		default: // being counted: wait for it
		}
	}
	if b == nil {
		b = &built{done: make(chan struct{}), version: version, at: time.Now(), pages: map[pageKey][]RowCells{}}
		if len(ms.built) >= 256 {
			clear(ms.built)
		}
		ms.built[id] = b
		ms.mu.Unlock()
		rows, err := ms.st.SuiteRows(context.WithoutCancel(ctx), id) // the waiting readers share it: one leaving does not stop it
		if err == nil {
			b.matrix = NewMatrix(id, rows)
		}
		b.err = err
		close(b.done)
	} else {
		ms.mu.Unlock()
	}
	select {
	case <-b.done:
		return b, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Matrix returns suite id's matrix (with no rows when nothing of it is
// indexed).
func (ms *Matrices) Matrix(ctx context.Context, id string) (*Matrix, error) {
	b, err := ms.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return b.matrix, nil
}

// View returns page n of suite id's matrix filtered by f, each row with its
// runs.
func (ms *Matrices) View(ctx context.Context, id string, f Filter, n int) (View, error) {
	b, err := ms.get(ctx, id)
	if err != nil {
		return View{}, err
	}
	v := View{Matrix: b.matrix, Filter: f}
	var rows []Row
	rows, v.Shown, v.Page, v.Pages = b.matrix.Page(f, n)
	k := pageKey{f, v.Page}
	ms.mu.Lock()
	cached, ok := b.pages[k]
	ms.mu.Unlock()
	if ok {
		v.Rows = cached
		return v, nil
	}
	if v.Rows, err = ms.cells(ctx, b.matrix, rows); err != nil {
		return View{}, err
	}
	ms.mu.Lock()
	if len(b.pages) >= 64 {
		clear(b.pages)
	}
	b.pages[k] = v.Rows
	ms.mu.Unlock()
	return v, nil
}

// All returns every row of suite id's matrix with its runs.
func (ms *Matrices) All(ctx context.Context, id string) (*Matrix, []RowCells, error) {
	m, err := ms.Matrix(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	rows, err := ms.cells(ctx, m, m.Rows)
	return m, rows, err
}

// cells reads the runs of rows (all of the suite's when rows are all its
// rows) and lays them out by repeat.
func (ms *Matrices) cells(ctx context.Context, m *Matrix, rows []Row) ([]RowCells, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	var scenarios []string
	if len(rows) < len(m.Rows) {
		for _, r := range rows {
			if !slices.Contains(scenarios, r.Scenario) {
				scenarios = append(scenarios, r.Scenario)
			}
		}
	}
	cells, err := ms.st.SuiteCells(ctx, m.Suite, scenarios...)
	if err != nil {
		return nil, err
	}
	type key struct{ scenario, agent, model string }
	at := make(map[key]int, len(rows))
	out := make([]RowCells, len(rows))
	for i, r := range rows {
		at[key{r.Scenario, r.Agent, r.Model}] = i
		out[i] = RowCells{Row: r, Cells: make([]store.Cell, m.Repeats)}
	}
	for _, c := range cells {
		i, ok := at[key{c.Scenario, c.Agent, c.Model}]
		if ok && c.Repeat >= 1 && c.Repeat <= len(out[i].Cells) {
			out[i].Cells[c.Repeat-1] = c
		}
	}
	return out, nil
}

// Results are a suite's matrix as the API gives it: every row with its
// runs, and whether the suite is done.
type Results struct {
	Suite string      `json:"suite"`
	Done  bool        `json:"done"`
	Rows  []ResultRow `json:"rows"`
	total int
}

// ResultRow is a row of Results.
type ResultRow struct {
	Scenario string       `json:"scenario"`
	Agent    string       `json:"agent"`
	Model    string       `json:"model"`
	Runs     int          `json:"runs"`
	Passed   int          `json:"passed"`
	PassK    bool         `json:"pass_k"`
	Flaky    bool         `json:"flaky"`
	Cells    []ResultCell `json:"cells"`
}

// ResultCell is a run of a ResultRow.
type ResultCell struct {
	RunID   string        `json:"run_id"`
	Repeat  int           `json:"repeat"`
	Status  bundle.Status `json:"status"`
	Passed  bool          `json:"passed"`
	Broken  bool          `json:"broken"`
	Aborted string        `json:"aborted,omitempty"`
}

// Empty reports whether nothing of the suite is indexed.
func (r Results) Empty() bool { return r.total == 0 }

// Results are suite id's results. The suite is done when it has runs, every
// one has its verdict, and none of waiting (its runs queued to start) is
// left.
func (ms *Matrices) Results(ctx context.Context, id string, waiting int) (Results, error) {
	m, rows, err := ms.All(ctx, id)
	if err != nil {
		return Results{}, err
	}
	out := Results{Suite: id, Done: m.Total > 0 && m.Running == 0 && waiting == 0, Rows: make([]ResultRow, 0, len(rows)), total: m.Total}
	for _, r := range rows {
		jr := ResultRow{Scenario: r.Scenario, Agent: r.Agent, Model: r.Model, Runs: r.Runs, Passed: r.Passed, PassK: r.PassK(), Flaky: r.Flaky(), Cells: []ResultCell{}}
		for _, c := range r.Cells {
			if c.RunID == "" {
				continue
			}
			out.Done = out.Done && c.HasVerdict // the cells are read now; the counts may be a second old
			jr.Cells = append(jr.Cells, ResultCell{RunID: c.RunID, Repeat: c.Repeat, Status: c.Status, Passed: c.Passed, Broken: c.Broken, Aborted: c.Aborted})
		}
		out.Rows = append(out.Rows, jr)
	}
	return out, nil
}
