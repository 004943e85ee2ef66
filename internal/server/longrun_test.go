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
