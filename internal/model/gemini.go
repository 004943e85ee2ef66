package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The Gemini API (POST /v1beta/models/{model}:generateContent, and
// :streamGenerateContent?alt=sse), which Gemini CLI and Google's SDKs
// speak: its requests and replies read as the same Request and Response as
// the OpenAI APIs. The model is named in the path, not the body.

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text             string          `json:"text,omitempty"`
	Thought          bool            `json:"thought,omitempty"`
	FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
}

type geminiCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// GeminiMethods are the methods of the Gemini API a model answers, after
// the model's name in the path (models/{model}:{method}).
var GeminiMethods = []string{"generateContent", "streamGenerateContent", "countTokens"}

// DecodeGeminiRequest reads a Gemini API request as a Request: the system
// instruction as a system message; a model turn's functionCall parts as
// its tool calls, and a user turn's functionResponse parts as tool messages
// after its text. A call without an id is given one by its place in the
// conversation (gemini-call-N), and its response the id of the oldest
// unanswered call of that name. Thought parts are left out. stream says
// whether it came as streamGenerateContent.
func DecodeGeminiRequest(body []byte, stream bool) (Request, error) {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("request body is not a Gemini API request: %w", err)
	}
	req := Request{Stream: stream, IncludeUsage: true, API: APIGemini}
	if in.SystemInstruction != nil {
		if text := geminiText(in.SystemInstruction.Parts); text != "" {
			req.Messages = append(req.Messages, Message{Role: RoleSystem, Content: text})
		}
	}
	calls := 0
	pending := map[string][]string{} // ids of calls not yet answered, by name
	for _, c := range in.Contents {
		role := RoleUser
		if c.Role == "model" {
			role = RoleAssistant
		}
		msg := Message{Role: role, Content: geminiText(c.Parts)}
		var results []Message
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				calls++
				id := p.FunctionCall.ID
				if id == "" {
					id = fmt.Sprintf("gemini-call-%d", calls)
				}
				pending[p.FunctionCall.Name] = append(pending[p.FunctionCall.Name], id)
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: jsonText(p.FunctionCall.Args)})
			case p.FunctionResponse != nil:
				r := p.FunctionResponse
				id := r.ID
				if ids := pending[r.Name]; id == "" && len(ids) > 0 {
					id = ids[0]
				}
				pending[r.Name] = remove(pending[r.Name], id)
				results = append(results, Message{Role: RoleTool, ToolCallID: id, Name: r.Name, Content: geminiOutput(r.Response), IsError: geminiFailed(r.Response)})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 || len(results) == 0 {
			req.Messages = append(req.Messages, msg)
		}
		req.Messages = append(req.Messages, results...)
	}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			params := f.Parameters
			if len(params) == 0 {
				params = f.ParametersJSONSchema
			}
			req.Tools = append(req.Tools, ToolSpec{Name: f.Name, Description: f.Description, Parameters: params})
		}
	}
	return req, nil
}

func remove(ids []string, id string) []string {
	for i, v := range ids {
		if v == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}

// geminiText joins the text parts that are not thoughts.
func geminiText(parts []geminiPart) string {
	var texts []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// geminiOutput is a function response as a tool message's text: its
// "output" (or "content") when that is all it holds as a text, as Gemini
// CLI sends it, else its JSON.
// geminiFailed reports whether a functionResponse's response is an error:
// an object whose only field is "error" (how Gemini CLI and Qwen Code
// answer a call that failed or was refused).
func geminiFailed(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) != 1 {
		return false
	}
	_, ok := fields["error"]
	return ok
}

func geminiOutput(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil && len(fields) == 1 {
		for _, k := range []string{"output", "content"} {
			var s string
			if v, ok := fields[k]; ok && json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return jsonText(raw)
}

// geminiReply is a GenerateContentResponse: the reply, or one chunk of a
// streamed one.
type geminiReply struct {
	Candidates []struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason,omitempty"`
		Index        int           `json:"index"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
	} `json:"usageMetadata,omitempty"`
	ModelVersion string `json:"modelVersion,omitempty"`
}

// DecodeGeminiReply reads a GenerateContentResponse (a recorded one, or a
// stream folded into one) as a Response: its first candidate's text, a
// tool call per functionCall part (named by its id, else gemini-reply-N),
// and its usage, thought tokens counted as completion tokens.
func DecodeGeminiReply(raw []byte) (*Response, error) {
	var g geminiReply
	if err := json.Unmarshal(raw, &g); err != nil || len(g.Candidates) == 0 {
		why := "it has no candidates"
		if err != nil {
			why = err.Error()
		}
		return nil, &Error{Domain: DomainModel, Code: CodeBadResponse, Message: "the reply is not a Gemini API response: " + why}
	}
	c := g.Candidates[0]
	resp := &Response{Message: Message{Role: RoleAssistant, Content: geminiText(c.Content.Parts)}, Model: g.ModelVersion, FinishReason: "stop"}
	for _, p := range c.Content.Parts {
		if f := p.FunctionCall; f != nil {
			id := f.ID
			if id == "" {
				id = fmt.Sprintf("gemini-reply-%d", len(resp.Message.ToolCalls)+1)
			}
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{ID: id, Name: f.Name, Arguments: jsonText(f.Args)})
		}
	}
	if len(resp.Message.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	if c.FinishReason == "MAX_TOKENS" {
		resp.FinishReason = "length"
	}
	if u := g.UsageMetadata; u != nil {
		resp.Usage = Usage{PromptTokens: u.PromptTokenCount, CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
			TotalTokens: u.TotalTokenCount, CacheReadTokens: u.CachedContentTokenCount}
		if resp.Usage.TotalTokens == 0 {
			resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
		}
	}
	return resp, nil
}

// foldGemini folds the chunks of a streamed Gemini reply into one: the
// parts of the first candidate in order (runs of text joined), its last
// finish reason, the last usage.
func foldGemini(chunks [][]byte) ([]byte, error) {
	var out geminiReply
	var parts []geminiPart
	finish := ""
	for i, data := range chunks {
		var g geminiReply
		if err := json.Unmarshal(data, &g); err != nil {
			return nil, fmt.Errorf("stream chunk %d: %w", i+1, err)
		}
		if g.UsageMetadata != nil {
			out.UsageMetadata = g.UsageMetadata
		}
		if g.ModelVersion != "" {
			out.ModelVersion = g.ModelVersion
		}
		if len(g.Candidates) == 0 {
			continue
		}
		c := g.Candidates[0]
		for _, p := range c.Content.Parts {
			if n := len(parts); n > 0 && p.FunctionCall == nil && p.FunctionResponse == nil && p.Text != "" &&
				parts[n-1].FunctionCall == nil && parts[n-1].Text != "" && parts[n-1].Thought == p.Thought {
				parts[n-1].Text += p.Text
				continue
			}
			parts = append(parts, p)
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
	}
	if finish == "" {
		return nil, fmt.Errorf("%w (%d chunks, no finishReason)", ErrStreamCut, len(chunks))
	}
	if parts == nil {
		parts = []geminiPart{}
	}
	return json.Marshal(map[string]any{
		"candidates":    []map[string]any{{"content": geminiContent{Role: "model", Parts: parts}, "finishReason": finish, "index": 0}},
		"usageMetadata": out.UsageMetadata, "modelVersion": out.ModelVersion,
	})
}
