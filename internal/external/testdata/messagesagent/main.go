// messagesagent is a small coding agent for proctor's tests: it drives the
// Anthropic Messages API with the official anthropic-sdk-go (streamed and
// accumulated, tool_use answered with tool_result blocks) and reads and
// writes files in its working folder. The task is its first argument; the
// SDK reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, and the model is
// PROCTOR_MODEL.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/proctor-dev/proctor/internal/external/testdata/filetools"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: messagesagent TASK")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "messagesagent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, task string) error {
	root, err := os.OpenRoot(".")
	if err != nil {
		return err
	}
	defer root.Close()
	client := anthropic.NewClient()
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(task))}
	for turn := 1; turn <= 20; turn++ {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model: anthropic.Model(os.Getenv("PROCTOR_MODEL")), MaxTokens: 4096,
			System: []anthropic.TextBlockParam{{Text: "You are a coding agent. Use the tools."}}, Messages: msgs, Tools: tools(),
		})
		var m anthropic.Message
		for stream.Next() {
			if err := m.Accumulate(stream.Current()); err != nil {
				return fmt.Errorf("turn %d: %w", turn, err)
			}
		}
		if err := stream.Err(); err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		msgs = append(msgs, m.ToParam())
		var results []anthropic.ContentBlockParamUnion
		text := ""
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text += b.Text
			case "tool_use":
				out := filetools.Execute(root, b.Name, string(b.Input))
				fmt.Printf("tool %s %s -> %s\n", b.Name, b.Input, out)
				results = append(results, anthropic.NewToolResultBlock(b.ID, out, false))
			}
		}
		if len(results) == 0 {
			fmt.Println("final:", text)
			return nil
		}
		msgs = append(msgs, anthropic.NewUserMessage(results...))
	}
	return fmt.Errorf("no final answer in 20 turns")
}

func tools() []anthropic.ToolUnionParam {
	fn := func(name, desc string, props map[string]any) anthropic.ToolUnionParam {
		t := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: props}, name)
		t.OfTool.Description = anthropic.String(desc)
		return t
	}
	return []anthropic.ToolUnionParam{
		fn("read_file", "Read a file.", map[string]any{"path": map[string]any{"type": "string"}}),
		fn("write_file", "Write a file.", map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}),
	}
}
