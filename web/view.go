package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/records"
	"github.com/proctor-dev/proctor/internal/rules"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/runview"
	"github.com/proctor-dev/proctor/internal/store"
)

// Nav names the navigation entry of the current page.
type Nav string

// Navigation entries.
const (
	NavRuns     Nav = "runs"
	NavSessions Nav = "sessions"
	NavProblems Nav = "problems"
	NavLaunch   Nav = "launch"
	NavSuites   Nav = "suites"
	NavAudit    Nav = "audit"
	NavRules    Nav = "rules"
)

// Meta is what the layout needs from every page.
type Meta struct {
	Title    string
	Nav      Nav
	Problems int // shown as a badge on the problems entry
	DataDir  string
	CSRF     string // the token every form and HTMX request sends back
	CanRun   bool   // the server can launch runs and the user may (the demo button)
	Launches bool   // the server can launch runs (a reviewer's request for changes starts one)
	// Sandbox is why this host cannot confine a run's commands (with what
	// to change), "" when it can or runs are not confined.
	Sandbox string
	// User is the signed-in user and Role theirs; both empty when sign-in is
	// off (single-user on loopback).
	User      string
	Role      string
	CanReview bool // the user may approve or reject diffs and approval requests
	IsAdmin   bool // the user may launch and stop runs and read the audit log
	// Anonymous: sign-in is on and nobody is signed in (the sign-in page):
	// no nav, no problem count, no data folder.
	Anonymous bool
}

// SigninPage is the view model of the sign-in form.
type SigninPage struct {
	Meta  Meta
	Next  string // where to go after signing in
	User  string // the name typed, kept after an error
	Error string
}

// AuditPage is the view model of the audit log.
type AuditPage struct {
	Meta    Meta
	Entries []store.AuditEntry
	Next    int64 // the "before" of the next page; 0: none
}

// RunsPage is the view model of the runs list.
type RunsPage struct {
	Meta     Meta
	Filter   store.RunFilter
	Page     store.RunPage
	Facets   store.Facets
	Empty    bool // no run is indexed at all, as opposed to none matching the filter
	Error    string
	Statuses []bundle.Status
	// Queued are runs launched here that wait for their turn: they have no
	// bundle yet, so the index does not list them.
	Queued []QueuedRun
}

// QueuedRun is a run waiting in the launch queue.
type QueuedRun struct {
	RunID  string
	Title  string
	Place  int
	Queued time.Time
}

// Working reports whether a listed run is still working, so the list
// refreshes itself.
// PollEvery is how often the list is fetched again while it is open: "2s"
// while a run on it is queued or working, "5s" on the first page of the
// newest runs (where a run launched anywhere appears), "" otherwise.
func (p RunsPage) PollEvery() string {
	switch {
	case p.Working():
		return "2s"
	case p.Filter.After == "" && p.Filter.Before == "" && !p.Filter.Oldest && p.Error == "":
		return "5s"
	}
	return ""
}

func (p RunsPage) Working() bool {
	if len(p.Queued) > 0 {
		return true
	}
	for _, r := range p.Page.Runs {
		switch r.Status {
		case "queued", "running", "awaiting_approval":
			return true
		}
	}
	return false
}

// Filtered reports whether any filter is set.
func (p RunsPage) Filtered() bool {
	return p.Filter.Status != "" || p.Filter.Oldest || p.Filter.Narrows()
}

// NextURL is the link to the page after this one, keeping the filters.
func (p RunsPage) NextURL() string {
	return "/runs?" + filterQuery(p.Filter, "after", p.Page.Next).Encode()
}

// SelfURL is the link to this very page.
func (p RunsPage) SelfURL() string {
	if p.Filter.Before != "" {
		return "/runs?" + filterQuery(p.Filter, "before", p.Filter.Before).Encode()
	}
	return "/runs?" + filterQuery(p.Filter, "after", p.Filter.After).Encode()
}

// PrevURL is the link to the page before this one, keeping the filters.
func (p RunsPage) PrevURL() string {
	return "/runs?" + filterQuery(p.Filter, "before", p.Page.Prev).Encode()
}

// FirstURL is the link to the first page with the same filters.
func (p RunsPage) FirstURL() string {
	return "/runs?" + filterQuery(p.Filter, "", "").Encode()
}

// filterQuery is the query of the runs list with f's filters and a page
// cursor (param "after" or "before").
func filterQuery(f store.RunFilter, param, cursor string) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("status", f.Status)
	set("kind", f.Kind)
	set("scenario", f.Scenario)
	set("model", f.Model)
	set("agent", f.Agent)
	set("review", f.Review)
	set("suite", f.Suite)
	if !f.From.IsZero() {
		q.Set("from", f.From.Format("2006-01-02"))
	}
	if !f.To.IsZero() {
		q.Set("to", f.To.AddDate(0, 0, -1).Format("2006-01-02"))
	}
	if f.Oldest {
		q.Set("sort", "oldest")
	}
	set("q", f.Query)
	if param != "" {
		set(param, cursor)
	}
	if f.Limit > 0 && f.Limit != 50 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

// RunPage is the view model of one run.
type RunPage struct {
	Meta Meta
	*runview.View
	Reviewer    string            // the name the review form starts with
	ReviewError string            // why the last review attempt did nothing
	Pending     []PendingApproval // View.Pending, as the page shows them
	Diff        []DiffFile        // Files, highlighted and paired; for a large diff, the listed files only
	DiffLazy    bool              // a large diff: each file of Diff is loaded when opened
	Split       bool              // show the diff side by side
	Draft       Draft             // the reviewer's draft review of the run
	Models      Models            // the models Request changes may give the next message to
	Restored    string            // the run a request for changes went to that ended in error: its comments are back in the draft
	Detached    bool              // read away from the dashboard (an exported file, a share link): no links into it
	All         bool              // show the whole transcript and timeline at once (?all=1), not the newest part first
	// ScenarioFolder is where Make a scenario writes ("": the dashboard
	// has no scenario folder, and the form is not shown).
	ScenarioFolder string
	// ContinueAsSession offers Continue as a session: a scenario run that
	// has ended (records.Data.Continuable), on a dashboard that launches runs.
	ContinueAsSession bool
}

// NewRunPage is the page of run v: its approval boxes, and its diff
// (whole, or a large one's list of files) with the review controls where
// review is allowed, each file with the reviewer's draft.
func NewRunPage(meta Meta, v *runview.View, review bool, draft Draft, split bool) RunPage {
	p := RunPage{Meta: meta, View: v, Draft: draft, Split: split}
	for _, r := range v.Pending {
		p.Pending = append(p.Pending, PendingApproval{ID: r.ID, CallID: r.CallID, Tool: r.Tool, Args: r.Args, Command: r.Command(), Asked: r.Asked})
	}
	if Inline(v.Files) {
		p.Diff = BuildDiff(v.Files)
	} else {
		p.Diff, p.DiffLazy = ListDiff(v.Files), true
	}
	for i := range p.Diff {
		p.Diff[i].Review, p.Diff[i].Draft, p.Diff[i].RunID = p.ByParts() && review, draft, v.Run.RunID
	}
	return p
}

// SessionsPage is the view model of the sessions list.
type SessionsPage struct {
	Meta  Meta
	Page  store.SessionPage
	After string
}

// SessionPage is the view model of one session.
type SessionPage struct {
	Meta    Meta
	Session *store.SessionDetail
	Models  Models            // profiles the session may continue with
	Roots   []string          // source roots a model script may be under
	Values  LaunchValues      // the continue form as typed (Task, Model, Allow, Root, Script)
	Errors  map[string]string // by field
	// Requests are the changes reviewers asked of the session's runs, in
	// the runs' order.
	Requests []records.RequestState
	// Pushed: the session was pushed to this host from elsewhere; it is
	// shown, never continued here.
	Pushed bool
}

// Cost is what the session's indexed runs cost together ("no price" when
// one has no price).
func (p SessionPage) Cost() string {
	total := 0.0
	for _, sr := range p.Session.Runs {
		if sr.Run == nil || sr.Run.CostUSD == nil {
			return formatCost(nil)
		}
		total += *sr.Run.CostUSD
	}
	return formatCost(&total)
}

// commentTally counts the comments of requests by the state of their
// threads.
func commentTally(requests []records.RequestState) string {
	n, by := 0, map[string]int{}
	for _, rq := range requests {
		for i := range rq.Comments {
			n++
			by[rq.State(i)]++
		}
	}
	out := fmt.Sprintf("%s: %d addressed, %d open", plural(n, "comment", "comments"), by[records.ThreadAddressed], by[records.ThreadOpen])
	if by[records.ThreadResolved] > 0 {
		out += fmt.Sprintf(", %d resolved", by[records.ThreadResolved])
	}
	return out
}

// threadBadge is the badge class of a thread's state.
func threadBadge(state string) string {
	if state == records.ThreadOpen {
		return "badge plain"
	}
	return "badge good"
}

// ProblemsPage is the view model of the index problems page.
type ProblemsPage struct {
	Meta     Meta
	Problems []store.ProblemRow
}

// Bundles groups the problems by bundle path, keeping their order.
func (p ProblemsPage) Bundles() [][]store.ProblemRow {
	var out [][]store.ProblemRow
	for _, pr := range p.Problems {
		if n := len(out); n > 0 && out[n-1][0].BundlePath == pr.BundlePath {
			out[n-1] = append(out[n-1], pr)
			continue
		}
		out = append(out, []store.ProblemRow{pr})
	}
	return out
}

// ErrorPage is the view model of an error page.
type ErrorPage struct {
	Meta    Meta
	Status  int
	Message string
}

// URLs are built only here, each id escaped as one path segment or query
// value: ids come from bundles, which may have been made anywhere.
func runURL(id string) string      { return "/runs/" + url.PathEscape(id) }
func sessionURL(id string) string  { return "/sessions/" + url.PathEscape(id) }
func suiteURL(id string) string    { return "/suites/" + url.PathEscape(id) }
func scenarioURL(id string) string { return "/scenarios/" + url.PathEscape(id) }

// sessionsURL is the sessions list after a cursor.
func sessionsURL(after string) string { return "/sessions?" + url.Values{"after": {after}}.Encode() }

// runsURL is the runs list filtered by one field.
func runsURL(field, value string) string { return "/runs?" + url.Values{field: {value}}.Encode() }

// threadID is the element id of comment i of a change request.
func threadID(rq records.RequestState, i int) string {
	return "thread-" + rq.RunID + "-" + itoa(rq.Index) + "-" + itoa(i)
}

// replyURL is where a reply to comment i of a change request goes.
func replyURL(rq records.RequestState, i int) string {
	return runURL(rq.RunID) + "/requests/" + itoa(rq.Index) + "/comments/" + itoa(i) + "/replies"
}

// resolveURL is where comment i of a change request is resolved, or
// opened again.
func resolveURL(rq records.RequestState, i int) string {
	return runURL(rq.RunID) + "/requests/" + itoa(rq.Index) + "/comments/" + itoa(i) + "/resolve"
}

func gapCols(split bool) string {
	if split {
		return "4"
	}
	return "3"
}

func upDown(up bool, a, b string) string {
	if up {
		return a
	}
	return b
}

// modelCall says what a model call cost: its turn, time and tokens.
func modelCall(c *runview.ModelCall) string {
	parts := []string{"model call"}
	if c.Turn > 0 {
		parts[0] += " " + itoa(c.Turn)
	}
	if c.Took > 0 {
		parts = append(parts, formatDuration(c.Took))
	}
	tokens := formatCount(c.PromptTokens) + " in, " + formatCount(c.CompletionTokens) + " out"
	if c.CacheReadTokens > 0 {
		tokens += " (" + formatCount(c.CacheReadTokens) + " in from cache)"
	}
	parts = append(parts, tokens)
	if c.Finish != "" && c.Finish != "stop" && c.Finish != "tool_calls" {
		parts = append(parts, "ended: "+c.Finish)
	}
	return strings.Join(parts, " · ")
}

// maxChangeLines is how many lines of a write or an edit the transcript
// shows.
const maxChangeLines = 400

func shownChange(lines []runview.ChangeLine) []runview.ChangeLine {
	return lines[:min(len(lines), maxChangeLines)]
}

func changeClass(op byte) string {
	switch op {
	case '+':
		return "add"
	case '-':
		return "del"
	}
	return "ctx"
}

// patchLineClass colours a line of a patch a tool call carries.
func patchLineClass(l string) string {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "*** "):
		return "ctx"
	case strings.HasPrefix(l, "+"):
		return "add"
	case strings.HasPrefix(l, "-"):
		return "del"
	}
	return "ctx"
}

// shortOutput is the number of lines up to which a tool's output starts
// open.
const shortOutput = 12

// longText is the size above which a transcript body starts collapsed.
const longText = 2000

// maxShown is how much of one text a page shows; the rest is behind a link
// to the whole file.
const maxShown = 20000

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// approvalURL is where a decision on request number n of a run is posted.
func approvalURL(runID string, n int64) string {
	return runURL(runID) + "/approvals/" + strconv.FormatInt(n, 10)
}

func fileURL(runID, name string) string {
	return "/runs/" + url.PathEscape(runID) + "/files/" + url.PathEscape(name)
}

func lineClass(k patch.LineKind) string {
	switch k {
	case patch.Added:
		return "add"
	case patch.Deleted:
		return "del"
	case patch.Note:
		return "note"
	}
	return "ctx"
}

func linePrefix(k patch.LineKind) string {
	if k == patch.Note {
		return ""
	}
	return string(rune(k))
}

// bigFile is the number of diff lines above which a file starts collapsed.
const bigFile = 400

// PendingPage is the view model of a run that was launched but has no
// bundle yet.
type PendingPage struct {
	Meta  Meta
	RunID string
	Title string
	State string
	Place int
}

// eventsURL is the live stream of a run's events after seq after, for a
// page that shows the approval requests pending (by the board's numbers).
func eventsURL(id string, after int64, pending []PendingApproval, status bundle.Status) string {
	shown := make([]string, len(pending))
	for i, a := range pending {
		shown[i] = strconv.FormatInt(a.ID, 10)
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "shown": {strings.Join(shown, ",")}, "status": {string(status)}}
	return "/runs/" + url.PathEscape(id) + "/events?" + q.Encode()
}

func lastSeq(events []bundle.Event) int64 {
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].Seq
}

func csrfHeaders(token string) string {
	return `{"X-CSRF-Token": "` + token + `"}`
}

// DiffFilePage is one file of a run's diff, loaded on its own.
type DiffFilePage struct {
	Meta  Meta
	RunID string
	File  DiffFile
	Split bool
}

// ByParts reports whether a person may decide on this run's diff part by
// part here: it awaits review and the viewer may review.
func ByParts(m Meta, rc bundle.Receipt) bool {
	return m.CanReview && rc.Review == nil && rc.Status == bundle.StatusAwaitingReview
}

// partsVerb is what a review part by part did with the accepted parts: a
// git run's are offered, not applied.
func partsVerb(rc bundle.Receipt) string {
	if rc.Source.IsGit() {
		return "accepted"
	}
	return "applied"
}

// ByParts: see the function.
func (p RunPage) ByParts() bool { return !p.Live && ByParts(p.Meta, p.Run.Receipt) }

// RuleSource is the source a rule made on the run for "its source" names:
// the folder or repository the run was launched on (the demo project for
// a demo run, which works on a copy of its own).
func (p RunPage) RuleSource() string { return rules.WhereRun(p.Run.Receipt).Source }

// ShowStop reports whether the page offers to stop the run: it runs here
// and the user may stop runs.
func (p RunPage) ShowStop() bool { return p.CanStop && p.Meta.CanRun }

// CanRequestChanges reports whether the page offers to request changes:
// the user reviews, this server runs agents, and the run is not a
// scenario's (change the scenario instead).
func (p RunPage) CanRequestChanges() bool {
	return p.Meta.CanReview && p.Meta.Launches && p.Run.Receipt.Kind != bundle.KindScenario
}

// Viewed is how many of the listed files the reviewer marked viewed.
func (p RunPage) Viewed() string {
	n := 0
	for _, f := range p.Diff {
		if p.Draft.Viewed(f.Index) {
			n++
		}
	}
	return itoa(n)
}

// Parts is how many parts a review part by part decides on: every part of
// every file the page lists, loaded or not.
func (p RunPage) Parts() int {
	n := 0
	for _, f := range p.Diff {
		n += f.Parts
	}
	return n
}

// Resumable reports whether the page offers to resume the run: this server
// runs agents and the run is one that can be resumed (run.Resumable).
func (p RunPage) Resumable() bool { return p.Meta.CanRun && run.Resumable(p.Run.Receipt) == nil }

// NoChanges reports whether the run ended well without changing anything:
// green alone would read as "it did the work".
func (p RunPage) NoChanges() bool {
	return !p.Live && p.Run.Status == bundle.StatusPassed && len(p.Run.Receipt.Changed) == 0
}

// failedTools names the tool calls whose results were errors ("edit_file
// (call_3)"), from the run's events.
func failedTools(events []bundle.Event) []string {
	var out []string
	for _, ev := range events {
		if ev.Type != bundle.EventToolResult {
			continue
		}
		var d struct {
			ID   string `json:"id"`
			Name string `json:"name"`
			OK   *bool  `json:"ok"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.OK != nil && !*d.OK {
			out = append(out, d.Name+" ("+d.ID+")")
		}
	}
	return out
}

// PendingApproval is a gated tool call the run waits on.
type PendingApproval struct {
	ID      int64  // the board's number: the only part of a request in its URL
	CallID  string // the model's id: shown, never put in a URL
	Tool    string
	Args    string
	Command string
	Asked   time.Time
}

// LaunchValues are the launch form's fields as typed.
type LaunchValues = launch.Task

// LaunchPage is the view model of the launch form.
type LaunchPage struct {
	Meta   Meta
	Roots  []string
	Models Models
	Agents []string // the agents one may pick, native first
	// Missing are the agents whose program is not on the server's PATH,
	// each with how to install it.
	Missing map[string]string
	Values  LaunchValues
	Errors  map[string]string // by field name
}

// sandboxOptions are the sandbox modes a launch may choose.
func sandboxOptions() []Option {
	return []Option{
		{"workspace", "workspace — write only the workspace, no network (default)"},
		{"strict", "strict — also no toolchain allow-list"},
		{"off", "off — the server's own permissions"},
	}
}

// AgentLabel is how a form names an agent.
func AgentLabel(name string) string {
	switch name {
	case "native":
		return "native — proctor's own agent"
	}
	if title, bin, ok := external.Title(name); ok {
		return fmt.Sprintf("%s — %s (%s on the server's PATH)", name, title, bin)
	}
	return name
}

// Models are the model profiles a form offers, and the models.yaml they
// come from (to say where to add one).
type Models struct {
	File     string
	Profiles []string
	Builtins []Option // scripted models that come with proctor (no key, no network)
}

// Option is one choice of a select: what is sent and what is shown.
type Option struct {
	Value, Label string
}

// anyOf is options led by "any" (no filter).
func anyOf(options ...Option) []Option { return append([]Option{{"", "any"}}, options...) }

// valueOptions shows each non-empty value as itself.
func valueOptions(values []string) []Option {
	var out []Option
	for _, v := range values {
		if v != "" {
			out = append(out, Option{v, v})
		}
	}
	return out
}

// StatusOptions are the status filter's choices.
func (p RunsPage) StatusOptions() []Option {
	var out []Option
	for _, s := range p.Statuses {
		out = append(out, Option{string(s), humanStatus(s)})
	}
	return anyOf(out...)
}

func sortValue(oldest bool) string {
	if oldest {
		return "oldest"
	}
	return "newest"
}

// suggestPrefix is what an approval rule made from a command starts with:
// its first two words (the program and what it does: "go test"), or the
// command when it has shell operators (a rule never allows those unless it
// says so; the person sees why it is refused).
func suggestPrefix(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

// ruleEnds says when a rule stops: its revocation, its expiry, or never.
func ruleEnds(r rules.Rule) string {
	switch {
	case r.Revoked != nil:
		return "revoked by " + r.RevokedBy + " at " + r.Revoked.UTC().Format("2006-01-02 15:04")
	case r.Expires != nil:
		return r.Expires.UTC().Format("2006-01-02 15:04")
	}
	return "when revoked"
}

// failureTitle names a run's failure in words: its domain, then its code
// ("Agent: checks failed").
func failureTitle(f *bundle.Failure) string {
	domain := string(f.Domain)
	if domain != "" {
		domain = strings.ToUpper(domain[:1]) + domain[1:] + ": "
	}
	return domain + strings.ReplaceAll(f.Code, "_", " ")
}
