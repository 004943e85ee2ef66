package server_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// A reviewer keeps a run as a regression scenario from its page: the
// scenario is made in the dashboard's scenario folder, audited, listed on
// the Suites page with a link to the run it was made from, and runs there.
// A bad name, or a folder that is taken, makes nothing and says why.
func TestMakeAScenarioFromARunPage(t *testing.T) {
	roots := t.TempDir()
	if out, err := exec.Command("cp", "-a", "../../examples/scenarios/rename-config-key", roots).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	data, start := restartable(t, roots)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	_, q, ts := start(ctx)
	defer func() { ts.Close(); stop(); q.Wait(context.Background()) }()
	b := newBrowser(t, ts.URL)
	b.get("/suites")
	resp, _ := b.post("/suites", url.Values{"csrf": {b.token()}, "scenarios": {"rename-config-key"}, "repeat": {"1"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("launch the suite: %d", resp.StatusCode)
	}
	id := firstRun(t, data)
	if rc := endedRun(t, data, id); rc.Status != bundle.StatusPassed {
		t.Fatalf("the run: %+v", rc)
	}
	// The page shows the run as indexed, which follows its receipt.
	testutil.Eventually(t, 10*time.Second, "Make a scenario and Continue as a session on the run page", func() bool {
		_, page := b.get("/runs/" + id)
		return strings.Contains(page, `id="make-scenario"`) && strings.Contains(page, `value="from-`+id+`"`) && strings.Contains(page, `id="continue-as-session"`)
	})
	resp, page := b.post("/runs/"+id+"/scenario", url.Values{"csrf": {b.token()}, "name": {"kept-rename"}})
	if resp.StatusCode != http.StatusCreated || !strings.Contains(page, `id="scenario-made"`) {
		t.Fatalf("make a scenario: %d\n%s", resp.StatusCode, page)
	}
	if _, err := os.Stat(filepath.Join(roots, "kept-rename", "scenario.yaml")); err != nil {
		t.Fatalf("no scenario in the scenario folder: %v", err)
	}
	if _, page := b.get("/suites"); !strings.Contains(page, `id="scenario-kept-rename"`) || !strings.Contains(page, `href="/runs/`+id+`"`) {
		t.Fatalf("the Suites page does not list the scenario with its run")
	}
	if _, page := b.get("/audit"); !strings.Contains(page, "scenario from") {
		t.Errorf("the audit log does not name the scenario made")
	}
	for _, name := range []string{"kept-rename", "bad name", "../escape", ""} {
		resp, page := b.post("/runs/"+id+"/scenario", url.Values{"csrf": {b.token()}, "name": {name}})
		if resp.StatusCode == http.StatusCreated || !strings.Contains(page, "No scenario was made") {
			t.Errorf("name %q: %d", name, resp.StatusCode)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(roots), "escape")); err == nil {
		t.Error("a scenario was made outside the scenario folder")
	}
	if resp, _ := b.post("/suites", url.Values{"csrf": {b.token()}, "scenarios": {"kept-rename"}, "repeat": {"1"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("run the made scenario: %d", resp.StatusCode)
	}
	testutil.Eventually(t, 20*time.Second, "the made scenario's run to pass", func() bool {
		entries, _ := os.ReadDir(filepath.Join(data, "runs"))
		for _, e := range entries {
			rb, err := bundle.ReadRun(filepath.Join(data, "runs", e.Name()), bundle.DefaultLimits())
			if err == nil && rb.Receipt.Scenario != nil && rb.Receipt.Scenario.ID == "kept-rename" && rb.Receipt.EndedAt != nil {
				if rb.Receipt.Status != bundle.StatusPassed {
					t.Fatalf("the made scenario's run: %+v", rb.Receipt)
				}
				return true
			}
		}
		return false
	})
}

// A scenario run that has ended goes on as a session from its page: the
// session works on the run's workspace, writes into no source folder (so
// never into the scenario's fixture), and its Continue launches the next
// run from where the scenario left it. Asking twice names the same session.
func TestContinueAScenarioRunAsASession(t *testing.T) {
	data, start := restartable(t, "../../examples/scenarios")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	_, q, ts := start(ctx)
	defer func() { ts.Close(); stop(); q.Wait(context.Background()) }()
	b := newBrowser(t, ts.URL)
	b.get("/suites")
	b.post("/suites", url.Values{"csrf": {b.token()}, "scenarios": {"rename-config-key"}, "repeat": {"1"}})
	id := firstRun(t, data)
	endedRun(t, data, id)
	for range 2 {
		resp, _ := b.post("/runs/"+id+"/session", url.Values{"csrf": {b.token()}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions/sess-"+id {
			t.Fatalf("continue as a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	raw, err := os.ReadFile(filepath.Join(data, "sessions", "sess-"+id+".json"))
	if err != nil || strings.Contains(string(raw), `"source"`) {
		t.Fatalf("the session names a source folder its runs would write into: %s %v", raw, err)
	}
	if resp, page := b.get("/sessions/sess-" + id); resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="continue-form"`) {
		t.Fatalf("the session's page: %d", resp.StatusCode)
	}
	if _, page := b.get("/runs/" + id); strings.Contains(page, `id="continue-as-session"`) {
		t.Error("the run page still offers to continue a run that is in a session")
	}
	resp, page := b.post("/sessions/sess-"+id+"/continue", url.Values{"csrf": {b.token()}, "task": {"Also rename it in the README."}, "model": {"builtin:notes"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("continue the session: %d\n%.3000s", resp.StatusCode, page)
	}
	next := strings.TrimPrefix(resp.Header.Get("Location"), "/runs/")
	if rc := endedRun(t, data, next); rc.SessionID != "sess-"+id || rc.Status == bundle.StatusError {
		t.Fatalf("the session's next run: %+v", rc)
	}
}

// firstRun is the id of the first run of data, once it is there.
func firstRun(t *testing.T, data string) string {
	t.Helper()
	var id string
	testutil.Eventually(t, 20*time.Second, "the suite's run", func() bool {
		entries, _ := os.ReadDir(filepath.Join(data, "runs"))
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				id = e.Name()
			}
		}
		return id != ""
	})
	return id
}
