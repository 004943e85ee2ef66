// chatagent is a small coding agent for proctor's tests: it drives Chat
// Completions with the official openai-go SDK (streamed, with parallel tool
// calls and content-part arrays) and reads and writes files in its working
// folder. The task is its first argument; the SDK reads OPENAI_BASE_URL and
// OPENAI_API_KEY, and the model is OPENAI_MODEL.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: chatagent TASK")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "chatagent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, task string) error {
	root, err := os.OpenRoot(".")
	if err != nil {
		return err
	}
	defer root.Close()
	client := openai.NewClient()
	msgs := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{Text: "You are a coding agent. Use the tools."}}),
		openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(task)}),
	}
	for turn := 1; turn <= 20; turn++ {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model: os.Getenv("OPENAI_MODEL"), Messages: msgs, Tools: tools(), ParallelToolCalls: openai.Bool(true),
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		if len(acc.Choices) == 0 {
			return fmt.Errorf("turn %d: no choices", turn)
		}
		reply := acc.Choices[0].Message
		msgs = append(msgs, reply.ToParam())
		if len(reply.ToolCalls) == 0 {
			fmt.Println("final:", reply.Content)
			return nil
		}
		for _, call := range reply.ToolCalls {
			out := execute(root, call.Function.Name, call.Function.Arguments)
			fmt.Printf("tool %s %s -> %s\n", call.Function.Name, call.Function.Arguments, out)
			msgs = append(msgs, openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: out}}, call.ID))
		}
	}
	return fmt.Errorf("no final answer in 20 turns")
}

func tools() []openai.ChatCompletionToolUnionParam {
	fn := func(name, desc string, props map[string]any) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name, Description: openai.String(desc),
			Parameters: shared.FunctionParameters{"type": "object", "properties": props}})
	}
	return []openai.ChatCompletionToolUnionParam{
		fn("read_file", "Read a file.", map[string]any{"path": map[string]any{"type": "string"}}),
		fn("write_file", "Write a file.", map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}),
	}
}

// execute runs a tool in the working folder; a problem is its output.
func execute(root *os.Root, name, args string) string {
	var a struct{ Path, Content string }
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "error: " + err.Error()
	}
	switch name {
	case "read_file":
		data, err := root.ReadFile(a.Path)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(data)
	case "write_file":
		if err := root.WriteFile(a.Path, []byte(a.Content), 0o644); err != nil {
			return "error: " + err.Error()
		}
		return "wrote " + a.Path
	}
	return "error: no tool " + name
}
