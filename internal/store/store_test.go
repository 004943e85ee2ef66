package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
)

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestOpenRefusesAFileThatIsNotSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proctor.db")
	content := []byte("these are my notes, not a database\n")
	os.WriteFile(path, content, 0o644)
	_, err := store.Open(context.Background(), path)
	if !errors.Is(err, store.ErrNotSQLite) {
		t.Fatalf("err = %v, want ErrNotSQLite", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "left untouched") {
		t.Errorf("message does not name the file or say it was kept: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
		t.Fatal("the file was modified")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("a WAL file was created beside it")
	}
}

func TestOpenRefusesADatabaseFromANewerProctor(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "proctor.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Pretend a newer proctor applied a migration this one does not know.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99990101000000, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	db.Close()
	before, _ := os.ReadFile(path)

	_, err = store.Open(ctx, path)
	if !errors.Is(err, store.ErrTooNew) {
		t.Fatalf("err = %v, want ErrTooNew", err)
	}
	if !strings.Contains(err.Error(), "99990101000000") {
		t.Errorf("message does not give the version: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the database file was modified")
	}
}

func TestInspectReportsMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "proctor.db")
	st, err := store.Inspect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 0 || st.Latest == 0 || len(st.Migrations) == 0 || st.Migrations[0].Applied {
		t.Fatalf("status of a missing database = %+v", st)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Inspect created the database")
	}
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err = store.Inspect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != st.Latest || !st.Migrations[len(st.Migrations)-1].Applied {
		t.Fatalf("status after Open = %+v", st)
	}
}

// run builds a valid run for the store.
func run(i int, status bundle.Status, kind bundle.Kind, model string) *bundle.Run {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	end := start.Add(30 * time.Second)
	r := bundle.Receipt{
		Schema: bundle.ReceiptSchema, RunID: fmt.Sprintf("run-%05d", i), Kind: kind, Status: status,
		Stage: bundle.StageCompleted, Task: fmt.Sprintf("task %d", i), Source: bundle.Source{Kind: "local", Path: "/src"},
		Model: bundle.Model{Name: model}, StartedAt: start, EndedAt: &end,
		Usage: bundle.Usage{TotalTokens: int64(100 * i)},
	}
	if kind == bundle.KindScenario {
		r.Scenario = &bundle.ScenarioRef{ID: fmt.Sprintf("scn-%d", i%3), Repeat: 1}
	}
	return &bundle.Run{Dir: "/bundles/runs/" + r.RunID, Receipt: r, Transcript: fmt.Sprintf("## user\n\ntask %d about widgets\n", i)}
}

func apply(t testing.TB, st *store.Store, runs ...*bundle.Run) {
	t.Helper()
	var ups []store.BundleUpdate
	for _, r := range runs {
		ups = append(ups, store.BundleUpdate{Path: r.Dir, Kind: store.BundleRun, Fingerprint: "fp", Run: r})
	}
	if err := st.ApplyBundles(context.Background(), ups, nil); err != nil {
		t.Fatal(err)
	}
}

func TestListRunsFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var runs []*bundle.Run
	for i := range 30 {
		status := bundle.StatusPassed
		if i%5 == 0 {
			status = bundle.StatusFailed
		}
		kind := bundle.KindTask
		if i%2 == 0 {
			kind = bundle.KindScenario
		}
		model := "alpha"
		if i >= 20 {
			model = "beta"
		}
		runs = append(runs, run(i, status, kind, model))
	}
	runs[7].Transcript = "## user\n\nthe zebra crossing\n"
	apply(t, st, runs...)

	tests := []struct {
		name   string
		filter store.RunFilter
		want   int
	}{
		{"all", store.RunFilter{Limit: 500}, 30},
		{"status", store.RunFilter{Status: "failed"}, 6},
		{"kind", store.RunFilter{Kind: "scenario"}, 15},
		{"model", store.RunFilter{Model: "beta"}, 10},
		{"scenario", store.RunFilter{Scenario: "scn-1"}, 5},
		{"combined", store.RunFilter{Status: "failed", Kind: "scenario", Model: "alpha"}, 2},
		{"search", store.RunFilter{Query: "zebra"}, 1},
		{"search with FTS syntax", store.RunFilter{Query: `"zebra OR NEAR( *`}, 0},
		{"search and filter", store.RunFilter{Query: "widgets", Model: "beta"}, 10},
		{"no match", store.RunFilter{Status: "queued"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := st.ListRuns(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Runs) != tc.want {
				t.Fatalf("got %d runs, want %d", len(page.Runs), tc.want)
			}
		})
	}

	// Keyset pagination walks every run once, newest first.
	var seen []string
	f := store.RunFilter{Limit: 7}
	for pages := 0; ; pages++ {
		page, err := st.ListRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			seen = append(seen, r.RunID)
		}
		if page.Next == "" {
			if pages != 4 {
				t.Fatalf("took %d pages, want 5", pages+1)
			}
			break
		}
		f.After = page.Next
	}
	if len(seen) != 30 || seen[0] != "run-00029" || seen[29] != "run-00000" {
		t.Fatalf("paged through %d runs: first %s last %s", len(seen), seen[0], seen[len(seen)-1])
	}

	if _, err := st.ListRuns(ctx, store.RunFilter{After: "bm90LWEtY3Vyc29y"}); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("forged cursor: err = %v", err)
	}
	page, _ := st.ListRuns(ctx, store.RunFilter{Query: "zebra"})
	if !strings.Contains(page.Runs[0].Snippet, "«zebra»") {
		t.Errorf("snippet = %q", page.Runs[0].Snippet)
	}
	facets, err := st.RunFacets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(facets.Models, ",") != "alpha,beta" || strings.Join(facets.Scenarios, ",") != "scn-0,scn-1,scn-2" {
		t.Errorf("facets = %+v", facets)
	}
}

func TestApplyBundlesReplacesAndForgets(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	r := run(1, bundle.StatusAwaitingReview, bundle.KindTask, "m")
	apply(t, st, r)
	got, err := st.GetRun(ctx, r.Receipt.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ReviewState != "pending" {
		t.Fatalf("review state = %s", got.ReviewState)
	}
	// The run is reviewed: indexing the new receipt replaces the row.
	r.Receipt.Status = bundle.StatusPassed
	r.Receipt.Review = &bundle.Review{Approved: true, ReviewedBy: "ana", ReviewedAt: time.Now(), HasDiff: true}
	apply(t, st, r)
	got, _ = st.GetRun(ctx, r.Receipt.RunID)
	if got.ReviewState != "approved" || got.Receipt.Review.ReviewedBy != "ana" {
		t.Fatalf("after review: %+v", got.RunSummary)
	}
	// The bundle becomes unreadable: the run row goes, a problem stays.
	if err := st.ApplyBundles(ctx, []store.BundleUpdate{{Path: r.Dir, Kind: store.BundleRun, Fingerprint: "x",
		Problems: bundle.Problems{{File: r.Dir + "/run.json", Message: "invalid JSON"}}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GetRun(ctx, r.Receipt.RunID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run still there: %v", err)
	}
	probs, _ := st.ListProblems(ctx)
	if len(probs) != 1 || probs[0].Message != "invalid JSON" {
		t.Fatalf("problems = %+v", probs)
	}
	// The bundle is deleted: everything about it is forgotten.
	if err := st.ApplyBundles(ctx, nil, []string{r.Dir}); err != nil {
		t.Fatal(err)
	}
	if snap, err := st.Snapshot(ctx); err != nil || len(snap) != 0 {
		t.Fatalf("rows left after forgetting: %v %v", snap, err)
	}
	// Searching finds nothing stale in the full-text index.
	page, _ := st.ListRuns(ctx, store.RunFilter{Query: "widgets"})
	if len(page.Runs) != 0 {
		t.Fatalf("search found %d forgotten runs", len(page.Runs))
	}
}

func TestDuplicateRunIDIsRefused(t *testing.T) {
	st := openStore(t)
	a := run(1, bundle.StatusPassed, bundle.KindTask, "m")
	apply(t, st, a)
	b := run(1, bundle.StatusPassed, bundle.KindTask, "m")
	b.Dir = "/elsewhere/runs/" + b.Receipt.RunID
	err := st.ApplyBundles(context.Background(), []store.BundleUpdate{{Path: b.Dir, Kind: store.BundleRun, Fingerprint: "fp", Run: b}}, nil)
	if !errors.Is(err, store.ErrDuplicateRun) {
		t.Fatalf("err = %v, want ErrDuplicateRun", err)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	r := run(1, bundle.StatusPassed, bundle.KindTask, "m")
	r.Receipt.SessionID = "s1"
	apply(t, st, r)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s := &bundle.Session{Schema: bundle.SessionSchema, SessionID: "s1", Title: "t", CreatedAt: now, UpdatedAt: now, Runs: []string{r.Receipt.RunID, "run-missing"}}
	if err := st.ApplyBundles(ctx, []store.BundleUpdate{{Path: "/b/sessions/s1.json", Kind: store.BundleSession, Fingerprint: "f", Session: s}}, nil); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListSessions(ctx, "", 10)
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("sessions = %+v, %v", page, err)
	}
	d, err := st.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 2 || d.Runs[0].Run == nil || d.Runs[0].Run.Task != "task 1" || d.Runs[1].Run != nil {
		t.Fatalf("session runs = %+v", d.Runs)
	}
	if _, err := st.GetSession(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
}

func TestDateRangeAndOldestFirst(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var runs []*bundle.Run
	for i := range 10 {
		runs = append(runs, run(i*60*24, bundle.StatusPassed, bundle.KindTask, "m")) // one a day from 2026-11-01
	}
	apply(t, st, runs...)
	from := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)
	page, err := st.ListRuns(ctx, store.RunFilter{From: from, To: to})
	if err != nil || len(page.Runs) != 3 || page.Runs[0].RunID != "run-05760" {
		t.Fatalf("%v %+v", err, page.Runs)
	}
	var ids []string
	f := store.RunFilter{Oldest: true, Limit: 4}
	for {
		page, err := st.ListRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			ids = append(ids, r.RunID)
		}
		if page.Next == "" {
			break
		}
		f.After = page.Next
	}
	if len(ids) != 10 || ids[0] != "run-00000" || ids[9] != "run-12960" {
		t.Fatalf("oldest first: %v", ids)
	}
}

// Processes that open a new database at once each see it migrated once.
func TestConcurrentOpensOfANewDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "proctor.db")
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			st, err := store.Open(context.Background(), path)
			if err == nil {
				st.Close()
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// An audit entry of a journaled operation is written once, however often a
// recovery records it.
func TestAuditEntryWithAnOpIsWrittenOnce(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	for range 3 {
		if err := st.Audit(ctx, store.AuditEntry{Actor: "ana", Action: "approve", Object: "r1", Op: "op-1"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := st.Audit(ctx, store.AuditEntry{Actor: "ana", Action: "signin"}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _, err := st.ListAudit(ctx, 0, 10)
	if err != nil || len(entries) != 3 {
		t.Fatalf("%d entries, want 1 approve and 2 sign-ins: %v", len(entries), err)
	}
}

// Page 2 of the runs list once offered only "« First page". Paging back
// with Prev gives the pages seen going forward, newest first and oldest
// first; the first page has no Prev.
func TestPagingBackGivesThePagesBefore(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var runs []*bundle.Run
	for i := range 23 {
		runs = append(runs, run(i, bundle.StatusPassed, bundle.KindTask, "alpha"))
	}
	apply(t, st, runs...)
	ids := func(p store.RunPage) string {
		var out []string
		for _, r := range p.Runs {
			out = append(out, r.RunID)
		}
		return strings.Join(out, ",")
	}
	for _, oldest := range []bool{false, true} {
		var forward []store.RunPage
		f := store.RunFilter{Limit: 5, Oldest: oldest}
		for {
			page, err := st.ListRuns(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			forward = append(forward, page)
			if page.Next == "" {
				break
			}
			f.After = page.Next
		}
		if forward[0].Prev != "" || forward[1].Prev == "" {
			t.Fatalf("oldest=%v: first page Prev %q, second %q", oldest, forward[0].Prev, forward[1].Prev)
		}
		for i := len(forward) - 1; i > 0; i-- {
			back, err := st.ListRuns(ctx, store.RunFilter{Limit: 5, Oldest: oldest, Before: forward[i].Prev})
			if err != nil {
				t.Fatal(err)
			}
			if ids(back) != ids(forward[i-1]) || (i == 1) != (back.Prev == "") || back.Next == "" {
				t.Fatalf("oldest=%v: back from page %d gave %s (prev %q), want %s", oldest, i+1, ids(back), back.Prev, ids(forward[i-1]))
			}
		}
	}
}

func TestSuiteCellsCarryTheScenarioTags(t *testing.T) {
	st := openStore(t)
	tagged, plain := run(1, bundle.StatusPassed, bundle.KindScenario, "m"), run(2, bundle.StatusPassed, bundle.KindScenario, "m")
	tagged.Receipt.Scenario.Suite, tagged.Receipt.Scenario.Tags = "suite-a", []string{"go", "slow"}
	plain.Receipt.Scenario.Suite = "suite-a"
	apply(t, st, tagged, plain)
	cells, err := st.SuiteCells(context.Background(), "suite-a")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cells {
		got[c.RunID] = strings.Join(c.Tags, ",")
	}
	if got["run-00001"] != "go,slow" || got["run-00002"] != "" || len(got) != 2 {
		t.Fatalf("tags by run: %v", got)
	}
}

func TestRunsAreFilteredAndCellsKeyedByAgent(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	native, codex := run(1, bundle.StatusPassed, bundle.KindScenario, "m"), run(2, bundle.StatusPassed, bundle.KindScenario, "m")
	native.Receipt.Scenario.Suite, codex.Receipt.Scenario.Suite = "suite-a", "suite-a"
	codex.Receipt.Agent = &bundle.Agent{Kind: "codex", Name: "codex", Version: "codex-cli 0.1"}
	apply(t, st, native, codex)
	page, err := st.ListRuns(ctx, store.RunFilter{Agent: "codex"})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != "run-00002" || page.Runs[0].Agent != "codex" {
		t.Fatalf("runs of codex: %+v %v", page.Runs, err)
	}
	f, err := st.RunFacets(ctx)
	if err != nil || strings.Join(f.Agents, ",") != "codex,native" {
		t.Fatalf("agent facets %v %v", f.Agents, err)
	}
	cells, err := st.SuiteCells(ctx, "suite-a")
	if err != nil || len(cells) != 2 || cells[0].Agent != "native" || cells[1].Agent != "codex" {
		t.Fatalf("cells %+v %v", cells, err)
	}
}
