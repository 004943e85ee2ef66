// Package suite owns running scenarios as a suite: every scenario K times,
// N at a time, printing each check result and verdict as cases finish, then
// a summary with pass rates; and writing the suite as JUnit XML and JSON.
package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/osfile"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/scenario"
	"github.com/proctor-dev/proctor/internal/script"
)

// Options of a suite run.
type Options struct {
	ID       string // the suite id; "" makes one
	Repeat   int    // runs per scenario; 0 uses each scenario's repeat
	Parallel int    // runs at a time; default 1
	Model    *run.ModelChoice
	// Agents replace each scenario's agent: each scenario runs with each of
	// them (its repeats each), and the suite's matrix shows them side by
	// side. None: each scenario's own.
	Agents  []external.Agent
	Profile func(name string) (run.ModelChoice, error)
	Out     io.Writer // one line per result and verdict, then the summary
	// Quiet prints only the cases that did not pass (their results and
	// verdicts), then the summary: a large suite's log shows what needs
	// looking at.
	Quiet bool
	// Pack, when set, records every run in this pack instead of a folder
	// of its own: each run works in a folder under Scratch and is packed
	// and removed as it ends. The suite closes the pack when it ends and
	// indexes the pack then (IndexEach is ignored).
	Pack    *bundle.PackWriter
	Scratch string
	// Shard runs a share of the cases (every case: the zero Shard); the
	// shards of one suite share its ID, so that the index shows one suite.
	Shard Shard
}

// Case is one run of one scenario. A suite keeps every case until it ends,
// so a case holds only what its summary needs; the rest of what the report
// files say of it (its check results, its failure) is its Entry, kept in the
// report's spool file.
type Case struct {
	Scenario *scenario.Scenario
	Agent    *external.Agent // replaces the scenario's own; nil: its own
	Repeat   int
	RunID    string        // "" when the case could not start
	Dir      string        // its bundle: a folder, or an entry of the pack
	Status   bundle.Status // its receipt's
	Err      error         // the case could not start
	Duration time.Duration
	judged   bool  // it has a verdict
	passed   bool  // every check held
	broken   bool  // a check could not judge, or the harness failed it
	at, size int64 // its entry in the spool; size 0: none
	walls    *bundle.Walls
}

// Ran reports whether the case's run was recorded.
func (c Case) Ran() bool { return c.RunID != "" }

// Passed reports whether the case ran and every check held.
func (c Case) Passed() bool { return c.Err == nil && c.passed }

// Broken reports whether a check of the case was broken.
func (c Case) Broken() bool { return c.broken }

// Entry is a case as the suite's report files give it.
type Entry struct {
	Scenario string               `json:"scenario"`
	Agent    string               `json:"agent,omitempty"` // the agent that replaced the scenario's own
	Repeat   int                  `json:"repeat"`
	RunID    string               `json:"run_id,omitempty"`
	Bundle   string               `json:"bundle,omitempty"`
	Status   string               `json:"status"`
	Passed   bool                 `json:"passed"`
	Aborted  string               `json:"aborted,omitempty"`
	Failure  *bundle.Failure      `json:"failure,omitempty"`
	Error    string               `json:"error,omitempty"`
	Seconds  float64              `json:"seconds"`
	Results  []bundle.CheckResult `json:"results"`
}

// Report is a finished suite.
type Report struct {
	ID       string
	Cases    []Case
	Problems []scenario.Problem
	Started  time.Time
	Duration time.Duration
	spool    *os.File // each case's Entry as JSON, at the case's offset; removed from its folder at once
}

// NewID makes a suite id.
func NewID(now time.Time) string { return "suite-" + run.NewRunID(now) }

// Run runs every scenario. Cases that cannot start are recorded with their
// error and the rest go on.
func Run(ctx context.Context, r *run.Runner, scenarios []*scenario.Scenario, problems []scenario.Problem, opt Options) Report {
	start := time.Now()
	rep := Report{ID: opt.ID, Problems: problems, Started: start}
	if rep.ID == "" {
		rep.ID = NewID(start)
	}
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	var spooled int64
	if f, err := os.CreateTemp(opt.Scratch, "suite-report-*"); err != nil {
		fmt.Fprintf(out, "warning: the report files will give cases without their check results: %v\n", err)
	} else {
		os.Remove(f.Name()) // the open file is all it needs, and a crash leaves nothing
		rep.spool = f
	}
	for _, s := range scenarios {
		k := opt.Repeat
		if k <= 0 {
			k = s.Repeat
		}
		agents := []*external.Agent{nil}
		if len(opt.Agents) > 0 {
			agents = nil
			for i := range opt.Agents {
				agents = append(agents, &opt.Agents[i])
			}
		}
		for _, a := range agents {
			for i := 1; i <= k; i++ {
				rep.Cases = append(rep.Cases, Case{Scenario: s, Agent: a, Repeat: i})
			}
		}
	}
	if !opt.Shard.All() {
		all := len(rep.Cases)
		rep.Cases = opt.Shard.pick(rep.Cases)
		fmt.Fprintf(out, "suite %s, shard %s: %d of its %d cases\n", rep.ID, opt.Shard, len(rep.Cases), all)
	}
	// Each case's runner: no progress lines, one loopback host for every
	// scripted model, indexed once at the end, in scratch folders when packed.
	rr := *r
	rr.Progress, rr.Index = nil, nil
	if rr.Scripts == nil {
		if h, err := script.NewHost("127.0.0.1:0"); err == nil {
			rr.Scripts = h
			defer h.Close()
		}
	}
	if opt.Pack != nil {
		rr.RunsDir, rr.Packed = opt.Scratch, true
	}
	var mu sync.Mutex
	var next atomic.Int64 // workers take the next case themselves
	var wg sync.WaitGroup
	for range min(max(opt.Parallel, 1), max(len(rep.Cases), 1)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(rep.Cases) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				c := &rep.Cases[i]
				e, warning := runCase(ctx, &rr, r, c, rep.ID, opt)
				line, err := json.Marshal(e)
				mu.Lock()
				if warning != "" {
					fmt.Fprintln(out, warning)
				}
				if !opt.Quiet || !c.Passed() {
					printCase(out, *c, e)
				}
				if err == nil && rep.spool != nil {
					if _, err := rep.spool.Write(line); err == nil {
						c.at, c.size = spooled, int64(len(line))
					}
					spooled += int64(len(line))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if opt.Pack != nil {
		if err := opt.Pack.Close(); err != nil {
			fmt.Fprintf(out, "warning: %v\n", err)
		}
	}
	if paths := rep.recorded(opt.Pack); r.Index != nil && len(paths) > 0 {
		if err := r.Index(context.WithoutCancel(ctx), paths...); err != nil {
			fmt.Fprintf(out, "warning: index the suite's runs: %v\n", err)
		}
	}
	rep.Duration = time.Since(start)
	for _, p := range problems {
		fmt.Fprintf(out, "BROKEN %s: %v\n", p.Path, p.Err)
	}
	printSummary(out, rep)
	return rep
}

// runCase runs one case with rr and, when the suite packs its runs, packs
// it; it returns the case's entry, and a warning to print when the pack
// could not take it.
func runCase(ctx context.Context, rr, r *run.Runner, c *Case, suite string, opt Options) (Entry, string) {
	t0 := time.Now()
	spec, err := rr.ScenarioSpec(c.Scenario, run.ScenarioOptions{Repeat: c.Repeat, Suite: suite, Model: opt.Model, Agent: c.Agent, Profile: opt.Profile})
	var res *run.Result
	if err == nil {
		res, err = rr.Run(ctx, spec)
	}
	c.Err, c.Duration = err, time.Since(t0)
	warning := ""
	if res != nil {
		c.RunID, c.Dir, c.Status, c.walls = res.RunID, res.Dir, res.Receipt.Status, res.Receipt.Walls
		if f := res.Receipt.Failure; f != nil && (f.Domain == bundle.DomainEnvironment || f.Domain == bundle.DomainInfrastructure) {
			c.broken = true // the host failed the case (its sandbox, its disk), not the agent
		}
		if v := res.Verdict; v != nil {
			c.judged, c.passed = true, v.Passed
			for _, r := range v.Results {
				c.broken = c.broken || r.Broken
			}
		}
		if opt.Pack != nil {
			warning = pack(opt.Pack, r, c)
		}
	}
	e := Entry{Scenario: c.Scenario.ID, Repeat: c.Repeat, Passed: c.Passed(), Seconds: c.Duration.Seconds(), Results: []bundle.CheckResult{}}
	if c.Agent != nil {
		e.Agent = c.Agent.Name
	}
	if c.Err != nil {
		e.Status, e.Error = "broken", c.Err.Error()
	}
	if res != nil {
		e.RunID, e.Bundle, e.Status, e.Failure = c.RunID, c.Dir, string(c.Status), res.Receipt.Failure
		if v := res.Verdict; v != nil {
			e.Aborted, e.Results = v.Aborted, v.Results
		}
	}
	return e, warning
}

// recorded are the places that hold the suite's runs: the pack, and the
// folders of runs kept outside it.
func (rep Report) recorded(p *bundle.PackWriter) []string {
	var paths []string
	packed := false
	for _, c := range rep.Cases {
		if !c.Ran() {
			continue
		}
		if _, _, ok := bundle.SplitPackRef(c.Dir); ok {
			packed = true
		} else {
			paths = append(paths, c.Dir)
		}
	}
	if packed {
		paths = append(paths, p.Path())
	}
	return paths
}

// pack moves a finished run from its scratch folder into the pack. When the
// pack cannot take it, the run is copied to a folder of its own under the
// data folder instead, so that nothing is lost, and the returned warning
// says so.
func pack(p *bundle.PackWriter, r *run.Runner, c *Case) string {
	err := p.Add(c.Dir, c.RunID)
	if err == nil {
		os.RemoveAll(c.Dir)
		c.Dir = bundle.PackRef(p.Path(), c.RunID)
		return ""
	}
	dest := filepath.Join(r.DataDir, "runs", c.RunID)
	if cerr := os.CopyFS(dest, os.DirFS(c.Dir)); cerr != nil {
		os.RemoveAll(dest)
		return fmt.Sprintf("warning: %v; the run is left in %s, which is kept (copy to %s: %v)", err, c.Dir, dest, cerr)
	}
	os.RemoveAll(c.Dir)
	c.Dir = dest
	return fmt.Sprintf("warning: %v; the run was kept in %s instead", err, dest)
}

// UsePack makes the suite record its runs in a new pack,
// <dataDir>/runs/<suite id>.tar (a shard's: <suite id>.shard-K-of-N.tar), working in a scratch folder (NewScratch).
// It gives the suite an id when it has none. cleanup removes the scratch
// folder once the suite has run (see NewScratch).
func (o *Options) UsePack(dataDir string) (cleanup func() error, err error) {
	if o.ID == "" {
		o.ID = NewID(time.Now())
	}
	runs := filepath.Join(dataDir, "runs")
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return nil, fmt.Errorf("pack the suite's runs: %w", err)
	}
	if _, _, err := CleanScratch(dataDir); err != nil {
		return nil, err
	}
	scratch, cleanup, err := NewScratch(dataDir)
	if err != nil {
		return nil, err
	}
	pack, err := bundle.CreatePack(filepath.Join(runs, o.ID+o.Shard.packSuffix()+bundle.PackSuffix))
	if err != nil {
		cleanup()
		return nil, err
	}
	o.Pack, o.Scratch = pack, scratch
	return cleanup, nil
}

// NewScratch makes a folder for runs to work in before they are packed:
// <dataDir>/scratch/suite-*, held with a flock for as long as the suite
// runs, so that CleanScratch can tell an abandoned one (its process was
// killed) from one in use. cleanup removes it — unless a run is left in it
// (one that could be neither packed nor copied under the data folder): then
// it keeps it and says so.
func NewScratch(dataDir string) (dir string, cleanup func() error, err error) {
	base := filepath.Join(dataDir, "scratch")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	d, err := os.MkdirTemp(base, "suite-*")
	if err != nil {
		return "", nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	held, err := flock.TryLock(d, false)
	if err != nil {
		os.RemoveAll(d)
		return "", nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	return d, func() error {
		left, _ := os.ReadDir(d)
		runs := 0
		for _, e := range left {
			if !strings.HasPrefix(e.Name(), ".") { // (Windows keeps a folder's lock in .lock)
				runs++
			}
		}
		held.Unlock() // before the removal: Windows removes no file that is open
		if runs > 0 {
			return fmt.Errorf("the scratch folder %s is kept: it holds %d run(s) that could not be recorded in the pack or under the data folder", d, runs)
		}
		return os.RemoveAll(d)
	}, nil
}

// CleanScratch removes the scratch folders of <dataDir>/scratch that no
// process holds (their suite was killed). A run in one that has a receipt
// (one the suite was working on when it was killed, or one its pack could
// not take) is moved to <dataDir>/runs (when no run of its id is there)
// rather than lost, where recovery marks it interrupted — unless a pack
// there holds it whole (the suite was killed after the pack took it and
// before its folder was removed), so that a run is never kept twice; the
// rest is half-made work nobody reported. It returns what it removed and
// what it kept.
func CleanScratch(dataDir string) (removed, kept []string, err error) {
	base := filepath.Join(dataDir, "scratch")
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("clean scratch folders: %w", err)
	}
	for _, e := range entries {
		d := filepath.Join(base, e.Name())
		f, err := flock.TryLock(d, false)
		if err != nil {
			continue // a suite works in it (or it is gone)
		}
		runs, _ := os.ReadDir(d)
		for _, r := range runs {
			dest := filepath.Join(dataDir, "runs", r.Name())
			if !bundle.ValidID(r.Name()) {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, r.Name(), bundle.ReceiptFile)); err != nil {
				continue
			}
			if _, ok := bundle.FindPacked(filepath.Join(dataDir, "runs"), r.Name()); ok {
				continue // killed after its pack took it, before its folder was removed: the pack is the record
			}
			if _, err := os.Lstat(dest); errors.Is(err, fs.ErrNotExist) && os.Rename(filepath.Join(d, r.Name()), dest) == nil {
				kept = append(kept, dest)
			}
		}
		err = os.RemoveAll(d)
		f.Unlock()
		if err != nil {
			return removed, kept, fmt.Errorf("clean scratch folder %s: %w", d, err)
		}
		removed = append(removed, d)
	}
	return removed, kept, nil
}

func printCase(w io.Writer, c Case, e Entry) {
	name := fmt.Sprintf("%s #%d", c.label(), c.Repeat)
	if c.Err != nil {
		fmt.Fprintf(w, "BROKEN %s: %v\n", name, c.Err)
		return
	}
	for _, r := range e.Results {
		first, _, _ := strings.Cut(r.Detail, "\n")
		fmt.Fprintf(w, "%s %s.%s: %s\n", mark(r, "PASS", "FAIL"), r.Phase, r.Name, first)
	}
	fmt.Fprintf(w, "verdict %s: %s (%.1fs) %s\n", name, e.verdict(c), c.Duration.Seconds(), c.Dir)
}

// verdict says in words how case c ended.
func (e Entry) verdict(c Case) string {
	f := e.Failure
	switch {
	case !c.judged:
		v := e.Status
		if f != nil {
			v += ": " + f.Code + ": " + f.Message
		}
		return v
	case c.Broken():
		return "broken: a check could not judge (the scenario's mistake, not the agent's)"
	case !c.Passed():
		v := "failed"
		if e.Aborted != "" {
			v += " (budget exceeded: " + e.Aborted + ")"
		}
		if f != nil && f.Domain != bundle.DomainAgent && f.Domain != bundle.DomainCheck {
			v += ": " + f.Code + ": " + f.Message
		}
		return v
	}
	return "passed"
}

// Stats are a scenario's results over its repeats.
type Stats struct {
	ID     string
	Runs   int
	Passed int
	Broken int
}

// PerScenario summarises the cases by scenario, sorted by id.
func (r Report) PerScenario() []Stats {
	m := map[string]*Stats{}
	for _, c := range r.Cases {
		s := m[c.label()]
		if s == nil {
			s = &Stats{ID: c.label()}
			m[c.label()] = s
		}
		s.Runs++
		if c.Passed() {
			s.Passed++
		}
		if c.Broken() || c.Err != nil {
			s.Broken++
		}
	}
	var out []Stats
	for _, s := range m {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Counts returns passed, failed and broken cases.
func (r Report) Counts() (passed, failed, broken int) {
	for _, c := range r.Cases {
		switch {
		case c.Passed():
			passed++
		case c.Broken() || c.Err != nil:
			broken++
		default:
			failed++
		}
	}
	return passed, failed, broken + len(r.Problems)
}

// PassK reports whether a scenario passed every one of its repeats
// (pass^k): it has at least one judged run, and every judged run passed.
func PassK(passed, runs int) bool { return runs > 0 && passed == runs }

// Flaky reports whether a scenario's repeats disagree: some passed, some not.
func Flaky(passed, runs int) bool { return passed > 0 && passed < runs }

func printSummary(w io.Writer, r Report) {
	passed, failed, broken := r.Counts()
	fmt.Fprintf(w, "\nsuite %s: %d cases in %.1fs: %d passed, %d failed, %d broken\n", r.ID, len(r.Cases), r.Duration.Seconds(), passed, failed, broken)
	all := 0
	stats := r.PerScenario()
	for _, s := range stats {
		if PassK(s.Passed, s.Runs) {
			all++
		}
		fmt.Fprintf(w, "  %-40s %d/%d passed (%.0f%%)\n", s.ID, s.Passed, s.Runs, 100*float64(s.Passed)/float64(max(s.Runs, 1)))
	}
	if len(stats) > 0 {
		fmt.Fprintf(w, "pass^k (every repeat passed): %d of %d scenarios (%.0f%%)\n", all, len(stats), 100*float64(all)/float64(len(stats)))
	}
	for _, c := range r.Cases {
		if c.walls != nil {
			fmt.Fprintf(w, "sandbox: %s\n", c.walls)
			break
		}
	}
}

// ExitCode is 0 when every case passed, 2 when any check was broken or a
// scenario could not run, else 1 when any failed.
func (r Report) ExitCode() int {
	_, failed, broken := r.Counts()
	switch {
	case broken > 0:
		return 2
	case failed > 0:
		return 1
	}
	return 0
}

// Entry returns case i as the report files give it: from the spool when
// the case has finished, else what the case itself says.
func (r Report) Entry(i int) (Entry, error) {
	c := r.Cases[i]
	if c.size > 0 && r.spool != nil {
		data := make([]byte, c.size)
		if _, err := r.spool.ReadAt(data, c.at); err != nil {
			return Entry{}, fmt.Errorf("read case %s #%d of the report: %w", c.label(), c.Repeat, err)
		}
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return Entry{}, fmt.Errorf("read case %s #%d of the report: %w", c.label(), c.Repeat, err)
		}
		return e, nil
	}
	e := Entry{Scenario: c.Scenario.ID, Repeat: c.Repeat, RunID: c.RunID, Bundle: c.Dir, Status: string(c.Status), Passed: c.Passed(),
		Seconds: c.Duration.Seconds(), Results: []bundle.CheckResult{}}
	if c.Agent != nil {
		e.Agent = c.Agent.Name
	}
	if c.Err != nil {
		e.Status, e.Error = "broken", c.Err.Error()
	} else if !c.Ran() {
		e.Status = "not run"
	}
	return e, nil
}

// WriteJUnit writes the suite as JUnit XML: a testsuite per scenario, a
// testcase per repeat; a failed check is a failure, a broken one an error.
// It is written case by case, as the report's cases are read from its spool.
func (r Report) WriteJUnit(path string) error {
	groups := r.junitGroups()
	var tests, failures, errs int
	for _, g := range groups {
		tests, failures, errs = tests+g.tests, failures+g.failures, errs+g.errs
	}
	tests, errs = tests+len(r.Problems), errs+len(r.Problems)
	attr := func(name, value string) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: value} }
	counts := func(name string, tests, failures, errs int, d time.Duration) []xml.Attr {
		return []xml.Attr{attr("name", name), attr("tests", strconv.Itoa(tests)), attr("failures", strconv.Itoa(failures)),
			attr("errors", strconv.Itoa(errs)), attr("time", secs(d))}
	}
	return osfile.WriteFile(path, 0o644, true, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(xml.Header)
		enc := xml.NewEncoder(bw)
		enc.Indent("", "  ")
		top := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: counts(r.ID, tests, failures, errs, r.Duration)}
		if err := enc.EncodeToken(top); err != nil {
			return err
		}
		suiteEl := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
		caseEl := xml.StartElement{Name: xml.Name{Local: "testcase"}}
		for _, g := range groups {
			suiteEl.Attr = counts(g.id, g.tests, g.failures, g.errs, g.time)
			if err := enc.EncodeToken(suiteEl); err != nil {
				return err
			}
			for i := g.from; i < g.to; i++ {
				e, err := r.Entry(i)
				if err != nil {
					return err
				}
				if err := enc.EncodeElement(r.Cases[i].junit(e), caseEl); err != nil {
					return err
				}
			}
			if err := enc.EncodeToken(suiteEl.End()); err != nil {
				return err
			}
		}
		if len(r.Problems) > 0 {
			suiteEl.Attr = counts("unreadable scenarios", len(r.Problems), 0, len(r.Problems), 0)
			if err := enc.EncodeToken(suiteEl); err != nil {
				return err
			}
			for _, p := range r.Problems {
				tc := junitCase{Name: p.Path, Classname: "proctor.unreadable", Time: "0",
					Error: &junitFailure{Message: "the scenario cannot be read", Type: "setup", Text: p.Err.Error()}}
				if err := enc.EncodeElement(tc, caseEl); err != nil {
					return err
				}
			}
			if err := enc.EncodeToken(suiteEl.End()); err != nil {
				return err
			}
		}
		if err := enc.EncodeToken(top.End()); err != nil {
			return err
		}
		if err := enc.Flush(); err != nil {
			return err
		}
		bw.WriteString("\n")
		return bw.Flush()
	})
}

// junitGroup is a <testsuite> of the JUnit report: the cases of one
// scenario, r.Cases[from:to], and their counts.
type junitGroup struct {
	id                    string
	from, to              int
	tests, failures, errs int
	time                  time.Duration
}

// junitGroups are the report's cases by scenario, in order.
func (r Report) junitGroups() []junitGroup {
	var groups []junitGroup
	for i, c := range r.Cases {
		if len(groups) == 0 || groups[len(groups)-1].id != c.Scenario.ID {
			groups = append(groups, junitGroup{id: c.Scenario.ID, from: i})
		}
		g := &groups[len(groups)-1]
		g.to, g.time = i+1, g.time+c.Duration
		g.tests++
		switch {
		case c.Err != nil || c.Broken():
			g.errs++
		case !c.Passed():
			g.failures++
		}
	}
	return groups
}

// The JUnit XML elements of a test case.
type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}
type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junit is the case as a JUnit test case: a setup problem or a broken
// check is an error, a failed check or an exceeded budget a failure.
func (c Case) junit(e Entry) junitCase {
	tc := junitCase{Name: fmt.Sprintf("%s #%d", c.label(), c.Repeat), Classname: "proctor." + c.Scenario.ID, Time: secs(c.Duration)}
	switch {
	case c.Err != nil:
		tc.Error = &junitFailure{Message: c.Err.Error(), Type: "setup"}
	case c.Broken():
		tc.Error = &junitFailure{Message: "a check is broken", Type: "broken", Text: details(e)}
	case !c.Passed():
		msg := "a check failed"
		if e.Aborted != "" {
			msg = "budget exceeded: " + e.Aborted
		} else if !c.judged && e.Failure != nil {
			msg = e.Failure.Message
		}
		tc.Failure = &junitFailure{Message: msg, Type: "failed", Text: details(e)}
	}
	if c.Ran() {
		tc.SystemOut = "bundle: " + c.Dir
	}
	return tc
}

func details(e Entry) string {
	var b strings.Builder
	for _, r := range e.Results {
		fmt.Fprintf(&b, "%s %s.%s: %s\n", mark(r, "passed", "FAILED"), r.Phase, r.Name, r.Detail)
	}
	return b.String()
}

// mark is how a check's result is marked: BROKEN, failed or passed.
func mark(r bundle.CheckResult, passed, failed string) string {
	switch {
	case r.Broken:
		return "BROKEN"
	case !r.Passed:
		return failed
	}
	return passed
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJSON writes the suite as JSON: its counts, one entry per case and
// the scenarios that could not be read. It is written case by case, as the
// report's cases are read from its spool.
func (r Report) WriteJSON(path string) error {
	type problem struct {
		Path  string `json:"path"`
		Error string `json:"error"`
	}
	passed, failed, broken := r.Counts()
	head, err := json.MarshalIndent(struct {
		Suite   string  `json:"suite"`
		Passed  int     `json:"passed"`
		Failed  int     `json:"failed"`
		Broken  int     `json:"broken"`
		Seconds float64 `json:"seconds"`
	}{r.ID, passed, failed, broken, r.Duration.Seconds()}, "", "  ")
	if err != nil {
		return err
	}
	problems := []problem{}
	for _, p := range r.Problems {
		problems = append(problems, problem{p.Path, p.Err.Error()})
	}
	tail, err := json.MarshalIndent(problems, "  ", "  ")
	if err != nil {
		return err
	}
	return osfile.WriteFile(path, 0o644, true, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.Write(head[:len(head)-2]) // the object, open for its cases
		bw.WriteString(`,
  "cases": [`)
		for i := range r.Cases {
			e, err := r.Entry(i)
			if err != nil {
				return err
			}
			data, err := json.MarshalIndent(e, "    ", "  ")
			if err != nil {
				return err
			}
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			bw.Write(data)
		}
		if len(r.Cases) > 0 {
			bw.WriteString("\n  ")
		}
		bw.WriteString("],\n  \"problems\": ")
		bw.Write(tail)
		bw.WriteString("\n}\n")
		return bw.Flush()
	})
}

// label names the case's scenario, with the agent that replaced its own.
func (c Case) label() string {
	if c.Agent == nil {
		return c.Scenario.ID
	}
	return c.Scenario.ID + " (" + c.Agent.Name + ")"
}
