// geminiagent is a small coding agent for proctor's tests: it drives the
// Gemini API with Google's official google.golang.org/genai (streamed,
// functionCall parts answered with functionResponse parts) and reads and
// writes files in its working folder. The task is its first argument; the
// SDK reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, and the model is
// PROCTOR_MODEL.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"google.golang.org/genai"

	"github.com/proctor-dev/proctor/internal/external/testdata/filetools"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: geminiagent TASK")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "geminiagent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, task string) error {
	root, err := os.OpenRoot(".")
	if err != nil {
		return err
	}
	defer root.Close()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI})
	if err != nil {
		return err
	}
	cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are a coding agent. Use the tools.", genai.RoleUser), Tools: tools()}
	history := []*genai.Content{genai.NewContentFromText(task, genai.RoleUser)}
	for turn := 1; turn <= 20; turn++ {
		var parts []*genai.Part
		text := ""
		for r, err := range client.Models.GenerateContentStream(ctx, os.Getenv("PROCTOR_MODEL"), history, cfg) {
			if err != nil {
				return fmt.Errorf("turn %d: %w", turn, err)
			}
			if len(r.Candidates) > 0 && r.Candidates[0].Content != nil {
				parts = append(parts, r.Candidates[0].Content.Parts...)
			}
			text += r.Text()
		}
		history = append(history, genai.NewContentFromParts(parts, genai.RoleModel))
		var results []*genai.Part
		for _, p := range parts {
			if c := p.FunctionCall; c != nil {
				args, _ := json.Marshal(c.Args)
				out := filetools.Execute(root, c.Name, string(args))
				fmt.Printf("tool %s %s -> %s\n", c.Name, args, out)
				r := genai.NewPartFromFunctionResponse(c.Name, map[string]any{"output": out})
				r.FunctionResponse.ID = c.ID
				results = append(results, r)
			}
		}
		if len(results) == 0 {
			fmt.Println("final:", text)
			return nil
		}
		history = append(history, genai.NewContentFromParts(results, genai.RoleUser))
	}
	return fmt.Errorf("no final answer in 20 turns")
}

func tools() []*genai.Tool {
	fn := func(name, desc string, props map[string]any) *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{Name: name, Description: desc, ParametersJsonSchema: map[string]any{"type": "object", "properties": props}}
	}
	return []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
		fn("read_file", "Read a file.", map[string]any{"path": map[string]any{"type": "string"}}),
		fn("write_file", "Write a file.", map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}),
	}}}
}
