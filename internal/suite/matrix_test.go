package suite_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/store/storetest"
	"github.com/proctor-dev/proctor/internal/suite"
)

// indexCases indexes one run per result into st as suite id: "pass",
// "fail", "broken" (a broken check) or "running" (no verdict yet).
func indexCases(t *testing.T, st *store.Store, id, scenario string, tags []string, results ...string) {
	t.Helper()
	var ups []store.BundleUpdate
	for i, result := range results {
		r := bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: fmt.Sprintf("%s-%s-%d", id, scenario, i+1), Kind: bundle.KindScenario,
			Status: bundle.StatusPassed, Stage: bundle.StageCompleted, Task: "t", Source: bundle.Source{Kind: bundle.SourceLocal, Path: "/src"},
			Model: bundle.Model{Name: "m"}, StartedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC),
			Scenario: &bundle.ScenarioRef{ID: scenario, Repeat: i + 1, Suite: id, Tags: tags}}
		run := &bundle.Run{Dir: "/bundles/" + r.RunID}
		if result != "running" {
			run.Verdict = &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: result == "pass",
				Results: []bundle.CheckResult{{Phase: "post", Name: "c", Passed: result == "pass", Broken: result == "broken"}}}
			if result != "pass" {
				r.Status = bundle.StatusFailed
			}
		} else {
			r.Status, r.Stage = bundle.StatusRunning, bundle.StageRunning
		}
		run.Receipt = r
		ups = append(ups, store.BundleUpdate{Path: run.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: run})
	}
	if err := st.ApplyBundles(context.Background(), ups, nil); err != nil {
		t.Fatal(err)
	}
}

func openStore(t *testing.T) *store.Store { return storetest.New(t) }

func TestMatrixPutsWhatNeedsALookFirstAndPages(t *testing.T) {
	st := openStore(t)
	tags := map[string][]string{"b-fails": {"go"}, "c-flaky": {"go", "slow"}, "z-007": {"slow"}}
	add := func(scenario string, results ...string) {
		indexCases(t, st, "s1", scenario, tags[scenario], results...)
	}
	add("a-passes", "pass", "pass")
	add("b-fails", "fail", "fail")
	add("c-flaky", "pass", "fail")
	add("d-broken", "pass", "broken")
	add("e-running", "pass", "running")
	for i := range 120 {
		add(fmt.Sprintf("z-%03d", i), "pass", "pass")
	}
	indexCases(t, st, "other-suite", "b-fails", nil, "pass")
	ms := suite.NewMatrices(st)
	ctx := context.Background()
	m, err := ms.Matrix(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range m.Rows[:5] {
		order = append(order, r.Scenario)
	}
	if got := strings.Join(order, " "); got != "d-broken b-fails c-flaky a-passes e-running" {
		t.Fatalf("order %s", got)
	}
	tests := []struct {
		f           suite.Filter
		page        int
		first       string
		rows, shown int
		atPage      int
		pages       int
	}{
		{suite.Filter{}, 1, "d-broken", 50, 125, 1, 3},
		{suite.Filter{}, 3, "z-095", 25, 125, 3, 3},
		{suite.Filter{}, 9, "z-095", 25, 125, 3, 3}, // past the end: the last page
		{suite.Filter{}, -1, "d-broken", 50, 125, 1, 3},
		{suite.Filter{Status: "failing"}, 1, "d-broken", 3, 3, 1, 1},
		{suite.Filter{Status: "flaky"}, 1, "d-broken", 2, 2, 1, 1}, // a pass and a broken check are mixed results too
		{suite.Filter{Status: "running"}, 1, "e-running", 1, 1, 1, 1},
		{suite.Filter{Status: "broken"}, 1, "d-broken", 1, 1, 1, 1},
		{suite.Filter{Status: "passing"}, 1, "a-passes", 50, 122, 1, 3}, // with e-running: its one verdict passed
		{suite.Filter{Name: "Z-11"}, 1, "z-110", 10, 10, 1, 1},
		{suite.Filter{Name: "nothing"}, 1, "", 0, 0, 1, 1},
		{suite.Filter{Tag: "go"}, 1, "b-fails", 2, 2, 1, 1},
		{suite.Filter{Tag: "slow"}, 1, "c-flaky", 2, 2, 1, 1},
		{suite.Filter{Tag: "slow", Status: "passing"}, 1, "z-007", 1, 1, 1, 1},
		{suite.Filter{Tag: "nope"}, 1, "", 0, 0, 1, 1},
	}
	for _, tc := range tests {
		v, err := ms.View(ctx, "s1", tc.f, tc.page)
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		if len(v.Rows) > 0 {
			first = v.Rows[0].Scenario
		}
		if first != tc.first || len(v.Rows) != tc.rows || v.Shown != tc.shown || v.Page != tc.atPage || v.Pages != tc.pages {
			t.Errorf("%+v page %d: first %q, %d rows, %d shown, page %d of %d", tc.f, tc.page, first, len(v.Rows), v.Shown, v.Page, v.Pages)
		}
		for _, r := range v.Rows { // each row has its own runs, by repeat
			for i, c := range r.Cells {
				if want := fmt.Sprintf("s1-%s-%d", r.Scenario, i+1); c.RunID != want || c.Repeat != i+1 {
					t.Errorf("%s repeat %d: run %q, repeat %d; want %s", r.Scenario, i+1, c.RunID, c.Repeat, want)
				}
			}
		}
	}
	if got := strings.Join(m.Tags, " "); got != "go slow" {
		t.Errorf("tags of the suite: %q", got)
	}
	if m.Total != 250 || m.Running != 1 || m.Passed != 245 || m.AllPass != 122 || m.Repeats != 2 {
		t.Errorf("totals: %d runs, %d running, %d passed, pass^k %d, %d repeats", m.Total, m.Running, m.Passed, m.AllPass, m.Repeats)
	}
	_, all, err := ms.All(ctx, "s1")
	if err != nil || len(all) != 125 {
		t.Fatalf("every row: %d, %v", len(all), err)
	}
	if err := (suite.Filter{Status: "green"}).Check(); err == nil || !strings.Contains(err.Error(), `"green"`) {
		t.Errorf("an unknown status: %v", err)
	}
}

// Many readers of one suite at once wait for one count of it, and the count
// is kept until the index changes.
func TestAMatrixIsCountedOnceAtATimeAndKeptUntilTheIndexChanges(t *testing.T) {
	st := openStore(t)
	for i := range 200 {
		indexCases(t, st, "s1", fmt.Sprintf("sc-%03d", i), nil, "pass", "fail")
	}
	ms := suite.NewMatrices(st)
	ctx := context.Background()
	got := make([]*suite.Matrix, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			m, err := ms.Matrix(ctx, "s1")
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for i, m := range got {
		if m != got[0] {
			t.Fatalf("reader %d got a matrix of its own: the suite was counted more than once", i)
		}
	}
	time.Sleep(1100 * time.Millisecond) // past the floor of a second between counts
	if m, _ := ms.Matrix(ctx, "s1"); m != got[0] {
		t.Fatal("the suite was counted again though the index had not changed")
	}
	indexCases(t, st, "s1", "sc-new", nil, "pass")
	m, err := ms.Matrix(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if m == got[0] || len(m.Rows) != 201 || m.Total != 401 {
		t.Fatalf("after a run was indexed: %d rows, %d runs", len(m.Rows), m.Total)
	}
}
