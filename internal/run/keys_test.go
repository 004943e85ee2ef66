package run_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/agent"
	"github.com/proctor-dev/proctor/internal/bounds"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
)

// A provider key in a variable whose name does not look secret (LLM_AUTH)
// once stayed in run_command's environment, and a piece of it was recorded
// in exchanges, transcript and receipt. The key's variable (and any other
// holding the same value) is removed from commands, and any 12 of its bytes
// together are redacted.
func TestProviderKeyNeverReachesCommandsOrRecords(t *testing.T) {
	const key = "llm-auth-QWERTYUIOPasdfghjkl123456"
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "notes.txt"), []byte("old key prefix: "+key[2:22]+"\n"), 0o644)
	sc, err := script.Parse("keys.yaml", []byte(`
steps:
  - reply:
      tool_calls:
        - name: run_command
          arguments: {command: "env"}
  - expect: {last_role: tool}
    reply:
      tool_calls:
        - name: read_file
          arguments: {path: notes.txt}
  - expect: {last_role: tool}
    reply:
      content: "The key starts `+key[:16]+` as far as I can tell."
`))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := script.Start(sc, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	profile := &model.Profile{Name: "live", BaseURL: ep.URL, Model: "m", APIKeyEnv: "LLM_AUTH"}
	r := &run.Runner{DataDir: t.TempDir(), Environ: append(os.Environ(), "LLM_AUTH="+key, "COPY_OF_IT="+key, "OTHER_PROFILE_VAR=also-a-key-of-another-profile"),
		KeyEnvNames: []string{"OTHER_PROFILE_VAR"}}
	res, err := r.Run(context.Background(), run.Spec{SourceDir: src, Task: "look around",
		Model:  run.ModelChoice{Profile: profile, Endpoint: model.Endpoint{BaseURL: ep.URL, Model: "m", APIKey: key}},
		Bounds: bounds.Defaults(), Approver: agent.Policy{Allow: []string{"env"}}})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	filepath.WalkDir(res.Dir, func(path string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == "workspace" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(path)
			all.Write(data)
		}
		return nil
	})
	text := all.String()
	if !strings.Contains(text, "PROCTOR_WORKSPACE=") {
		t.Fatal("the env command's output is not in the record")
	}
	for _, name := range []string{"LLM_AUTH=", "COPY_OF_IT=", "OTHER_PROFILE_VAR="} {
		if strings.Contains(text, name) {
			t.Errorf("%s reached the agent's command", name)
		}
	}
	for i := 0; i+redact.FragmentLen <= len(key); i++ {
		if piece := key[i : i+redact.FragmentLen]; strings.Contains(text, piece) {
			t.Fatalf("the record holds %q, a piece of the key", piece)
		}
	}
}
