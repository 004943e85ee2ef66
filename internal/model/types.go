package model

import (
	"context"
	"encoding/json"
	"time"
)

// Role of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"` // the tool's name, on tool messages
	// IsError: a tool message the agent marked as the call's failure (an
	// Anthropic tool_result's is_error, a Gemini functionResponse that is
	// an error); the Chat Completions and Responses APIs carry no such mark.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is a function call the model asked for. Arguments is the JSON text
// the model produced, which may be invalid.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a function tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema
}

// Request is one chat completion request.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	Stream   bool
	// IncludeUsage is stream_options.include_usage of a decoded request:
	// whether a streamed reply ends with a usage chunk.
	IncludeUsage bool
	// API is the API a decoded request came through: APIChat,
	// APIResponses, APIMessages or APIGemini.
	API string
}

// The APIs a scripted endpoint answers.
const (
	APIChat      = "chat"      // POST /v1/chat/completions
	APIResponses = "responses" // POST /v1/responses
	APIMessages  = "messages"  // Anthropic: POST /v1/messages
	APIGemini    = "gemini"    // Google: POST /v1beta/models/{model}:generateContent and :streamGenerateContent
)

// APIs are the APIs a scripted endpoint and the proxy answer.
var APIs = []string{APIChat, APIResponses, APIMessages, APIGemini}

// Usage counts the tokens of one call.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// Of the prompt tokens, those read from the provider's cache and
	// those written to it (providers that say so: Anthropic, Gemini, and
	// OpenAI's cached tokens).
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add counts u's tokens in too.
func (t *Usage) Add(u Usage) {
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	t.TotalTokens += u.TotalTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
}

// Response is the model's reply.
type Response struct {
	Message      Message
	FinishReason string
	Usage        Usage
	Model        string
}

// Exchange is the record of one call: the request as sent and the response
// as received (or the error), for exchanges.jsonl.
type Exchange struct {
	Time     time.Time
	Duration time.Duration
	Attempt  int
	API      string // one of APIs ("" is APIChat)
	// Call is what a call that is not a model call asked ("" for a model
	// call): CallCountTokens, CallModels.
	Call     string
	Request  json.RawMessage
	Response json.RawMessage
	Error    string
}

// The calls an agent makes beside its model calls, recorded with them.
const (
	CallCountTokens = "count_tokens" // Anthropic's /v1/messages/count_tokens, Gemini's :countTokens
	CallModels      = "models"       // the models list, or one model
)

// Recorder receives every exchange, failed attempts included.
type Recorder func(Exchange)

// Completer is anything that answers chat completion requests: the live
// client, or a test double.
type Completer interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}
