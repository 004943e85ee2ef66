package bundle

import "encoding/json"

// EventData is the data of one kind of event of events.jsonl; its
// EventType is the line's type.
type EventData interface{ EventType() string }

// Event types, and the data each carries (see docs/formats.md).
const (
	EventStageStarted           = "stage.started"
	EventStageFinished          = "stage.finished"
	EventStageFailed            = "stage.failed"
	EventRunInterrupted         = "run.interrupted"
	EventModelRequest           = "model.request"
	EventModelResponse          = "model.response"
	EventModelError             = "model.error"
	EventToolCall               = "tool.call"
	EventToolResult             = "tool.result"
	EventToolOutput             = "tool.output"
	EventAgentQuestion          = "agent.question"
	EventApprovalRequested      = "approval.requested"
	EventApprovalDecided        = "approval.decided"
	EventCheckResult            = "check.result"
	EventVerifyResult           = "verify.result"
	EventVerifyUnparseable      = "verify.unparseable"
	EventConversationTurn       = "conversation.turn"
	EventConversationYieldReply = "conversation.yield_reply"
	EventConversationContinue   = "conversation.continue"
	EventConversationAborted    = "conversation.aborted"
	EventReviewDecided          = "review.decided"
	EventReviewRolledBack       = "review.rolled_back"
)

// StageStartedEvent: a stage began; what it works on, when it says.
type StageStartedEvent struct {
	Stage  Stage  `json:"stage"`
	Path   string `json:"path,omitempty"`   // acquiring_source: the source
	Model  string `json:"model,omitempty"`  // running, verifying
	Checks int    `json:"checks,omitempty"` // checking
	Detail string `json:"detail,omitempty"` // warming_caches: what is warmed; preparing_workspace again: the scenario's setup
}

// StageFinishedEvent: a stage ended; the workspace stage says where and from
// which commit, the last says how the run ended.
type StageFinishedEvent struct {
	Stage      Stage  `json:"stage"`
	Workspace  string `json:"workspace,omitempty"`
	BaseCommit string `json:"base_commit,omitempty"`
	Status     Status `json:"status,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"` // warming_caches: how long it took
	Detail     string `json:"detail,omitempty"`      // warming_caches: what was warmed, or why not
}

// StageFailedEvent: the run stopped in a stage with a failure.
type StageFailedEvent struct {
	Stage   Stage  `json:"stage"`
	Domain  Domain `json:"domain"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunInterruptedEvent: the run was stopped (by a person, a signal, or found
// orphaned).
type RunInterruptedEvent struct {
	Stage  Stage  `json:"stage,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ModelRequestEvent: the agent sends its conversation.
type ModelRequestEvent struct {
	Turn     int `json:"turn"`
	Messages int `json:"messages"`
}

// ModelResponseEvent: the model answered.
type ModelResponseEvent struct {
	Turn             int    `json:"turn"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens,omitempty"`  // of the prompt tokens, read from the provider's cache
	CacheWriteTokens int64  `json:"cache_write_tokens,omitempty"` // of the prompt tokens, written to it
	ToolCalls        int    `json:"tool_calls"`
	FinishReason     string `json:"finish_reason"`
	DurationMS       int64  `json:"duration_ms,omitempty"` // from the request sent to the reply read
}

// ModelErrorEvent: the model call failed.
type ModelErrorEvent struct {
	Turn   int    `json:"turn"`
	Error  string `json:"error"`
	Domain string `json:"domain,omitempty"`
	Code   string `json:"code,omitempty"`
}

// ToolCallEvent: the agent calls a tool; Args are its arguments (long texts
// clipped), or the raw text when they are not a JSON object.
type ToolCallEvent struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolResultEvent: a tool call ended.
type ToolResultEvent struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Chars int    `json:"chars"`
	// Exit is the exit status of the command the call ran, when the
	// call ran one and its result says how it ended (-1: killed); absent
	// otherwise (internal/intent.Exit).
	Exit *int `json:"exit,omitempty"`
	// Ends is the call whose command this call waited on and saw end (a
	// Codex write_stdin on a command still running when its exec_command
	// answered): Exit is that command's.
	Ends string `json:"ends,omitempty"`
}

// ToolOutputEvent: output a running command wrote, whole lines as they
// come (the call's tool.result follows; the transcript has all of it).
type ToolOutputEvent struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// AgentQuestionEvent: the agent asks the user.
type AgentQuestionEvent struct {
	ID       string `json:"id"`
	Question string `json:"question"`
}

// ApprovalRequestedEvent: a gated tool call waits for a decision.
type ApprovalRequestedEvent struct {
	ID   string          `json:"id"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// ApprovalDecidedEvent: the decision on a gated tool call.
type ApprovalDecidedEvent struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Reason   string `json:"reason"`
}

// CheckResultEvent: one check judged the run.
type CheckResultEvent struct {
	Phase  string `json:"phase"`
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Broken bool   `json:"broken"`
}

// VerifyResultEvent: the verifier's verdict.
type VerifyResultEvent struct {
	Verdict    string  `json:"verdict"`
	Issues     int     `json:"issues"`
	Confidence float64 `json:"confidence"`
}

// VerifyUnparseableEvent: the verifier's answer could not be read.
type VerifyUnparseableEvent struct {
	Answer string `json:"answer"`
}

// ConversationTurnEvent: the next scripted user turn of a scenario.
type ConversationTurnEvent struct {
	Turn int `json:"turn"`
	Of   int `json:"of"`
}

// ConversationYieldReplyEvent: the scenario answered the agent's question.
type ConversationYieldReplyEvent struct {
	Question string `json:"question"`
	Reply    string `json:"reply"`
	N        int    `json:"n"`
}

// ConversationContinueEvent: the scenario told the agent to go on.
type ConversationContinueEvent struct {
	After string `json:"after"`
	N     int    `json:"n"`
}

// ConversationAbortedEvent: a scenario budget ended the conversation.
type ConversationAbortedEvent struct {
	Budget string `json:"budget"`
}

// ReviewDecidedEvent: a reviewer decided on the run's diff (Op is the
// review's journal operation, so that a recovered review records it once).
type ReviewDecidedEvent struct {
	Op       string   `json:"op"`
	Approved bool     `json:"approved"`
	By       string   `json:"by"`
	Reason   string   `json:"reason"`
	Applied  bool     `json:"applied"`
	Changed  []string `json:"changed"`
	Forced   bool     `json:"forced"`
}

// ReviewRolledBackEvent: an approval that could not be completed was
// rolled back; the source is as it was.
type ReviewRolledBackEvent struct {
	Op     string `json:"op"`
	By     string `json:"by"`
	Reason string `json:"reason"`
}

func (ReviewDecidedEvent) EventType() string          { return EventReviewDecided }
func (ReviewRolledBackEvent) EventType() string       { return EventReviewRolledBack }
func (StageStartedEvent) EventType() string           { return EventStageStarted }
func (StageFinishedEvent) EventType() string          { return EventStageFinished }
func (StageFailedEvent) EventType() string            { return EventStageFailed }
func (RunInterruptedEvent) EventType() string         { return EventRunInterrupted }
func (ModelRequestEvent) EventType() string           { return EventModelRequest }
func (ModelResponseEvent) EventType() string          { return EventModelResponse }
func (ModelErrorEvent) EventType() string             { return EventModelError }
func (ToolCallEvent) EventType() string               { return EventToolCall }
func (ToolResultEvent) EventType() string             { return EventToolResult }
func (ToolOutputEvent) EventType() string             { return EventToolOutput }
func (AgentQuestionEvent) EventType() string          { return EventAgentQuestion }
func (ApprovalRequestedEvent) EventType() string      { return EventApprovalRequested }
func (ApprovalDecidedEvent) EventType() string        { return EventApprovalDecided }
func (CheckResultEvent) EventType() string            { return EventCheckResult }
func (VerifyResultEvent) EventType() string           { return EventVerifyResult }
func (VerifyUnparseableEvent) EventType() string      { return EventVerifyUnparseable }
func (ConversationTurnEvent) EventType() string       { return EventConversationTurn }
func (ConversationYieldReplyEvent) EventType() string { return EventConversationYieldReply }
func (ConversationContinueEvent) EventType() string   { return EventConversationContinue }
func (ConversationAbortedEvent) EventType() string    { return EventConversationAborted }
