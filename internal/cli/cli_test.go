package cli

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/store"
)

type result struct {
	code           int
	stdout, stderr string
}

func invoke(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	})
	return result{code, out.String(), errb.String()}
}

func TestUsageErrorsAreOneLineAndExit2(t *testing.T) {
	tests := [][]string{
		{"bogus"},
		{"serve", "--nope"},
		{"serve", "extra-arg"},
		{"serve", "--addr", "0.0.0.0:7070"},
		{"serve", "--addr", "no-port"},
		{"index"},
		{"index", "--nope", "x"},
		{"index", "/does/not/exist"},
		{"migrate", "sideways"},
		{"migrate", "up", "down"},
		{"version", "extra"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir()}, args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines != 0 || r.stderr == "" {
				t.Fatalf("stderr is not one line: %q", r.stderr)
			}
			if r.stdout != "" {
				t.Fatalf("stdout is not empty: %q", r.stdout)
			}
		})
	}
}

// A usage error says what the value should look like.
func TestUsageErrorsSayWhatIsWanted(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--approval-timeout", "5"}, `--approval-timeout "5": want a duration with its unit, like 30s, 5m or 1h30m`},
		{[]string{"serve", "--allowed-host", "a/b"}, `--allowed-host "a/b": want a host name or address`},
	}
	for _, tc := range tests {
		r := invoke(t, map[string]string{"PROCTOR_DATA": t.TempDir()}, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			for _, flag := range []string{"--help", "-h"} {
				r := invoke(t, nil, c.name, flag)
				if r.code != ExitOK || !strings.HasPrefix(r.stdout, "Usage: proctor "+c.name) {
					t.Fatalf("%s %s: exit %d, stdout %q, stderr %q", c.name, flag, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
	if r := invoke(t, nil, "--help"); r.code != ExitOK || !strings.Contains(r.stdout, "Commands:") {
		t.Fatalf("proctor --help: %+v", r)
	}
	if r := invoke(t, nil, "help", "index"); r.code != ExitOK || !strings.Contains(r.stdout, "proctor index") {
		t.Fatalf("proctor help index: %+v", r)
	}
	if r := invoke(t, nil); r.code != ExitUsage {
		t.Fatalf("proctor without a command: exit %d", r.code)
	}
	// script serve serves all four APIs, and says so.
	r := invoke(t, nil, "script", "serve", "--help")
	for _, route := range []string{"/v1/chat/completions", "/v1/responses", "/v1/messages", ":generateContent"} {
		if !strings.Contains(r.stdout, route) {
			t.Errorf("script serve --help does not name %s:\n%s", route, r.stdout)
		}
	}
}

// What a command's help says of how proctor keeps things safe is what
// docs/security.md says.
func TestHelpSaysWhatTheDocsSay(t *testing.T) {
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args       []string
		help, doc  string
		notInHelps string
	}{
		{[]string{"serve", "--help"}, "whoever holds its local secret\n(<data>/local.secret", "keeps it in `<data>/local.secret`, readable by its user only", "anyone on this machine"},
		{[]string{"serve", "--help"}, "Serving beyond loopback (--addr 0.0.0.0:7070) needs an\nadmin account", "refuses to start until an enabled admin exists", ""},
		{[]string{"doctor", "--help"}, "never by reading sysctls", "not by reading sysctls", ""},
	} {
		r := invoke(t, nil, tc.args...)
		if !strings.Contains(r.stdout, tc.help) || (tc.notInHelps != "" && strings.Contains(r.stdout, tc.notInHelps)) {
			t.Errorf("%v does not say %q (or says %q):\n%s", tc.args, tc.help, tc.notInHelps, r.stdout)
		}
		if !strings.Contains(string(docs), tc.doc) {
			t.Errorf("docs/security.md does not say %q, which %v's help stands on", tc.doc, tc.args)
		}
	}
}

func TestDataDir(t *testing.T) {
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/f", map[string]string{"PROCTOR_DATA": "/p", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/f"},
		{"then PROCTOR_DATA", "", map[string]string{"PROCTOR_DATA": "/p", "XDG_DATA_HOME": "/x", "HOME": "/h"}, "/p"},
		{"then XDG_DATA_HOME", "", map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/proctor"},
		{"then HOME", "", map[string]string{"HOME": "/h"}, "/h/.local/share/proctor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dataDir(tc.flag, func(k string) string { return tc.env[k] })
			if err != nil || got != tc.want {
				t.Fatalf("dataDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	wd, _ := os.Getwd()
	if got, _ := dataDir("rel", func(string) string { return "" }); got != filepath.Join(wd, "rel") {
		t.Fatalf("relative flag = %q", got)
	}
}

func TestIndexCommand(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"PROCTOR_DATA": data}
	r := invoke(t, env, "index", "../../testdata/bundles")
	if r.code != ExitOK || r.stdout != "indexed 7, unchanged 0, removed 0, problems 0\n" {
		t.Fatalf("first index: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(data, "proctor.db")); err != nil {
		t.Fatal("no database in the data folder")
	}
	r = invoke(t, env, "index", "../../testdata/bundles")
	if r.code != ExitOK || r.stdout != "indexed 0, unchanged 7, removed 0, problems 0\n" {
		t.Fatalf("second index: %+v", r)
	}

	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "runs", "r1"), 0o755)
	os.WriteFile(filepath.Join(bad, "runs", "r1", "run.json"), []byte("{"), 0o644)
	r = invoke(t, env, "index", bad)
	if r.code != ExitProblems || !strings.Contains(r.stdout, "problems 1") || !strings.Contains(r.stdout, "problem: "+filepath.Join(bad, "runs", "r1", "run.json")+": invalid JSON") {
		t.Fatalf("index with a broken bundle: %+v", r)
	}
	r = invoke(t, env, "index", "--json", bad)
	if r.code != ExitProblems || !strings.Contains(r.stdout, `"bundles_with_problems": 1`) {
		t.Fatalf("index --json: %+v", r)
	}
	r = invoke(t, env, "index", "--rebuild", "../../testdata/bundles")
	if r.code != ExitOK || r.stdout != "indexed 7, unchanged 0, removed 0, problems 0\n" {
		t.Fatalf("index --rebuild: %+v", r)
	}
}

func TestIndexRefusesAForeignDatabase(t *testing.T) {
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "proctor.db"), []byte("not sqlite"), 0o644)
	r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "index", "../../testdata/bundles")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "not a SQLite database") {
		t.Fatalf("%+v", r)
	}
}

func TestMigrateCommand(t *testing.T) {
	env := map[string]string{"PROCTOR_DATA": t.TempDir()}
	r := invoke(t, env, "migrate")
	if r.code != ExitOK || !strings.Contains(r.stdout, "at migration 0 of") || !strings.Contains(r.stdout, " no ") {
		t.Fatalf("migrate status on a new folder: %+v", r)
	}
	r = invoke(t, env, "migrate", "up")
	if r.code != ExitOK || strings.Contains(r.stdout, " no ") || !strings.Contains(r.stdout, "yes") {
		t.Fatalf("migrate up: %+v", r)
	}
}

func TestVersion(t *testing.T) {
	r := invoke(t, nil, "version")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "proctor "+Version) {
		t.Fatalf("%+v", r)
	}
}

// Runs are costed by the built-in prices with the prices file over them;
// a changed file re-prices runs indexed before; a bad file is refused with
// each problem's place, and nothing is indexed.
func TestIndexCostsRunsByThePricesFile(t *testing.T) {
	data, prices := t.TempDir(), filepath.Join(t.TempDir(), "prices.yaml")
	env := map[string]string{"PROCTOR_DATA": data, "PROCTOR_PRICES": prices}
	cost := func() *float64 {
		t.Helper()
		st, err := store.Open(context.Background(), filepath.Join(data, "proctor.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		got, err := st.GetRun(context.Background(), "20261201-113020-z8c1rd") // qwen2.5-coder-32b: 2194 prompt, 81 completion tokens
		if err != nil {
			t.Fatal(err)
		}
		return got.CostUSD
	}
	if r := invoke(t, env, "index", "../../testdata/bundles"); r.code != ExitOK {
		t.Fatalf("index: %+v", r)
	}
	if c := cost(); c != nil {
		t.Fatalf("a model without a price costs %v", *c)
	}
	os.WriteFile(prices, []byte("models:\n  qwen2.5-coder-32b: {input: 1000, output: 10000}\n"), 0o644)
	if r := invoke(t, env, "index", "../../testdata/bundles"); r.code != ExitOK || !strings.Contains(r.stdout, "unchanged 7") {
		t.Fatalf("index again: %+v", r)
	}
	if c := cost(); c == nil || math.Abs(*c-(2.194+0.81)) > 1e-9 {
		t.Fatalf("after the prices file: cost %v, want 3.004", c)
	}
	os.WriteFile(prices, []byte("models:\n  qwen2.5-coder-32b: {input: -1, output: 1}\n"), 0o644)
	r := invoke(t, env, "index", "../../testdata/bundles")
	if r.code == ExitOK || !strings.Contains(r.stderr, prices+`:2:30: models.qwen2.5-coder-32b.input: "-1": want a number from 0`) {
		t.Fatalf("a bad prices file: %+v", r)
	}
}
