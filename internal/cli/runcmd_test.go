package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
)

func demoSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "invoice")
	if err := demo.WriteFixture(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

const demoScript = "../demo/demo.yaml"

func TestRunCommand(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	src := demoSource(t)
	r := invoke(t, env, "run", "--dir", src, "--task", demo.Task, "--script", demoScript, "--allow", "go test", "--check", "test -f money.go")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"acquiring source", "preparing workspace", "running", "tool read_file", "approved by policy", "check test -f money.go: passed", "status: awaiting review"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	id := regexp.MustCompile(`run (\d{8}-\d{6}-[a-z0-9]{6})`).FindStringSubmatch(r.stdout)[1]
	// It was indexed on completion.
	r = invoke(t, env, "index", filepath.Join(data, "runs"))
	if !strings.Contains(r.stdout, "unchanged 1") {
		t.Fatalf("not indexed on completion: %+v", r)
	}
	// Export and lint the recorded run's script, then replay it.
	out := filepath.Join(t.TempDir(), "replay.yaml")
	if r = invoke(t, env, "script", "export", "-o", out, id); r.code != ExitOK {
		t.Fatalf("export: %+v", r)
	}
	if r = invoke(t, env, "script", "lint", out); r.code != ExitOK || !strings.Contains(r.stdout, "ok, 5 steps, 6 tool calls") {
		t.Fatalf("lint: %+v", r)
	}
	if r = invoke(t, env, "run", "--replay", id); r.code != ExitOK || !strings.Contains(r.stdout, "status: awaiting review") {
		t.Fatalf("replay: %+v", r)
	}
	// Without a terminal, apply refuses and applies nothing.
	if r = invoke(t, env, "apply", id); r.code != ExitUsage || !strings.Contains(r.stderr, "needs a terminal") {
		t.Fatalf("apply: %+v", r)
	}
}

// `proctor apply ID < /dev/null` once recorded a permanent rejection and
// exited 0. /dev/null is no terminal, and no answer decides nothing.
func TestApplyWithoutAnAnswerDecidesNothing(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	if isTerminal(devNull) {
		t.Fatal("/dev/null counts as a terminal")
	}
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	r := invoke(t, env, "run", "--dir", demoSource(t), "--task", demo.Task, "--script", demoScript, "--allow", "go test")
	id := regexp.MustCompile(`run (\d{8}-\d{6}-[a-z0-9]{6})`).FindStringSubmatch(r.stdout)[1]
	var out, errb bytes.Buffer
	runner, err := newRunner(Env{Stdout: &out, Getenv: func(k string) string { return env[k] }}, data)
	if err != nil {
		t.Fatal(err)
	}
	err = applyRun(context.Background(), Env{Stdout: &out, Stderr: &errb}, runner, id, strings.NewReader(""), false)
	var pe printedError
	if !errors.As(err, &pe) || pe.code != ExitUsage || !strings.Contains(err.Error(), "no decision was made") {
		t.Fatalf("apply with no answer: %v", err)
	}
	b, err := bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	if err != nil || b.Receipt.Review != nil || b.Receipt.Status != bundle.StatusAwaitingReview {
		t.Fatalf("the run no longer awaits review: %+v %v", b.Receipt.Review, err)
	}
	// An answer of "n" is a decision.
	if err := applyRun(context.Background(), Env{Stdout: &out, Stderr: &errb}, runner, id, strings.NewReader("n\n"), false); err != nil {
		t.Fatal(err)
	}
	b, _ = bundle.ReadRun(filepath.Join(data, "runs", id), bundle.DefaultLimits())
	if b.Receipt.Review == nil || b.Receipt.Review.Approved {
		t.Fatalf("review %+v", b.Receipt.Review)
	}
}

func TestRunCommandFailuresAndUsage(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	src := demoSource(t)
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"no dir", []string{"run", "--task", "x", "--script", demoScript}, nil, ExitUsage, "--dir PATH"},
		{"no model", []string{"run", "--dir", src, "--task", "x"}, nil, ExitUsage, "name a model"},
		{"both models", []string{"run", "--dir", src, "--task", "x", "--script", demoScript, "--model", "m"}, nil, ExitUsage, "not both"},
		{"missing script", []string{"run", "--dir", src, "--task", "x", "--script", "nope.yaml"}, nil, ExitUsage, "nope.yaml"},
		{"bad bound flag", []string{"run", "--dir", src, "--task", "x", "--script", demoScript, "--max-turns", "0"}, nil, ExitUsage, `flag --max-turns: max_turns: "0" is not a positive integer`},
		{"bad bound env", []string{"run", "--dir", src, "--task", "x", "--script", demoScript}, map[string]string{"PROCTOR_MAX_FILES": "many"}, ExitUsage, "env PROCTOR_MAX_FILES"},
		{"bad cost bound", []string{"run", "--dir", src, "--task", "x", "--script", demoScript, "--max-cost-usd", "lots"}, nil, ExitUsage, `flag --max-cost-usd: max_cost_usd: "lots" is not a positive number of US dollars`},
		{"cost bound without a price", []string{"run", "--dir", src, "--task", demo.Task, "--script", demoScript, "--max-cost-usd", "0.5"}, nil, ExitUsage, `max_cost_usd=0.5: model "proctor-demo" has no price`},
		{"ask without terminal", []string{"run", "--dir", src, "--task", "x", "--script", demoScript, "--approve", "ask"}, nil, ExitUsage, "needs a terminal"},
		{"mismatch fails", []string{"run", "--dir", src, "--task", "something else", "--script", demoScript}, nil, ExitProblems, "script_mismatch"},
		{"literal key in models.yaml", []string{"run", "--dir", src, "--task", "x", "--model", "p", "--models", "testdata/literal-key.yaml"}, nil, ExitUsage, "literal-key.yaml:5:5: profiles[0].api_key: a literal secret is not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{"PROCTOR_DATA": data}
			for k, v := range tc.env {
				e[k] = v
			}
			r := invoke(t, e, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s\n%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
	_ = env

	// With a price, the bound holds the run: the demo's first reply costs
	// more than $0.001 at $100 a million tokens, so it stops there.
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	os.WriteFile(prices, []byte("models:\n  proctor-demo: {input: 100, output: 100}\n"), 0o644)
	r := invoke(t, map[string]string{"PROCTOR_DATA": data, "PROCTOR_PRICES": prices}, "run", "--dir", src, "--task", demo.Task, "--script", demoScript, "--max-cost-usd", "0.001")
	if r.code != ExitProblems || !strings.Contains(r.stdout+r.stderr, "max_cost_usd") {
		t.Fatalf("a run past its cost: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestScriptLintReportsProblems(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("steps:\n  - reply: {}\n"), 0o644)
	r := invoke(t, nil, "script", "lint", demoScript, bad)
	if r.code != ExitProblems || !strings.Contains(r.stdout, "demo.yaml: ok, 5 steps") || !strings.Contains(r.stdout, "bad.yaml:2:12: steps[0].reply: a reply needs content or tool_calls") {
		t.Fatalf("%+v", r)
	}
	if r = invoke(t, nil, "script"); r.code != ExitUsage {
		t.Fatalf("%+v", r)
	}
	if r = invoke(t, nil, "script", "serve", "--addr", "0.0.0.0:0", demoScript); r.code != ExitUsage || !strings.Contains(r.stderr, "not a loopback") {
		t.Fatalf("%+v", r)
	}
}

func TestSessionCommands(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	if r := invoke(t, env, "session", "list"); r.code != ExitOK || !strings.Contains(r.stdout, "no sessions") {
		t.Fatalf("%+v", r)
	}
	r := invoke(t, env, "run", "--session", "new", "--dir", demoSource(t), "--task", demo.Task, "--script", demoScript, "--allow", "go test")
	if r.code != ExitOK {
		t.Fatalf("%+v", r)
	}
	r = invoke(t, env, "session", "list")
	sid := regexp.MustCompile(`sess-\S+`).FindString(r.stdout)
	if sid == "" {
		t.Fatalf("no session listed: %+v", r)
	}
	if r = invoke(t, env, "session", "show", sid); r.code != ExitOK || !strings.Contains(r.stdout, "awaiting review") {
		t.Fatalf("show: %+v", r)
	}
	if r = invoke(t, env, "session", "replay", sid); r.code != ExitOK || !strings.Contains(r.stdout, "replayed 1 runs into session sess-") {
		t.Fatalf("replay: %+v", r)
	}
	if r = invoke(t, env, "session", "show", "sess-nope"); r.code != ExitUsage {
		t.Fatalf("unknown session: %+v", r)
	}
}

func TestSelftest(t *testing.T) {
	r := invoke(t, nil, "selftest")
	if r.code != ExitOK || !strings.Contains(r.stdout, "selftest: all checks passed") || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("%+v", r)
	}
}
