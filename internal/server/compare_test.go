package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/auth"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/suite"
)

// indexSuite indexes a run of each result ("pass" or "fail") of scenario
// as suite id.
func indexSuite(t testing.TB, st *store.Store, id, scenario string, results ...string) {
	t.Helper()
	var ups []store.BundleUpdate
	for i, res := range results {
		start := time.Date(2026, 12, 1, 0, 0, i, 0, time.UTC)
		end := start.Add(20 * time.Second)
		r := &bundle.Run{Dir: "/bundles/" + id + "/" + scenario + fmt.Sprint(i), Receipt: bundle.Receipt{Schema: bundle.ReceiptSchema,
			RunID: fmt.Sprintf("%s-%s-%d", id, scenario, i+1), Kind: bundle.KindScenario, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
			Task: "t", Source: bundle.Source{Kind: bundle.SourceLocal, Path: "/src"}, Model: bundle.Model{Name: "gpt-4o"}, StartedAt: start, EndedAt: &end,
			Usage:    bundle.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100},
			Scenario: &bundle.ScenarioRef{ID: scenario, Repeat: i + 1, Suite: id}},
			Verdict: &bundle.Verdict{Schema: bundle.VerdictSchema, Scenario: scenario, Passed: res == "pass"}}
		if res != "pass" {
			r.Receipt.Status, r.Verdict.FirstFailure = bundle.StatusFailed, "tests-pass"
		}
		ups = append(ups, store.BundleUpdate{Path: r.Dir, Kind: store.BundleRun, Fingerprint: "f", Run: r})
	}
	if err := st.ApplyBundles(context.Background(), ups, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCompareSuitesPageAndAPI(t *testing.T) {
	s, _, st := newServerWith(t, false, server.Config{Key: testKey})
	for i := range 60 {
		sc := fmt.Sprintf("scn-%02d", i)
		head := "pass"
		if i == 42 {
			head = "fail"
		}
		indexSuite(t, st, "suite-old", sc, "pass", "pass")
		indexSuite(t, st, "suite-new", sc, head, head)
	}

	rec := get(t, s, "/compare?base=suite-old&head=suite-new")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("compare: %d %s", rec.Code, body)
	}
	first := strings.Index(body, `data-class="`)
	for _, want := range []string{"1 regressed", `data-class="regressed" data-scenario="scn-42"`, "tests-pass", `href="/runs/suite-old-scn-42-1"`, `href="/runs/suite-new-scn-42-1"`,
		"2/2 (100%, 34–100%)", "0/2 (0%, 0–66%)", "page 1 of 2", "regressed <span class=\"count\">1</span>", `href="/api/v1/compare?base=suite-old&amp;head=suite-new"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if first < 0 || !strings.HasPrefix(body[first:], `data-class="regressed"`) {
		t.Errorf("the first row is not the regression")
	}

	rec = get(t, s, "/api/v1/compare?base=suite-old&head=suite-new&page=2")
	var got suite.CompareJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("API: %d %v %s", rec.Code, err, rec.Body)
	}
	if got.Page != 2 || got.Pages != 2 || len(got.Rows) != 10 || got.Classes["regressed"] != 1 || !got.Fails["regression"] || got.Totals.Head.PassK != 59 ||
		got.Totals.Base.CostUSD == nil || got.Totals.Base.Tokens != 132000 {
		t.Fatalf("API page 2: %+v", got)
	}

	// What each suite cost: 120 runs of 1,000 prompt and 100 completion
	// tokens at gpt-4o's built-in $2.50 and $10 a million.
	if page := get(t, s, "/suites").Body.String(); strings.Count(page, `<td class="num">$0.42</td>`) != 2 {
		t.Errorf("the suites list does not show each suite's cost, $0.42")
	}
	page := get(t, s, "/suites/suite-old").Body.String()
	for _, want := range []string{"cost $0.42", `id="models-table"`, "<td>native</td><td>gpt-4o</td><td class=\"num\">120/120 (100%, 97–100%)</td><td class=\"num\">60 of 60</td><td class=\"num\">$0.0035</td><td class=\"num\">$0.42</td><td class=\"num\">20.0s</td><td class=\"num\">1,100</td>",
		`id="cost-chart"`, "<title>native · gpt-4o: 120/120 (100%, 97–100%) at $0.0035 a run</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the suite page lacks %q", want)
		}
	}
	page = get(t, s, "/scenarios/scn-42").Body.String()
	if !strings.Contains(page, `id="scenario-suites"`) || strings.Count(page, `class="mono small">suite-`) != 2 || !strings.Contains(page, "0/2 (0%, 0–66%)") {
		t.Errorf("the scenario page does not show its recent suites")
	}

	// A read-only link to the suite: its matrix, paged, its runs not linked.
	rec = send(s, withCSRF(formPost("/suites/suite-new/share", url.Values{"expires": {"24h"}})))
	link := regexp.MustCompile(`/share/psl_[A-Za-z0-9_-]+`).FindString(rec.Body.String())
	if rec.Code != http.StatusCreated || link == "" || !strings.Contains(rec.Body.String(), "not its runs") {
		t.Fatalf("share the suite: %d %q", rec.Code, link)
	}
	shared := get(t, s, link).Body.String()
	for _, want := range []string{`id="export-suite">suite-new`, `data-scenario="scn-42"`, `href="?page=2"`, "pass^k: 59 of 60", `id="models-table"`} {
		if !strings.Contains(shared, want) {
			t.Errorf("the shared suite lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", `href="/runs/`, "<form"} {
		if strings.Contains(shared, bad) {
			t.Errorf("the shared suite holds %q", bad)
		}
	}
	if page2 := get(t, s, link+"?page=2").Body.String(); !strings.Contains(page2, "page 2 of 2") {
		t.Errorf("the shared suite's second page")
	}

	// Set a baseline from the suite page, then compare with it by name.
	rec = send(s, withCSRF(formPost("/suites/suite-old/baseline", url.Values{"name": {"main"}})))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("set baseline: %d %s", rec.Code, rec.Body)
	}
	if page := get(t, s, "/suites/suite-old").Body.String(); !strings.Contains(page, "baseline main") || !strings.Contains(page, `href="/compare?head=suite-old"`) {
		t.Fatalf("the suite page does not say it is the baseline main")
	}
	if rec = get(t, s, "/compare?base=main&head=suite-new&class=regressed"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "The base is the baseline") ||
		strings.Count(rec.Body.String(), `data-class="`) != 1 {
		t.Fatalf("by baseline name: %d", rec.Code)
	}

	bad := []struct {
		target string
		status int
		want   string
	}{
		{"/compare", http.StatusOK, "Compare two suites"},
		{"/compare", http.StatusOK, `<option value="main" selected>`}, // the baseline set last is the base
		{"/compare?head=suite-new", http.StatusOK, `<option value="suite-new" selected>`},
		{"/compare?head=suite-new", http.StatusOK, `id="compare-problem">Pick the base: the suite (or baseline) to compare suite-new with.`},
		{"/compare?base=suite-old&head=", http.StatusOK, `id="compare-problem">Pick the head: the suite to compare with suite-old.`},
		{"/compare?base=&head=", http.StatusOK, `id="compare-problem">Pick the two suites`},
		// A comparison that cannot be made shows the form again with why,
		// the suites as they were picked.
		{"/compare?base=suite-old&head=suite-nope", http.StatusOK, `no run of suite suite-nope is indexed`},
		{"/compare?base=suite-old&head=suite-old", http.StatusOK, "the same suite"},
		{"/compare?base=suite-old&head=suite-old", http.StatusOK, `<option value="suite-old" selected>`},
		{"/compare?base=suite-old&head=suite-new&class=worse", http.StatusOK, "class: want one of regressed"},
		{"/compare?base=suite-old&head=suite-new&page=0", http.StatusOK, "page: want a page number from 1"},
		{"/compare?base=..%2Fetc&head=suite-new", http.StatusOK, "base: &#34;../etc&#34; is neither a baseline nor a suite id"},
		{"/api/v1/compare?base=suite-old", http.StatusBadRequest, `give the two suites`},
		{"/api/v1/compare?base=suite-old&head=suite-nope", http.StatusNotFound, `no run of suite suite-nope is indexed`},
		{"/api/v1/compare?base=suite-old&head=suite-new&class=x", http.StatusBadRequest, `class: want one of`},
	}
	for _, b := range bad {
		rec := get(t, s, b.target)
		if rec.Code != b.status || !strings.Contains(rec.Body.String(), b.want) {
			t.Errorf("%s: %d, want %d and %q; body %.600s", b.target, rec.Code, b.status, b.want, rec.Body.String()[max(strings.Index(rec.Body.String(), "<main"), 0):])
		}
	}
	for _, f := range []url.Values{{"name": {"../x"}}, {"name": {""}}} {
		if rec := send(s, withCSRF(formPost("/suites/suite-old/baseline", f))); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "Not set: baseline name") {
			t.Errorf("baseline %v: %d %s", f, rec.Code, rec.Body)
		}
	}
	if rec := send(s, withCSRF(formPost("/suites/suite-nope/baseline", url.Values{"name": {"x"}}))); rec.Code != http.StatusNotFound {
		t.Errorf("baseline of an unknown suite: %d", rec.Code)
	}
}

// withCSRF gives a form post the browser's CSRF cookie and its token.
func withCSRF(req *http.Request) *http.Request {
	req.AddCookie(&http.Cookie{Name: "proctor_csrf", Value: testCSRF})
	req.Header.Set("X-CSRF-Token", auth.CSRFToken(testKey, "browser:"+testCSRF))
	return req
}

func TestTwoRunsSideBySide(t *testing.T) {
	s, _ := newServer(t, true)
	const a, b = "20261201-093012-k3f9qa", "20261201-101544-m2x7pb"
	rec := get(t, s, "/compare/runs?a="+a+"&b="+b)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %.500s", rec.Code, body)
	}
	for _, want := range []string{`id="pair-runs"`, `href="/runs/` + a + `"`, `href="/runs/` + b + `"`, `id="pair-checks"`, `id="pair-diff"`, `id="turn-1"`, "Turn 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if page := get(t, s, "/runs/"+a).Body.String(); !strings.Contains(page, `<form method="get" action="/compare/runs" class="find" id="pair-form"><input type="hidden" name="a" value="`+a+`">`) {
		t.Error("a run's page has no form to compare it with another run")
	}
	for _, bad := range []struct {
		target string
		status int
		want   string
	}{
		{"/compare/runs?a=" + a, http.StatusBadRequest, `b: want a run id; got &#34;&#34;`},
		{"/compare/runs?a=..%2Fx&b=" + b, http.StatusBadRequest, `a: want a run id`},
		{"/compare/runs?a=" + a + "&b=nope", http.StatusNotFound, "run nope: not found"},
	} {
		if rec := get(t, s, bad.target); rec.Code != bad.status || !strings.Contains(rec.Body.String(), bad.want) {
			t.Errorf("%s: %d %.300s; want %d and %q", bad.target, rec.Code, rec.Body, bad.status, bad.want)
		}
	}
}

func TestARunExportsAsOneFile(t *testing.T) {
	s, _ := newServer(t, true)
	const id = "20261201-093012-k3f9qa"
	rec := get(t, s, "/runs/"+id+"/export.html")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Disposition"), `attachment; filename="proctor-run-`+id+`.html"`) {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	for _, want := range []string{`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
		"<style>", `id="transcript"`, `id="diff"`, "math.Round", `id="export-run">` + id} {
		if !strings.Contains(body, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", `src="`, `rel="stylesheet"`, `href="/static`} {
		if strings.Contains(body, bad) {
			t.Errorf("the file holds %q: it would load something", bad)
		}
	}
	if page := get(t, s, "/runs/"+id).Body.String(); !strings.Contains(page, `href="/runs/`+id+`/export.html" download id="export-link"`) {
		t.Error("the run page does not offer the file")
	}
	if rec := get(t, s, "/runs/nope/export.html"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown run: %d", rec.Code)
	}
}

// An exported file (and a run's share link, the same page) is read away
// from the dashboard: from file://, or by a reader who may not sign in.
// None of its links may go to the dashboard (scenario, suite, session,
// other runs, bundle files, lazily loaded diff files); only to places in
// the file itself.
func TestAnExportedRunLinksNowhereOutsideItself(t *testing.T) {
	s, _ := newServer(t, true)
	entries, err := os.ReadDir("../../testdata/bundles/runs")
	if err != nil {
		t.Fatal(err)
	}
	href := regexp.MustCompile(`(?:href|hx-get)="([^"]*)"`)
	for _, e := range entries {
		body := get(t, s, "/runs/"+e.Name()+"/export.html").Body.String()
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			if !strings.HasPrefix(m[1], "#") {
				t.Errorf("run %s: the file links to %q", e.Name(), m[1])
			}
		}
	}
}
