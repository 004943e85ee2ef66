package run_test

import (
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/run"
)

func TestTranscriptFlagsAndCuts(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "sys"},
		{Role: model.RoleUser, Content: "go"},
		{Role: model.RoleAssistant, Content: "running it", ToolCalls: []model.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command": "make"}`}}},
		{Role: model.RoleTool, ToolCallID: "c1", Name: "run_command", Content: strings.Repeat("x", 5000)},
		{Role: model.RoleAssistant, Content: "done"},
	}
	text := run.Transcript(msgs, map[string]string{"c1": "approved by scenario: rule 1"}, "")
	secs := bundle.ParseTranscript(text)
	if len(secs) != 5 || secs[3].Title != "tool run_command (c1) — approved by scenario: rule 1" {
		t.Fatalf("sections %+v", secs)
	}
	if !strings.Contains(secs[3].Body, "[… cut: 1000 of 5000 characters not shown; the whole text is in exchanges.jsonl …]") {
		t.Fatalf("no cut marker in %q", secs[3].Body[len(secs[3].Body)-200:])
	}
	if !strings.Contains(secs[2].Body, "**tool call** `run_command` (c1)") || !strings.Contains(secs[2].Body, `    {"command":"make"}`) {
		t.Fatalf("assistant section %q", secs[2].Body)
	}
}
