// responsesagent is a small coding agent for proctor's tests: it drives the
// Responses API with the official openai-go SDK (streamed, function calls
// answered with function_call_output items, store: false) and reads and
// writes files in its working folder. The task is its first argument; the
// SDK reads OPENAI_BASE_URL and OPENAI_API_KEY, and the model is
// OPENAI_MODEL.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/proctor-dev/proctor/internal/external/testdata/filetools"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: responsesagent TASK")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "responsesagent:", err)
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
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{responses.ResponseInputContentParamOfInputText(task)}, responses.EasyInputMessageRoleUser),
	}
	for turn := 1; turn <= 20; turn++ {
		stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
			Model: os.Getenv("OPENAI_MODEL"), Instructions: openai.String("You are a coding agent. Use the tools."),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: tools(), Store: openai.Bool(false),
		})
		var done *responses.Response
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.completed" {
				r := ev.Response
				done = &r
			}
		}
		if err := stream.Err(); err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		if done == nil {
			return fmt.Errorf("turn %d: the stream ended without response.completed", turn)
		}
		calls := 0
		for _, item := range done.Output {
			if item.Type != "function_call" {
				continue
			}
			calls++
			args := item.Arguments.OfString
			out := filetools.Execute(root, item.Name, args)
			fmt.Printf("tool %s %s -> %s\n", item.Name, args, out)
			output := responses.ResponseInputItemParamOfFunctionCallOutput(out)
			output.OfFunctionCallOutput.CallID = openai.String(item.CallID)
			input = append(input, responses.ResponseInputItemParamOfFunctionCall(args, item.CallID, item.Name), output)
		}
		if calls == 0 {
			fmt.Println("final:", done.OutputText())
			return nil
		}
	}
	return fmt.Errorf("no final answer in 20 turns")
}

func tools() []responses.ToolUnionParam {
	fn := func(name, desc string, props map[string]any) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: name, Description: openai.String(desc),
			Parameters: map[string]any{"type": "object", "properties": props}, Strict: openai.Bool(false)}}
	}
	return []responses.ToolUnionParam{
		fn("read_file", "Read a file.", map[string]any{"path": map[string]any{"type": "string"}}),
		fn("write_file", "Write a file.", map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}),
	}
}
