package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/push"
	"github.com/proctor-dev/proctor/internal/store"
)

// simItem is one path a simulated pusher pushes, and what the host should
// make of it.
type simItem struct {
	path     string
	runs     []string // the run ids it holds
	hostile  bool     // the host refuses its run, with a reason
	twice    bool     // a pack holding its run twice: the second copy is a problem
	sessions []string // the session ids it holds
}

// simRun writes a run bundle dir/id; a hostile one's receipt has a status
// no proctor writes.
func simRun(t testing.TB, dir, id string, hostile bool) string {
	t.Helper()
	run := filepath.Join(dir, id)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	end := start.Add(time.Second)
	r := &bundle.Receipt{Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed, Stage: bundle.StageCompleted,
		Task: "pushed " + id, Source: bundle.Source{Kind: "local", Path: "/src"}, Model: bundle.Model{Name: "m"}, StartedAt: start, EndedAt: &end}
	if err := bundle.WriteReceipt(run, r); err != nil {
		t.Fatal(err)
	}
	if hostile { // written by hand: proctor writes no such receipt
		path := filepath.Join(run, bundle.ReceiptFile)
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"status": "passed"`, `"status": "owned"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// simItems are pusher p's n items: run folders, a pack of three runs in
// ten, one run folder in ten that every pusher has the same copy of, and
// in twenty-five: one hostile receipt, one run whose repositories run a
// program on whatever git opens them (it writes root/pwned) and whose
// receipt names a folder of the host, one pack holding a run twice, and
// one pack of a session.
func simItems(t testing.TB, root string, p, n int) []simItem {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("pusher-%02d", p))
	var out []simItem
	for i := range n {
		switch {
		case i%25 == 12:
			id := fmt.Sprintf("sim-p%02d-git-%03d", p, i)
			run := simRun(t, dir, id, false)
			plantHostileGit(t, run, filepath.Join(root, "pwned"))
			setReceiptSource(t, run, "/root/.ssh")
			out = append(out, simItem{path: run, runs: []string{id}})
		case i%25 == 17:
			id := fmt.Sprintf("sim-p%02d-twice-%03d", p, i)
			w, err := bundle.CreatePack(filepath.Join(dir, fmt.Sprintf("twice-%03d.tar", i)))
			if err != nil {
				t.Fatal(err)
			}
			for _, copy := range []string{"first", "second"} {
				if err := w.Add(simRun(t, filepath.Join(dir, copy), id, false), id); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out = append(out, simItem{path: w.Path(), runs: []string{id}, twice: true})
		case i%25 == 22:
			sid := fmt.Sprintf("sess-p%02d-%03d", p, i)
			sessions := filepath.Join(dir, "data", "sessions")
			os.MkdirAll(sessions, 0o755)
			now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
			if err := bundle.WriteSession(sessions, &bundle.Session{Schema: bundle.SessionSchema, SessionID: sid, Title: "pushed", CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			w, err := bundle.CreatePack(filepath.Join(dir, fmt.Sprintf("sessions-%03d.tar", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddSession(filepath.Join(sessions, sid+".json")); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out = append(out, simItem{path: w.Path(), sessions: []string{sid}})
		case i%10 == 3:
			id := fmt.Sprintf("sim-shared-%03d", i)
			shared := filepath.Join(root, "shared")
			path := filepath.Join(shared, id)
			if _, err := os.Stat(path); err != nil { // the first pusher to get here writes it
				path = simRun(t, shared, id, false)
			}
			out = append(out, simItem{path: path, runs: []string{id}})
		case i%25 == 7:
			id := fmt.Sprintf("sim-p%02d-hostile-%03d", p, i)
			out = append(out, simItem{path: simRun(t, dir, id, true), runs: []string{id}, hostile: true})
		case i%10 == 5:
			w, err := bundle.CreatePack(filepath.Join(dir, fmt.Sprintf("pack-%03d.tar", i)))
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for j := range 3 {
				id := fmt.Sprintf("sim-p%02d-pack%03d-%d", p, i, j)
				if err := w.Add(simRun(t, filepath.Join(dir, "packed"), id, false), id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			out = append(out, simItem{path: w.Path(), runs: ids})
		default:
			id := fmt.Sprintf("sim-p%02d-r%03d", p, i)
			out = append(out, simItem{path: simRun(t, dir, id, false), runs: []string{id}})
		}
	}
	return out
}

// simHost is a `proctor serve` on a fixed loopback port that can be killed
// with SIGKILL and started again.
type simHost struct {
	t    testing.TB
	data string
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

func (h *simHost) start() {
	h.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", h.addr, "--data", h.data, "--sandbox", "off")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	rd := bufio.NewReader(out)
	if first, _ := rd.ReadString('\n'); !strings.Contains(first, "serving") {
		h.t.Fatalf("serve said %q", first)
	}
	go io.Copy(io.Discard, rd)
	h.mu.Lock()
	h.cmd = cmd
	h.mu.Unlock()
}

func (h *simHost) kill() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cmd.Process.Signal(syscall.SIGKILL)
	h.cmd.Wait()
}

// simResult is what a simulation measured.
type simResult struct {
	items, stored, runs, kills int
	took, indexTook            time.Duration
}

// pushSimulation runs pushers concurrent pushers of n items each into one
// `proctor serve`, which is killed with SIGKILL kills times at random
// moments and started again; a pusher whose push failed (its retries ran
// out while the host was down) pushes it again, as a CI job is re-run. It
// then checks that the host holds every valid run exactly once, the same
// as an index rebuilt from its data folder, that every hostile run was
// refused with its reason, and that no push said a bundle was on the host
// that is not.
func pushSimulation(t testing.TB, pushers, n, kills int) simResult {
	src, data := t.TempDir(), t.TempDir()
	items := make([][]simItem, pushers)
	for p := range pushers {
		items[p] = simItems(t, src, p, n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	host := &simHost{t: t, data: data, addr: addr}
	host.start()
	t.Cleanup(host.kill)
	secret, err := os.ReadFile(filepath.Join(data, "local.secret"))
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	start := time.Now()
	done := make(chan struct{})
	var killer sync.WaitGroup
	killed := 0
	killer.Go(func() {
		for range kills {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(50+rand.IntN(350)) * time.Millisecond):
			}
			killed++
			host.kill()
			time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
			host.start()
		}
	})
	var mu sync.Mutex
	var said []push.Result // every result that said the bundle is on the host
	var wg sync.WaitGroup
	// An attacker with the token among the pushers: a push declared past
	// the host's bound, and one left unfinished.
	abandoned := strings.Repeat("0", 64)
	wg.Go(func() {
		for _, try := range []struct {
			digest, size string
			body         string
			want         int
		}{
			{strings.Repeat("f", 64), "8589934592", "x", http.StatusRequestEntityTooLarge},
			{abandoned, "1000", strings.Repeat("x", 100), http.StatusOK},
		} {
			for attempt := 0; ; attempt++ {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/api/v1/push/"+try.digest+"?size="+try.size+"&offset=0", strings.NewReader(try.body))
				req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(secret)))
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				switch {
				case err == nil && resp.StatusCode == try.want:
				case attempt < 50 && (err != nil || resp.StatusCode >= 500):
					time.Sleep(100 * time.Millisecond) // the host is down
					continue
				case err != nil:
					t.Errorf("the attacker's push of %s: %v", try.size, err)
				default:
					t.Errorf("the attacker's push of %s bytes: %d, want %d", try.size, resp.StatusCode, try.want)
				}
				break
			}
		}
	})
	for p := range pushers {
		wg.Go(func() {
			pusher := &push.Pusher{URL: "http://" + addr, Token: strings.TrimSpace(string(secret)), Client: &http.Client{Timeout: time.Minute}, Backoff: 50 * time.Millisecond, Retries: 8}
			todo := items[p]
			for round := 0; len(todo) > 0; round++ {
				if round == 20 {
					t.Errorf("pusher %d: %d items still not on the host after 20 rounds", p, len(todo))
					return
				}
				var paths []string
				for _, it := range todo {
					paths = append(paths, it.path)
				}
				results, err := pusher.Push(ctx, paths...)
				if err != nil {
					t.Errorf("pusher %d: %v", p, err)
					return
				}
				var again []simItem
				for i, r := range results {
					if r.Err != nil {
						again = append(again, todo[i])
						continue
					}
					mu.Lock()
					said = append(said, r)
					mu.Unlock()
				}
				todo = again
			}
		})
	}
	wg.Wait()
	close(done)
	killer.Wait()
	took := time.Since(start)
	host.kill() // as a crash: what it did not finish, the next index finishes

	// What the pushes said: each stored pack is on the host; a hostile
	// run's push names its refusal.
	for _, r := range said {
		if _, err := os.Stat(filepath.Join(data, "runs", push.StoredPrefix+r.Digest+bundle.PackSuffix)); err != nil || !r.Status.Stored {
			t.Errorf("the push of %s said it is on the host, and it is not: %v", r.Path, err)
		}
	}
	hostile := map[string]bool{}
	valid := map[string]bool{}
	twice := map[string]bool{}
	sessions := map[string]bool{}
	for _, its := range items {
		for _, it := range its {
			for _, id := range it.runs {
				if it.hostile {
					hostile[id] = true
				} else {
					valid[id] = true
				}
				twice[id] = it.twice
			}
			for _, id := range it.sessions {
				sessions[id] = true
			}
		}
	}
	// Nothing ran what a pushed repository asked; only the unfinished push
	// waits in incoming/ (the finished and refused ones left nothing).
	if got, err := os.ReadFile(filepath.Join(src, "pwned")); err == nil {
		t.Errorf("the host ran a pushed repository's program: %s", got)
	}
	if left, _ := os.ReadDir(filepath.Join(data, "incoming")); len(left) != 1 || left[0].Name() != abandoned+".part" {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("incoming/ holds %v, want only the unfinished push", names)
	}
	for _, r := range said {
		if strings.Contains(r.Path, "hostile") && (len(r.Status.Problems) == 0 || !strings.Contains(fmt.Sprint(r.Status.Problems), "owned")) {
			t.Errorf("the push of hostile %s was not refused with its reason: %+v", r.Path, r.Status)
		}
	}

	// The index after the kills (finished by an index of the data folder,
	// as the next serve does at start) equals one rebuilt from the files.
	if code, out := mainOf(data, "index", filepath.Join(data, "runs"), filepath.Join(data, "sessions")); code != ExitProblems {
		t.Fatalf("index after the kills: exit %d\n%s", code, out)
	}
	before := simSnapshot(t, data)
	t0 := time.Now()
	if code, out := mainOf(data, "index", "--rebuild", filepath.Join(data, "runs"), filepath.Join(data, "sessions")); code != ExitProblems {
		t.Fatalf("index --rebuild: exit %d\n%s", code, out)
	}
	indexTook := time.Since(t0)
	after := simSnapshot(t, data)
	if !slices.Equal(before.runs, after.runs) || !slices.Equal(before.problems, after.problems) || !slices.Equal(before.sessions, after.sessions) {
		t.Fatalf("the index after the pushes is not the rebuilt one:\n%d runs, %d problems, %d sessions\n%d runs, %d problems, %d sessions",
			len(before.runs), len(before.problems), len(before.sessions), len(after.runs), len(after.problems), len(after.sessions))
	}
	for id := range sessions {
		if !slices.Contains(after.sessions, id) {
			t.Errorf("pushed session %s is not on the host", id)
		}
	}
	indexed := map[string]bool{}
	for _, r := range after.runs {
		id, _, _ := strings.Cut(r, " ")
		if indexed[id] {
			t.Errorf("run %s is indexed twice", id)
		}
		indexed[id] = true
	}
	for id := range valid {
		if !indexed[id] {
			t.Errorf("valid run %s is not on the host", id)
		}
		if twice[id] && !slices.ContainsFunc(after.problems, func(p string) bool { return strings.Contains(p, id) && strings.Contains(p, "appears twice") }) {
			t.Errorf("the second copy of run %s in its pack is not listed as a problem", id)
		}
	}
	for id := range hostile {
		if indexed[id] {
			t.Errorf("hostile run %s was indexed", id)
		}
		if !slices.ContainsFunc(after.problems, func(p string) bool { return strings.Contains(p, id) && strings.Contains(p, "owned") }) {
			t.Errorf("hostile run %s is not listed with its reason", id)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(data, "runs", push.StoredPrefix+"*"+bundle.PackSuffix))
	return simResult{items: pushers * n, stored: len(packs), runs: len(indexed), took: took, indexTook: indexTook, kills: killed}
}

// mainOf runs proctor with args on the data folder data.
func mainOf(data string, args ...string) (int, string) {
	var out strings.Builder
	code := Main(context.Background(), args, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
		Getenv: func(k string) string { return map[string]string{"PROCTOR_DATA": data}[k] }})
	return code, out.String()
}

type snapshot struct{ runs, problems, sessions []string }

var pushedPack = regexp.MustCompile(`[0-9a-f]{64}\.tar`)

func simSnapshot(t testing.TB, data string) snapshot {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var s snapshot
	page, err := st.ListRuns(context.Background(), store.RunFilter{Limit: 500})
	for err == nil {
		for _, r := range page.Runs {
			s.runs = append(s.runs, r.RunID+" "+r.Task)
		}
		if page.Next == "" {
			break
		}
		page, err = st.ListRuns(context.Background(), store.RunFilter{Limit: 500, After: page.Next})
	}
	if err != nil {
		t.Fatal(err)
	}
	probs, err := st.ListProblems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		s.problems = append(s.problems, pushedPack.FindString(p.BundlePath)+" "+p.RunID+" "+p.File+" "+p.Field+" "+p.Message)
	}
	sessions, err := st.ListSessions(context.Background(), "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range sessions.Sessions {
		s.sessions = append(s.sessions, x.SessionID)
	}
	slices.Sort(s.runs)
	slices.Sort(s.problems)
	slices.Sort(s.sessions)
	return s
}

// 8 pushers of 30 bundles each into a serve killed twice.
func TestPushesSurviveKillsOfTheHost(t *testing.T) {
	if testing.Short() {
		t.Skip("a serve killed and restarted")
	}
	res := pushSimulation(t, 8, 30, 2)
	t.Logf("%d pushes (%d packs stored, %d runs) in %s, the host killed %d times", res.items, res.stored, res.runs, res.took.Round(time.Millisecond), res.kills)
	if res.kills == 0 {
		t.Fatal("the pushes ended before the host was killed once")
	}
}

// BenchmarkPushSimulation is the proof of issue 30: 50 pushers of 200
// bundles each into one serve killed 5 times at random moments. It
// reports pushes and runs a second, beside `proctor index --rebuild` of
// the same packs on the host in the same run.
func BenchmarkPushSimulation(b *testing.B) {
	for range b.N {
		res := pushSimulation(b, 50, 200, 5)
		pushes := float64(res.items) / res.took.Seconds()
		runs := float64(res.runs) / res.took.Seconds()
		indexed := float64(res.runs) / res.indexTook.Seconds()
		b.ReportMetric(pushes, "pushes/s")
		b.ReportMetric(runs, "runs/s")
		b.ReportMetric(indexed, "index-runs/s")
		b.ReportMetric(runs/indexed, "push-vs-index")
		b.ReportMetric(float64(res.kills), "kills")
		b.ReportMetric(0, "ns/op")
	}
}
