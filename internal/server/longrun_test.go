package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

// A long run's page opens on its newest work: the last 100 messages of its
// transcript and the last 300 events of its timeline, each after a loader
// of what comes before (a link that shows everything without JavaScript);
// each loader's part comes with the loader of the part before it, down to
// the first message and event. A search shows every match.
func TestALongRunsPageOpensOnItsNewestWork(t *testing.T) {
	s, root := newServer(t, true)
	const id = "20261201-113020-z8c1rd"
	dir := filepath.Join(root, "runs", id)
	var tr, ev strings.Builder
	tr.WriteString("# Run " + id + "\n\n")
	for i := range 250 {
		fmt.Fprintf(&tr, "## assistant\n\nmessage m%03d\n\n", i)
	}
	for i := range 700 {
		fmt.Fprintf(&ev, `{"seq":%d,"time":"2026-12-01T11:30:22Z","type":"conversation.turn","data":{"turn":%d,"of":700,"note":"e%03d"}}`+"\n", i+1, i+1, i)
	}
	if os.WriteFile(filepath.Join(dir, bundle.TranscriptFile), []byte(tr.String()), 0o644) != nil || os.WriteFile(filepath.Join(dir, bundle.EventsFile), []byte(ev.String()), 0o644) != nil {
		t.Fatal("write the long run")
	}
	shows := func(body string, first, last int, mark string) bool {
		return strings.Contains(body, fmt.Sprintf(mark, first)) && strings.Contains(body, fmt.Sprintf(mark, last)) &&
			(first == 0 || !strings.Contains(body, fmt.Sprintf(mark, first-1)))
	}
	page := get(t, s, "/runs/"+id).Body.String()
	for _, want := range []string{
		`Show 150 earlier messages`, `hx-get="/runs/` + id + `/transcript?upto=150"`, `href="/runs/` + id + `?all=1#transcript"`,
		`Show 400 earlier events`, `hx-get="/runs/` + id + `/timeline?upto=400"`, `href="/runs/` + id + `?all=1#timeline"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if !shows(page, 150, 249, "m%03d") || !shows(page, 400, 699, "e%03d") {
		t.Error("the page does not open on the last 100 messages and 300 events")
	}
	for _, tc := range []struct {
		target               string
		first, last          int
		mark, loader, noMore string
	}{
		{"/transcript?upto=150", 50, 149, "m%03d", "Show 50 earlier messages", ""},
		{"/transcript?upto=50", 0, 49, "m%03d", "", "earlier message"},
		{"/timeline?upto=400", 100, 399, "e%03d", "Show 100 earlier events", ""},
		{"/timeline?upto=100", 0, 99, "e%03d", "", "earlier event"},
	} {
		rec := get(t, s, "/runs/"+id+tc.target, "HX-Request", "true")
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !shows(body, tc.first, tc.last, tc.mark) || !strings.Contains(body, tc.loader) ||
			(tc.noMore != "" && strings.Contains(body, tc.noMore)) || strings.Contains(body, fmt.Sprintf(tc.mark, tc.last+1)) {
			t.Errorf("%s: %d, not %s %d to %d with %q:\n%.400s", tc.target, rec.Code, tc.mark, tc.first, tc.last, tc.loader, body)
		}
	}
	all := get(t, s, "/runs/"+id+"?all=1").Body.String()
	if !shows(all, 0, 249, "m%03d") || !shows(all, 0, 699, "e%03d") || strings.Contains(all, "earlier message") {
		t.Error("?all=1 does not show everything")
	}
	if found := get(t, s, "/runs/"+id+"?find=m007").Body.String(); !strings.Contains(found, "m007") {
		t.Error("a search does not find a message before the page's part")
	}
	for _, bad := range []string{"/transcript?upto=-1", "/transcript?upto=x", "/timeline", "/../transcript?upto=1"} {
		if rec := get(t, s, "/runs/"+id+bad); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, rec.Code)
		}
	}
}

// A run's calls page lists every recorded call; each request opens alone,
// byte for byte as the agent sent it — rebuilt from its pieces in a
// bundle of now, as recorded in an older one.
func TestARunsCallsOpenOneRequestAtATime(t *testing.T) {
	s, root := newServer(t, true)
	const id = "20261201-113020-z8c1rd" // recorded in pieces
	page := get(t, s, "/runs/"+id).Body.String()
	if !strings.Contains(page, `href="/runs/`+id+`/calls" id="calls-link"`) {
		t.Fatal("the run page does not link to its calls")
	}
	calls := get(t, s, "/runs/"+id+"/calls")
	for _, want := range []string{`id="call-1"`, `id="call-2"`, `href="/runs/` + id + `/calls/2/request"`, "model call", "answered"} {
		if calls.Code != http.StatusOK || !strings.Contains(calls.Body.String(), want) {
			t.Errorf("the calls page (%d) lacks %s", calls.Code, want)
		}
	}
	log, _, err := bundle.ReadExchanges(filepath.Join(root, "runs", id), bundle.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := log.Request(1)
	rec := get(t, s, "/runs/"+id+"/calls/2/request")
	if rec.Code != http.StatusOK || rec.Body.String() != string(want) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("request 2: %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if !strings.Contains(rec.Body.String(), `"role":"tool","tool_call_id":"call_1"`) {
		t.Errorf("request 2 is not the whole conversation: %s", rec.Body)
	}
	// An older bundle's request, recorded whole.
	if rec := get(t, s, "/runs/20261201-093012-k3f9qa/calls/1/request"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"model"`) {
		t.Errorf("an older bundle's request: %d %s", rec.Code, rec.Body)
	}
	for _, bad := range []string{"/runs/" + id + "/calls/9/request", "/runs/" + id + "/calls/0/request", "/runs/" + id + "/calls/x/request", "/runs/nope/calls", "/runs/nope/calls/1/request"} {
		if rec := get(t, s, bad); rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, rec.Code)
		}
	}
}
