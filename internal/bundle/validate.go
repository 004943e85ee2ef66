package bundle

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var safeIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a folder or file safely: letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 128
// characters, and never "..".
func ValidID(id string) bool {
	return safeIDPattern.MatchString(id) && !strings.Contains(id, "..")
}

// validRelPath reports whether p is a clean, relative, slash-separated path
// that stays inside the folder it is relative to.
func validRelPath(p string) bool {
	if raw, err := strconv.Unquote(p); err == nil && strings.HasPrefix(p, `"`) && PathName(raw) == p {
		p = raw // a name PathName quoted: its bytes are what must be a clean path
	} else if strings.Contains(p, `\`) || strings.HasPrefix(p, `"`) {
		return false
	}
	if p == "" || strings.ContainsRune(p, 0) {
		return false
	}
	if path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	return p != ".." && !strings.HasPrefix(p, "../")
}

var (
	validKinds   = []Kind{KindTask, KindScenario}
	validStages  = []Stage{StageAcquiringSource, StagePreparingWorkspace, StageWarmingCaches, StageValidatingScenario, StageRunning, StageChecking, StageVerifying, StageAwaitingReview, StageApplying, StageCompleted, StageFailed}
	validDomains = []Domain{DomainAgent, DomainModel, DomainEnvironment, DomainScenario, DomainCheck, DomainInfrastructure, DomainSource}
	validAgents  = AgentKinds()
	// validNamespaces are the namespaces a sandbox gives (sandbox.Namespaces).
	validNamespaces = []string{"user", "mount", "pid", "network", "ipc", "uts"}
	validSources    = []SourceKind{SourceLocal, SourceGit, SourceFixture}
	validVerdicts   = []string{"pass", "fail", "unsure"}
)

func quoted[T ~string](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// Validate checks a receipt against the proctor.receipt.v1 rules. folder is the
// name of the bundle folder the receipt was read from ("" to skip that rule).
func (r *Receipt) Validate(file, folder string) error {
	l := &problemList{file: file}
	if !checkSchema(l, r.Schema, ReceiptSchema) {
		return l.err() // the other rules belong to another version
	}
	switch {
	case r.RunID == "":
		l.add("run_id", "missing")
	case !ValidID(r.RunID):
		l.add("run_id", "%q is not a safe folder name (letters, digits, '.', '_', '-'; at most 128)", r.RunID)
	case folder != "" && folder != r.RunID:
		l.add("run_id", "%q does not match its folder name %q", r.RunID, folder)
	}
	if r.SessionID != "" && !ValidID(r.SessionID) {
		l.add("session_id", "%q is not a safe file name", r.SessionID)
	}
	if !slices.Contains(validKinds, r.Kind) {
		l.add("kind", "%q is not one of %s", r.Kind, quoted(validKinds))
	}
	if !slices.Contains(Statuses(), r.Status) {
		l.add("status", "%q is not one of %s", r.Status, quoted(Statuses()))
	}
	if !slices.Contains(validStages, r.Stage) {
		l.add("stage", "%q is not one of %s", r.Stage, quoted(validStages))
	}
	validateFailure(l, r.Failure)
	if !slices.Contains(validSources, r.Source.Kind) {
		l.add("source.kind", "%q is not one of %s", r.Source.Kind, quoted(validSources))
	}
	if r.Model.Name == "" {
		l.add("model.name", "missing")
	}
	if r.Sandbox != "" && !slices.Contains([]string{"workspace", "strict", "off"}, r.Sandbox) {
		l.add("sandbox", "%q is not one of workspace, strict, off", r.Sandbox)
	}
	if w := r.Walls; w != nil {
		for _, ns := range w.Namespaces {
			if !slices.Contains(validNamespaces, ns) {
				l.add("walls.namespaces", "%q is not one of %s", ns, quoted(validNamespaces))
			}
		}
		if w.LandlockABI < 0 {
			l.add("walls.landlock_abi", "%d: want 0 (no Landlock) or an ABI from 1", w.LandlockABI)
		}
		if w.ID < 0 {
			l.add("walls.id", "%d: want the host id the commands ran as", w.ID)
		}
	}
	if a := r.Agent; a != nil {
		if !slices.Contains(validAgents, a.Kind) {
			l.add("agent.kind", "%q is not one of %s", a.Kind, quoted(validAgents))
		}
		if a.Log != "" && a.Log != AgentLogFile {
			l.add("agent.log", "%q: the agent's log is %s", a.Log, AgentLogFile)
		}
	}
	validateBounds(l, "bounds", r.Bounds)
	for name, v := range map[string]int64{"prompt_tokens": r.Usage.PromptTokens, "completion_tokens": r.Usage.CompletionTokens, "total_tokens": r.Usage.TotalTokens, "model_calls": r.Usage.ModelCalls,
		"cache_read_tokens": r.Usage.CacheReadTokens, "cache_write_tokens": r.Usage.CacheWriteTokens} {
		if v < 0 {
			l.add("usage."+name, "must not be negative, got %d", v)
		}
	}
	if r.StartedAt.IsZero() {
		l.add("started_at", "missing")
	}
	if r.EndedAt != nil && !r.StartedAt.IsZero() && r.EndedAt.Before(r.StartedAt) {
		l.add("ended_at", "%s is before started_at %s", r.EndedAt.Format(time.RFC3339), r.StartedAt.Format(time.RFC3339))
	}
	for i, p := range r.Changed {
		if !validRelPath(p) {
			l.add(fieldIndex("changed", i), "%q is not a clean relative path inside the workspace", p)
		}
	}
	validateVerify(l, r.Verify)
	validateReview(l, r.Review)
	validateScenario(l, r.Kind, r.Scenario)
	return l.err()
}

func validateFailure(l *problemList, f *Failure) {
	if f == nil {
		return
	}
	if !slices.Contains(validDomains, f.Domain) {
		l.add("failure.domain", "%q is not one of %s", f.Domain, quoted(validDomains))
	}
	if f.Stage != "" && !slices.Contains(validStages, f.Stage) {
		l.add("failure.stage", "%q is not one of %s", f.Stage, quoted(validStages))
	}
	if f.Code == "" {
		l.add("failure.code", "missing")
	}
	if f.Message == "" {
		l.add("failure.message", "missing")
	}
}

func validateVerify(l *problemList, v *Verify) {
	if v == nil {
		return
	}
	if !slices.Contains(validVerdicts, v.Verdict) {
		l.add("verify.verdict", "%q is not one of %s", v.Verdict, quoted(validVerdicts))
	}
	if v.Confidence < 0 || v.Confidence > 1 {
		l.add("verify.confidence", "must be between 0 and 1, got %g", v.Confidence)
	}
}

func validateReview(l *problemList, rv *Review) {
	if rv == nil {
		return
	}
	if rv.ReviewedBy == "" {
		l.add("review.reviewed_by", "missing")
	}
	if rv.ReviewedAt.IsZero() {
		l.add("review.reviewed_at", "missing")
	}
	if rv.Applied && !rv.Approved {
		l.add("review.applied", "true on a review that did not approve")
	}
	for i, p := range rv.Changed {
		if !validRelPath(p) {
			l.add(fieldIndex("review.changed", i), "%q is not a clean relative path inside the source tree", p)
		}
	}
}

func validateScenario(l *problemList, kind Kind, sc *ScenarioRef) {
	switch {
	case kind == KindScenario && sc == nil:
		l.add("scenario", "missing on a scenario run")
	case sc != nil:
		if !ValidID(sc.ID) {
			l.add("scenario.id", "%q is not a safe folder name", sc.ID)
		}
		if sc.Suite != "" && !ValidID(sc.Suite) {
			l.add("scenario.suite", "%q is not a suite id (letters, digits, '.', '_' and '-')", sc.Suite)
		}
		if sc.Repeat < 1 {
			l.add("scenario.repeat", "must be 1 or more, got %d", sc.Repeat)
		}
	}
}

// checkSchema records a problem when got is not want, and reports whether the
// file's other fields should be checked against this version's rules.
func checkSchema(l *problemList, got, want string) bool {
	switch {
	case got == "":
		l.add("schema", "missing; want %q", want)
	case got != want:
		l.add("schema", "unknown schema version %q; this proctor reads %q — upgrade proctor to read this file", got, want)
		return false
	}
	return true
}

func validateBounds(l *problemList, prefix string, b Bounds) {
	for name, v := range map[string]int64{"max_turns": int64(b.MaxTurns), "max_tool_calls": int64(b.MaxToolCalls), "max_tool_output_chars": int64(b.MaxToolOutputChars), "max_files": int64(b.MaxFiles), "max_workspace_bytes": b.MaxWorkspaceBytes, "max_file_bytes": b.MaxFileBytes, "max_processes": int64(b.MaxProcesses), "max_cpu_s": int64(b.MaxCPUS)} {
		if v < 0 {
			l.add(prefix+"."+name, "must not be negative, got %d", v)
		}
	}
}

// Validate checks a verdict against the proctor.verdict.v1 rules.
func (v *Verdict) Validate(file string) error {
	l := &problemList{file: file}
	if !checkSchema(l, v.Schema, VerdictSchema) {
		return l.err()
	}
	if v.Scenario == "" {
		l.add("scenario", "missing")
	}
	failed := false
	for i, r := range v.Results {
		if r.Name == "" {
			l.add(fieldIndex("results", i)+".name", "missing")
		}
		if r.Phase == "" {
			l.add(fieldIndex("results", i)+".phase", "missing")
		}
		if r.Passed && r.Broken {
			l.add(fieldIndex("results", i), "a check cannot be both passed and broken")
		}
		if !r.Passed {
			failed = true
		}
	}
	if v.Passed && (failed || v.Aborted != "") {
		l.add("passed", "true, but a check did not pass or the run was aborted")
	}
	if v.Exchanges < 0 {
		l.add("exchanges", "must not be negative, got %d", v.Exchanges)
	}
	return l.err()
}

// Validate checks a session file against the proctor.session.v1 rules. name is
// the file's base name without ".json" ("" to skip that rule).
func (s *Session) Validate(file, name string) error {
	l := &problemList{file: file}
	if !checkSchema(l, s.Schema, SessionSchema) {
		return l.err()
	}
	switch {
	case s.SessionID == "":
		l.add("session_id", "missing")
	case !ValidID(s.SessionID):
		l.add("session_id", "%q is not a safe file name", s.SessionID)
	case name != "" && name != s.SessionID:
		l.add("session_id", "%q does not match its file name %q", s.SessionID, name+".json")
	}
	if s.CreatedAt.IsZero() {
		l.add("created_at", "missing")
	}
	if !s.UpdatedAt.IsZero() && s.UpdatedAt.Before(s.CreatedAt) {
		l.add("updated_at", "is before created_at")
	}
	seen := map[string]bool{}
	for i, id := range s.Runs {
		switch {
		case !ValidID(id):
			l.add(fieldIndex("runs", i), "%q is not a safe run id", id)
		case seen[id]:
			l.add(fieldIndex("runs", i), "run %q is listed twice", id)
		}
		seen[id] = true
	}
	validateBounds(l, "bounds", s.Bounds)
	return l.err()
}

func fieldIndex(name string, i int) string {
	return name + "[" + strconv.Itoa(i) + "]"
}

// PathName is how a receipt writes a file's name: as it is when it is
// plain UTF-8 text, else quoted as git quotes it ("bad\377.txt") — a name
// that is not UTF-8, holds a backslash or a control character, or starts
// with a quote — so that no byte of it is lost to JSON and no quoted name
// is taken for another. Tools that write files read names from the diff,
// never from this list.
func PathName(p string) string {
	plain := utf8.ValidString(p) && !strings.HasPrefix(p, `"`) && !strings.ContainsFunc(p, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f })
	if plain {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// AgentKinds are the kinds of agent a receipt may name (internal/external
// defines them; a test there keeps the two lists one).
func AgentKinds() []string {
	return []string{"native", "codex", "claude", "gemini", "qwen", "opencode", "copilot", "command"}
}
