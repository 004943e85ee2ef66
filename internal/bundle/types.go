package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Schema versions carried by the files of a bundle.
const (
	ReceiptSchema = "proctor.receipt.v1"
	VerdictSchema = "proctor.verdict.v1"
	SessionSchema = "proctor.session.v1"
)

// File names inside a run bundle folder.
const (
	ReceiptFile    = "run.json"
	EventsFile     = "events.jsonl"
	ExchangesFile  = "exchanges.jsonl"
	AgentLogFile   = "agent.log" // an external agent's stdout and stderr
	TranscriptFile = "transcript.md"
	DiffFile       = "diff.patch"
	AcceptedFile   = "accepted.patch" // a git run approved part by part: the change it offers
	VerdictFile    = "verdict.json"
	CommentsFile   = "comments.json" // reviewers' requests for changes
)

// FileNames are the files a run bundle may hold, in the order people read
// them.
func FileNames() []string {
	return []string{ReceiptFile, EventsFile, ExchangesFile, SegmentsFile, TranscriptFile, DiffFile, AcceptedFile, VerdictFile, AgentLogFile, CommentsFile}
}

// Present lists the files of FileNames that the bundle folder dir holds and
// that are not empty (a run that is still working, or that changed nothing,
// has no transcript or diff yet).
func Present(dir string) []string {
	var out []string
	for _, name := range FileNames() {
		if info, err := os.Lstat(filepath.Join(dir, name)); err == nil && info.Mode().IsRegular() && info.Size() > 0 {
			out = append(out, name)
		}
	}
	return out
}

// Kind says what started a run.
type Kind string

// Run kinds.
const (
	KindTask     Kind = "task"
	KindScenario Kind = "scenario"
)

// Status is where a run is in its life.
type Status string

// Run statuses.
const (
	StatusQueued           Status = "queued"
	StatusRunning          Status = "running"
	StatusAwaitingReview   Status = "awaiting_review"
	StatusAwaitingInput    Status = "awaiting_input"    // the agent asked the user a question
	StatusAwaitingApproval Status = "awaiting_approval" // a gated tool call waits for a person
	StatusPassed           Status = "passed"
	StatusFailed           Status = "failed"
	StatusError            Status = "error"
	StatusInterrupted      Status = "interrupted"
)

// Statuses lists every run status in display order.
func Statuses() []Status {
	return []Status{StatusQueued, StatusRunning, StatusAwaitingApproval, StatusAwaitingReview, StatusAwaitingInput, StatusPassed,
		StatusFailed, StatusError, StatusInterrupted}
}

// Stage is the step of the run pipeline a run is in (or stopped in).
type Stage string

// Run stages.
const (
	StageAcquiringSource    Stage = "acquiring_source"
	StagePreparingWorkspace Stage = "preparing_workspace"
	StageWarmingCaches      Stage = "warming_caches" // a sandboxed run's toolchain caches, filled once before any agent runs
	StageValidatingScenario Stage = "validating_scenario"
	StageRunning            Stage = "running"
	StageChecking           Stage = "checking"
	StageVerifying          Stage = "verifying"
	StageAwaitingReview     Stage = "awaiting_review"
	StageApplying           Stage = "applying"
	StageCompleted          Stage = "completed"
	StageFailed             Stage = "failed"
)

// Domain names who is at fault when a run fails.
type Domain string

// Failure domains.
const (
	DomainAgent          Domain = "agent"
	DomainModel          Domain = "model"
	DomainEnvironment    Domain = "environment"
	DomainScenario       Domain = "scenario"
	DomainCheck          Domain = "check"
	DomainInfrastructure Domain = "infrastructure"
	DomainSource         Domain = "source" // the run's git source could not be acquired
)

// Receipt is run.json: the summary record of one run.
type Receipt struct {
	Schema     string       `json:"schema"`
	RunID      string       `json:"run_id"`
	SessionID  string       `json:"session_id,omitempty"`
	Addresses  string       `json:"addresses,omitempty"` // the run whose requested changes this run was asked to make
	Resumes    string       `json:"resumes,omitempty"`   // the interrupted run this run goes on from
	Kind       Kind         `json:"kind"`
	Status     Status       `json:"status"`
	Stage      Stage        `json:"stage"`
	Failure    *Failure     `json:"failure,omitempty"`
	Task       string       `json:"task"`
	Criteria   []string     `json:"criteria,omitempty"`
	OutOfScope []string     `json:"out_of_scope,omitempty"`
	Source     Source       `json:"source"`
	Model      Model        `json:"model"`
	Agent      *Agent       `json:"agent,omitempty"`   // nil: proctor's own agent
	Sandbox    string       `json:"sandbox,omitempty"` // workspace | strict | off: how its commands were confined ("": not, before proctor had a sandbox)
	Walls      *Walls       `json:"walls,omitempty"`   // the walls its confined commands had (nil: none ran confined, or before proctor recorded them)
	Bounds     Bounds       `json:"bounds"`
	Usage      Usage        `json:"usage"`
	StartedAt  time.Time    `json:"started_at"`
	EndedAt    *time.Time   `json:"ended_at,omitempty"`
	Changed    []string     `json:"changed,omitempty"`
	Verify     *Verify      `json:"verify,omitempty"`
	Review     *Review      `json:"review,omitempty"`
	Scenario   *ScenarioRef `json:"scenario,omitempty"`
}

// Walls are the walls of the sandbox a run's commands had, as the host
// gave them (internal/sandbox.Walls).
type Walls struct {
	Namespaces  []string `json:"namespaces"`          // user, mount, pid, network, ipc, uts
	Seccomp     bool     `json:"seccomp"`             // proctor's seccomp filter
	LandlockABI int      `json:"landlock_abi"`        // the Landlock ABI its rules used; 0 none
	Landlock    []string `json:"landlock,omitempty"`  // what those rules covered (files, refer, truncate, tcp, ioctl-dev, signals, abstract-unix, unix-sockets)
	Caches      string   `json:"caches,omitempty"`    // "overlay" (warm, copy-on-write) or "plain: WHY" (empty folders of the run's own)
	ID          int      `json:"id,omitempty"`        // the host id its commands ran as
	IDShared    bool     `json:"id_shared,omitempty"` // that id is proctor's user's own, which the user's other runs share (no ids of the run's own)
}

// String is the walls in a line.
func (w Walls) String() string {
	parts := []string{strings.Join(w.Namespaces, ", ") + " namespaces"}
	if w.Seccomp {
		parts = append(parts, "seccomp")
	}
	if w.LandlockABI > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d (%s)", w.LandlockABI, strings.Join(w.Landlock, ", ")))
	} else {
		parts = append(parts, "no Landlock")
	}
	if w.Caches != "" {
		parts = append(parts, "caches "+w.Caches)
	}
	switch {
	case w.IDShared:
		parts = append(parts, fmt.Sprintf("as id %d (proctor's user's own, shared with the user's other runs)", w.ID))
	case w.ID > 0:
		parts = append(parts, fmt.Sprintf("as id %d (the run's own)", w.ID))
	}
	return strings.Join(parts, "; ")
}

// Failure says why a run did not finish its work.
type Failure struct {
	Domain    Domain `json:"domain"`
	Stage     Stage  `json:"stage"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Source says where the run's workspace came from.
type Source struct {
	Kind       SourceKind `json:"kind"`
	Path       string     `json:"path,omitempty"`
	Repository string     `json:"repository,omitempty"`
	Ref        string     `json:"ref,omitempty"`
	CommitSHA  string     `json:"commit_sha,omitempty"`
	Tree       string     `json:"tree,omitempty"` // git sources: the commit's tree, a digest of its content
	// Origin is what the source was chosen as when the run works on a copy
	// made for it (the demo project): approval rules for the source name it.
	Origin string `json:"origin,omitempty"`
}

// AwaitingReview says whether the run's diff waits for a person's
// decision: it finished, and nobody has decided on it yet.
func (r Receipt) AwaitingReview() bool { return r.Status == StatusAwaitingReview && r.Review == nil }

// SourceKind is where a run's source came from.
type SourceKind string

// The kinds of source.
const (
	SourceLocal   SourceKind = "local"   // a folder on this machine, which an approval writes
	SourceGit     SourceKind = "git"     // a repository cloned at a commit; an approval yields a patch
	SourceFixture SourceKind = "fixture" // a scenario's fixture folder
)

// IsGit says whether the source is a repository (its change is a patch to
// hand on, not written to a folder).
func (s Source) IsGit() bool { return s.Kind == SourceGit }

// Model names the model a run talked to. It never holds a key.
type Model struct {
	Profile string `json:"profile,omitempty"`
	Name    string `json:"name"`
	BaseURL string `json:"base_url,omitempty"`
}

// scriptProfile starts Model.Profile for a run against a model script.
const scriptProfile = "script:"

// ScriptProfile is Model.Profile of a run against the model script file
// (its base name).
func ScriptProfile(file string) string { return scriptProfile + file }

// ProfileName is the models.yaml profile the run talked to, "" for a
// model script.
func (m Model) ProfileName() string {
	if strings.HasPrefix(m.Profile, scriptProfile) {
		return ""
	}
	return m.Profile
}

// Agent is the agent that did a run's work, when it was not proctor's own.
type Agent struct {
	Kind    string   `json:"kind"` // native | codex | command
	Name    string   `json:"name"`
	Version string   `json:"version,omitempty"`
	Command []string `json:"command,omitempty"` // as configured ({{task}} not filled in)
	Log     string   `json:"log,omitempty"`     // the file of its output in the bundle: agent.log
}

// Bounds are the limits a run was held to.
type Bounds struct {
	MaxTurns           int   `json:"max_turns"`
	MaxToolCalls       int   `json:"max_tool_calls"`
	MaxToolOutputChars int   `json:"max_tool_output_chars"`
	MaxFiles           int   `json:"max_files"`
	MaxWorkspaceBytes  int64 `json:"max_workspace_bytes"`
	MaxFileBytes       int64 `json:"max_file_bytes"`
	WallClockS         int   `json:"wall_clock_s,omitempty"`  // the whole run; 0 no limit
	MaxTokens          int64 `json:"max_tokens,omitempty"`    // total tokens of the model's replies; 0 no limit
	MaxProcesses       int   `json:"max_processes,omitempty"` // processes and threads of one sandboxed command and its children; 0 no limit
	MaxCPUS            int   `json:"max_cpu_s,omitempty"`     // CPU seconds of each process of a sandboxed command (RLIMIT_CPU); 0 no limit
	// MaxCostUSD bounds what the model's replies may cost, in US dollars by
	// the price table (a model without a price cannot run under it); 0 no
	// limit.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// Usage counts what a run spent on its model.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	ModelCalls       int64 `json:"model_calls"`
	// Of the prompt tokens, those read from the provider's cache and those
	// written to it, when the provider says.
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Verify is what was checked after the agent finished: check commands run in
// the workspace, and a verifier model's opinion.
type Verify struct {
	Verdict    string        `json:"verdict"` // pass | fail | unsure
	Issues     []string      `json:"issues,omitempty"`
	Confidence float64       `json:"confidence"`
	ParseOK    *bool         `json:"parse_ok,omitempty"` // false when the verifier's answer could not be read
	Model      string        `json:"model,omitempty"`    // the verifier model, when one was asked
	Checks     []CheckResult `json:"checks,omitempty"`   // check commands, phase "verify"
}

// ReviewedChange is what a reviewer decided on a run's diff, as a CI job that
// lands it needs it (GET /api/v1/runs/{id}/decision, proctor apply
// --from): the review (nil while none is made), the diff as the run
// recorded it (its index lines say what each file was before the run),
// and the accepted change — the whole diff, or its accepted parts with
// their edits — once it is approved.
type ReviewedChange struct {
	RunID    string  `json:"run_id"`
	Status   Status  `json:"status"`
	Review   *Review `json:"review"`
	Diff     string  `json:"diff"`
	Accepted string  `json:"accepted,omitempty"`
}

// Review is a person's decision on the run's diff.
type Review struct {
	Approved   bool      `json:"approved"`
	Reason     string    `json:"reason,omitempty"`
	Changed    []string  `json:"changed,omitempty"` // paths the approved diff wrote in the source tree
	ReviewedBy string    `json:"reviewed_by"`
	ReviewedAt time.Time `json:"reviewed_at"`
	HasDiff    bool      `json:"has_diff"`
	Applied    bool      `json:"applied"`
	// Forced: approved and applied although the run did not succeed (its
	// status and failure stay as they were).
	Forced bool `json:"forced,omitempty"`
	// A review part by part ("Apply accepted"): the hunks and whole files
	// applied, those rejected (or given no decision), and the hunks the
	// reviewer edited before they were applied. Empty for a decision on
	// the whole diff.
	AppliedParts  []ReviewPart `json:"applied_parts,omitempty"`
	RejectedParts []ReviewPart `json:"rejected_parts,omitempty"`
	Edits         []ReviewEdit `json:"edits,omitempty"`
}

// ReviewPart is a hunk of a file, or a whole file, of a run's diff.
type ReviewPart struct {
	Path   string `json:"path"`
	Hunk   int    `json:"hunk"`             // 1-based, in the file; 0: the whole file
	Header string `json:"header,omitempty"` // the hunk's @@ line
}

// ReviewEdit is a hunk the reviewer rewrote: its new side as the agent
// proposed it and as it was applied.
type ReviewEdit struct {
	ReviewPart
	Proposed string `json:"proposed"`
	Applied  string `json:"applied"`
}

// ScenarioRef ties a scenario run to the scenario it played.
type ScenarioRef struct {
	ID     string `json:"id"`
	Path   string `json:"path,omitempty"`
	Repeat int    `json:"repeat"`          // 1-based repetition number
	Suite  string `json:"suite,omitempty"` // the suite run it belongs to
	// Tags are the scenario's tags when it ran, so a suite's matrix can be
	// filtered by them from the index alone.
	Tags []string `json:"tags,omitempty"`
}

// Event is one line of events.jsonl.
type Event struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Exchange is one line of exchanges.jsonl: a model request and its response.
type Exchange struct {
	Seq        int64     `json:"seq"`
	Time       time.Time `json:"time"`
	DurationMS int64     `json:"duration_ms"`
	Attempt    int       `json:"attempt,omitempty"` // 1 for a call's first try, 2 for its first retry, …
	API        string    `json:"api,omitempty"`     // chat (also when empty) or responses: how to read request and response
	// Call is what a call beside the model calls asked (count_tokens, a
	// models list); absent for a model call. Readers of the conversation
	// skip them (ModelCall).
	Call string `json:"call,omitempty"`
	// Request is the request recorded whole, as older bundles hold it; a
	// bundle of now records it as the first Keep pieces of exchange Base's
	// request and its own Pieces (segments.bin; ExchangeLog.Request
	// rebuilds it).
	Request  json.RawMessage `json:"request,omitempty"`
	Base     int64           `json:"base,omitempty"`
	Keep     int             `json:"keep,omitempty"`
	Pieces   []Piece         `json:"pieces,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// ModelCall reports whether the exchange is a model call (a turn of the
// conversation), not a call beside them.
func (x Exchange) ModelCall() bool { return x.Call == "" }

// Verdict is verdict.json: the outcome of a scenario run's checks.
type Verdict struct {
	Schema       string        `json:"schema"`
	Scenario     string        `json:"scenario"`
	Passed       bool          `json:"passed"`
	FirstFailure string        `json:"first_failure,omitempty"`
	Results      []CheckResult `json:"results"`
	Aborted      string        `json:"aborted,omitempty"` // the budget that aborted the run, e.g. "wall_clock_s=60"
	Exchanges    int           `json:"exchanges"`
	ScenarioFile string        `json:"scenario_file,omitempty"`
	RunDir       string        `json:"run_dir,omitempty"`
}

// CheckResult is the outcome of one check. Broken means the check itself
// could not judge (the scenario author's mistake), apart from failed.
type CheckResult struct {
	Phase  string `json:"phase"`
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Broken bool   `json:"broken"`
	Detail string `json:"detail,omitempty"`
}

// Session is sessions/<session_id>.json: a conversation over one workspace.
type Session struct {
	Schema    string `json:"schema"`
	SessionID string `json:"session_id"`
	Title     string `json:"title,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Source is the folder the session's first run copied: every run of
	// the session is applied there, in order.
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Runs      []string  `json:"runs"`
	Bounds    Bounds    `json:"bounds"`
}

// CommentsSchema is the version of comments.json.
const CommentsSchema = "proctor.comments.v1"

// Comments is comments.json: the changes reviewers asked of a run, each
// continued as the next run of its session.
type Comments struct {
	Schema   string          `json:"schema"`
	Requests []ChangeRequest `json:"requests"`
}

// ChangeRequest is one "request changes": a summary and comments on lines
// of the diff, sent to the agent as the next user turn.
type ChangeRequest struct {
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Summary  string    `json:"summary"`
	Comments []Comment `json:"comments,omitempty"`
	Session  string    `json:"session"`            // the session the next run continues
	NextRun  string    `json:"next_run,omitempty"` // the run that was asked to make them
}

// Comment is a reviewer's remark on lines of a file of the diff, with the
// code it is about. Its lines are named as GitHub's review comments name
// them: Line on Side ("old" for the old file's numbering, a deleted line;
// "" for the new file's), and for a range of lines its first, StartLine on
// StartSide.
type Comment struct {
	Path      string      `json:"path"`
	Line      int         `json:"line,omitempty"` // 0: the file, or the hunk
	Side      string      `json:"side,omitempty"`
	StartLine int         `json:"start_line,omitempty"` // 0: the comment is on one line
	StartSide string      `json:"start_side,omitempty"`
	Quote     string      `json:"quote,omitempty"`
	Text      string      `json:"text"`
	Replies   []Reply     `json:"replies,omitempty"` // the comment's thread, in order
	Resolved  *Resolution `json:"resolved,omitempty"`
}

// SideOld is the side of a comment's line numbered as in the old file.
const SideOld = "old"

// Resolution is who marked a comment's thread resolved, and when.
type Resolution struct {
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// Reply is a reviewer's answer in a comment's thread.
type Reply struct {
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}
