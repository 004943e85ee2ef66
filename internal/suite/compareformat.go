package suite

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/store"
)

// CompareFormats are the formats a comparison is written in.
func CompareFormats() []string { return []string{"text", "json", "junit", "markdown"} }

// CompareJSON is a comparison as the API and `proctor compare --format
// json` give it.
type CompareJSON struct {
	Base    string          `json:"base"`
	Head    string          `json:"head"`
	ByModel bool            `json:"by_model"` // rows are scenarios by agent and model (else scenarios)
	Classes map[string]int  `json:"classes"`
	Fails   map[string]bool `json:"fails"` // by --fail-on condition
	Totals  struct {
		Base TotalsJSON `json:"base"`
		Head TotalsJSON `json:"head"`
	} `json:"totals"`
	Class string    `json:"class,omitempty"`
	Page  int       `json:"page,omitempty"`
	Pages int       `json:"pages,omitempty"`
	Rows  []RowJSON `json:"rows"`
}

// TotalsJSON are a side's totals.
type TotalsJSON struct {
	Rows     int        `json:"rows"`
	PassK    int        `json:"pass_k"` // rows whose every repeat passed
	Runs     int        `json:"runs"`   // runs with a verdict
	Passed   int        `json:"passed"`
	PassRate float64    `json:"pass_rate"`
	Interval [2]float64 `json:"interval"` // 95% Wilson interval of pass_rate
	Tokens   int64      `json:"tokens"`
	CostUSD  *float64   `json:"cost_usd"` // null when a run has no price
	Seconds  float64    `json:"seconds"`  // wall time of the runs that ended
}

// RowJSON is a row of CompareJSON.
type RowJSON struct {
	Scenario string    `json:"scenario"`
	Agent    string    `json:"agent,omitempty"`
	Model    string    `json:"model,omitempty"`
	Class    string    `json:"class"`
	Base     *SideJSON `json:"base"` // null when the suite did not run it
	Head     *SideJSON `json:"head"`
	Delta    struct {
		Tokens  *float64 `json:"tokens"`
		CostUSD *float64 `json:"cost_usd"`
		Seconds *float64 `json:"seconds"`
	} `json:"delta"` // of a run's means, head minus base
}

// SideJSON is a row's side.
type SideJSON struct {
	Runs         int        `json:"runs"`
	Passed       int        `json:"passed"`
	PassRate     float64    `json:"pass_rate"`
	Interval     [2]float64 `json:"interval"`
	PassK        bool       `json:"pass_k"`
	Tokens       float64    `json:"tokens"`   // a run's mean
	CostUSD      *float64   `json:"cost_usd"` // a run's mean
	Seconds      *float64   `json:"seconds"`  // a run's mean
	Run          string     `json:"run"`      // the run the row links to
	FirstFailure string     `json:"first_failure,omitempty"`
}

// JSON is the comparison as CompareJSON.
func (c *Compared) JSON() CompareJSON {
	out := CompareJSON{Base: c.BaseID, Head: c.HeadID, ByModel: c.ByModel, Classes: map[string]int{}, Fails: map[string]bool{},
		Class: c.Class, Page: c.Page, Pages: c.Pages, Rows: make([]RowJSON, 0, len(c.Rows))}
	if c.Page == 0 {
		out.Pages = 0
	}
	for _, k := range store.CompareClasses() {
		out.Classes[k] = c.Classes[k]
	}
	for _, on := range FailOns()[1:] {
		out.Fails[on] = c.Fails(FailOn(on))
	}
	out.Totals.Base, out.Totals.Head = c.Totals()
	for _, r := range c.Rows {
		l := LinksOf(r)
		b, h := StatsOf(r.Base), StatsOf(r.Head)
		jr := RowJSON{Scenario: r.Scenario, Agent: r.Agent, Model: r.Model, Class: r.Class,
			Base: sideJSON(b, l.BaseRun, ""), Head: sideJSON(h, l.HeadRun, l.FailedCheck)}
		if b.Present && h.Present {
			tb, th := b.Tokens, h.Tokens
			jr.Delta.Tokens, jr.Delta.CostUSD, jr.Delta.Seconds = Delta(&tb, &th), Delta(b.Cost, h.Cost), Delta(b.Seconds, h.Seconds)
		}
		out.Rows = append(out.Rows, jr)
	}
	return out
}

// Totals are each side's totals.
func (c *Compared) Totals() (base, head TotalsJSON) { return totalsJSON(c.Base), totalsJSON(c.Head) }

func totalsJSON(t store.SuiteTotals) TotalsJSON {
	s := StatsOf(t.CompareSide)
	out := TotalsJSON{Rows: t.Rows, PassK: t.AllPass, Runs: t.Runs, Passed: t.Passed, PassRate: s.Rate, Interval: [2]float64{s.Low, s.High},
		Tokens: t.Tokens, Seconds: float64(t.Millis) / 1000}
	if t.Count > 0 && t.Priced == t.Count {
		cost := t.Cost
		out.CostUSD = &cost
	}
	return out
}

func sideJSON(s SideStats, run, failed string) *SideJSON {
	if !s.Present {
		return nil
	}
	return &SideJSON{Runs: s.Runs, Passed: s.Passed, PassRate: s.Rate, Interval: [2]float64{s.Low, s.High}, PassK: s.PassK,
		Tokens: s.Tokens, CostUSD: s.Cost, Seconds: s.Seconds, Run: run, FirstFailure: failed}
}

// CompareOutput is how a comparison is written: in which format, which
// condition fails it, and (markdown) the dashboard's address to link runs
// to.
type CompareOutput struct {
	Format string // one of CompareFormats
	FailOn FailOn
	URL    string // "" links nothing
}

// Write writes the comparison (every row of it: Page 0) in o's format.
func (c *Compared) Write(w io.Writer, o CompareOutput) error {
	switch o.Format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c.JSON())
	case "junit":
		return c.writeJUnit(w, o)
	case "markdown":
		return c.writeMarkdown(w, o)
	case "text", "":
		return c.writeText(w, o)
	}
	return fmt.Errorf("format: want one of %s; got %q", strings.Join(CompareFormats(), ", "), o.Format)
}

// Verdict is the comparison's one-line verdict under condition on.
func (c *Compared) Verdict(on FailOn) string {
	var parts []string
	for _, k := range store.CompareClasses() {
		if n := c.Classes[k]; n > 0 && k != store.Unchanged {
			parts = append(parts, fmt.Sprintf("%d %s", n, ClassLabel(k)))
		}
	}
	found := "no change"
	if len(parts) > 0 {
		found = strings.Join(parts, ", ")
	}
	switch {
	case on == FailNever || on == "":
		return found
	case c.Fails(on):
		return "FAIL (--fail-on " + string(on) + "): " + found
	}
	return "OK (--fail-on " + string(on) + "): " + found
}

// ClassLabel is a class in words.
func ClassLabel(class string) string { return strings.ReplaceAll(class, "-", " ") }

// RowName names a row: its scenario, with its agent and model when rows
// are by agent and model.
func RowName(r store.CompareRow) string {
	if r.Agent == "" && r.Model == "" {
		return r.Scenario
	}
	return r.Scenario + " (" + r.Agent + ", " + r.Model + ")"
}

// RateText is a pass rate as "2/3 (67%, 21–94%)"; "—" with no run.
func RateText(s SideStats) string {
	if !s.Present {
		return "—"
	}
	if s.Runs == 0 {
		return "no verdict"
	}
	return fmt.Sprintf("%d/%d (%.0f%%, %.0f–%.0f%%)", s.Passed, s.Runs, 100*s.Rate, 100*s.Low, 100*s.High)
}

// CostText is a cost, "no price" when unknown.
func CostText(usd *float64) string {
	if usd == nil {
		return pricing.Format(0, false)
	}
	return pricing.Format(*usd, true)
}

// SignedText is a delta with its sign and unit ("" when unknown): "+1,200
// tokens", "-$0.0100", "+3.5s".
func SignedText(d *float64, unit string) string {
	if d == nil {
		return ""
	}
	sign := "+"
	switch {
	case *d < 0:
		sign = "-"
	case *d == 0:
		sign = "±"
	}
	v := *d
	if v < 0 {
		v = -v
	}
	switch unit {
	case "$":
		return sign + pricing.Format(v, true)
	case "s":
		return sign + strconv.FormatFloat(v, 'f', 1, 64) + "s"
	}
	return sign + strconv.FormatFloat(v, 'f', 0, 64) + " " + unit
}

// totalsRows are the totals as label, base, head.
func (c *Compared) totalsRows() [][3]string {
	b, h := c.Totals()
	rate := func(t TotalsJSON) string {
		return fmt.Sprintf("%d/%d (%.0f%%, %.0f–%.0f%%)", t.Passed, t.Runs, 100*t.PassRate, 100*t.Interval[0], 100*t.Interval[1])
	}
	return [][3]string{
		{"pass rate", rate(b), rate(h)},
		{"pass^k", fmt.Sprintf("%d/%d", b.PassK, b.Rows), fmt.Sprintf("%d/%d", h.PassK, h.Rows)},
		{"tokens", strconv.FormatInt(b.Tokens, 10), strconv.FormatInt(h.Tokens, 10)},
		{"cost", CostText(b.CostUSD), CostText(h.CostUSD)},
		{"wall time", strconv.FormatFloat(b.Seconds, 'f', 1, 64) + "s", strconv.FormatFloat(h.Seconds, 'f', 1, 64) + "s"},
	}
}

func (c *Compared) by() string {
	if c.ByModel {
		return "a scenario with one agent and model"
	}
	return "a scenario, its runs by every agent and model pooled (the suites ran different ones)"
}

func (c *Compared) writeText(w io.Writer, o CompareOutput) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "compare %s (head) with %s (base); a row is %s\n\n", c.HeadID, c.BaseID, c.by())
	fmt.Fprintf(tw, "\tbase\thead\n")
	for _, r := range c.totalsRows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], r[1], r[2])
	}
	fmt.Fprintln(tw)
	unchanged := 0
	for _, r := range c.Rows {
		if r.Class == store.Unchanged {
			unchanged++
			continue
		}
		l := LinksOf(r)
		b, h := StatsOf(r.Base), StatsOf(r.Head)
		detail := ""
		if l.FailedCheck != "" && r.Class != store.Fixed {
			detail = "first failing check: " + l.FailedCheck
		}
		fmt.Fprintf(tw, "%s\t%s\t%s → %s\t%s\tbase %s\thead %s\n", strings.ToUpper(ClassLabel(r.Class)), printable(RowName(r)), RateText(b), RateText(h), printable(detail), orDash(l.BaseRun), orDash(l.HeadRun))
	}
	if unchanged > 0 {
		fmt.Fprintf(tw, "(%d unchanged, passing on every repeat in both)\n", unchanged)
	}
	fmt.Fprintf(tw, "\n%s\n", c.Verdict(o.FailOn))
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// markdownRows is how many rows a markdown comparison lists: a pull
// request's comment is short.
const markdownRows = 50

func (c *Compared) writeMarkdown(w io.Writer, o CompareOutput) error {
	mark := "✅"
	if c.Fails(o.FailOn) {
		mark = "❌"
	}
	run := func(id string) string {
		if id == "" {
			return "—"
		}
		if o.URL == "" {
			return "`" + id + "`"
		}
		return "[" + mdEscape(id) + "](" + strings.TrimRight(o.URL, "/") + "/runs/" + id + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s proctor: `%s` compared with `%s`\n\n", mark, c.HeadID, c.BaseID)
	fmt.Fprintf(&b, "**%s**\n\n", mdEscape(c.Verdict(o.FailOn)))
	b.WriteString("| | base | head |\n|---|---|---|\n")
	for _, r := range c.totalsRows() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], mdEscape(r[1]), mdEscape(r[2]))
	}
	var listed []store.CompareRow
	for _, r := range c.Rows {
		if r.Class != store.Unchanged {
			listed = append(listed, r)
		}
	}
	if len(listed) > 0 {
		b.WriteString("\n| | scenario | base | head | first failing check | runs |\n|---|---|---|---|---|---|\n")
		for i, r := range listed {
			if i == markdownRows {
				fmt.Fprintf(&b, "\n…and %d more; `proctor compare %s %s` lists them all.\n", len(listed)-markdownRows, c.BaseID, c.HeadID)
				break
			}
			l := LinksOf(r)
			check := ""
			if r.Class != store.Fixed {
				check = mdEscape(l.FailedCheck)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s → %s |\n", ClassLabel(r.Class), mdEscape(RowName(r)), RateText(StatsOf(r.Base)), RateText(StatsOf(r.Head)), check, run(l.BaseRun), run(l.HeadRun))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printable is s with its control characters (a bundle's model or check
// name could hold a terminal's escape sequences) shown as U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

// mdEscape keeps text from being read as markdown or HTML in a table cell.
func mdEscape(s string) string {
	s = printable(strings.NewReplacer("\n", " ", "\r", " ").Replace(s))
	return strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]", "\n", " ", "\r", " ").Replace(s)
}

// The JUnit XML elements of a comparison.
type compareCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// writeJUnit writes a test case per row: a failure where the head fails it
// (regressed, newly flaky, still failing — marked with its class), skipped
// where the head has no verdict for it (removed, pending).
func (c *Compared) writeJUnit(w io.Writer, o CompareOutput) error {
	var cases []compareCase
	failures, skipped := 0, 0
	for _, r := range c.Rows {
		l := LinksOf(r)
		b, h := StatsOf(r.Base), StatsOf(r.Head)
		tc := compareCase{Name: RowName(r), Classname: "proctor.compare." + r.Scenario,
			SystemOut: fmt.Sprintf("%s: base %s (run %s), head %s (run %s)", ClassLabel(r.Class), RateText(b), orDash(l.BaseRun), RateText(h), orDash(l.HeadRun))}
		switch {
		case slices.Contains([]string{store.Regressed, store.NewlyFlaky, store.StillFailing}, r.Class) || (r.Class == store.Added && !h.PassK):
			failures++
			tc.Failure = &junitFailure{Message: ClassLabel(r.Class) + ": " + RateText(b) + " → " + RateText(h), Type: r.Class, Text: "first failing check: " + orDash(l.FailedCheck)}
		case r.Class == store.Removed || r.Class == store.Pending:
			skipped++
			tc.Skipped = &junitSkipped{Message: ClassLabel(r.Class)}
		}
		cases = append(cases, tc)
	}
	type testsuite struct {
		XMLName  xml.Name      `xml:"testsuite"`
		Name     string        `xml:"name,attr"`
		Tests    int           `xml:"tests,attr"`
		Failures int           `xml:"failures,attr"`
		Skipped  int           `xml:"skipped,attr"`
		Cases    []compareCase `xml:"testcase"`
	}
	io.WriteString(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(testsuite{Name: "proctor compare " + c.HeadID + " with " + c.BaseID, Tests: len(cases), Failures: failures, Skipped: skipped, Cases: cases}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
