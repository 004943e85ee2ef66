package bounds_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/bounds"
)

func TestPrecedence(t *testing.T) {
	b := bounds.Defaults()
	env := map[string]string{"PROCTOR_MAX_TURNS": "10", "PROCTOR_MAX_TOOL_CALLS": "20", "PROCTOR_MAX_FILES": "30"}
	if err := bounds.FromEnv(&b, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "bounds.yaml")
	os.WriteFile(file, []byte("max_tool_calls: 21\nmax_files: 31\n"), 0o644)
	if err := bounds.FromFile(&b, file); err != nil {
		t.Fatal(err)
	}
	if err := bounds.Set(&b, "max_files", "32", "flag --max-files"); err != nil {
		t.Fatal(err)
	}
	d := bounds.Defaults()
	if b.MaxTurns != 10 || b.MaxToolCalls != 21 || b.MaxFiles != 32 || b.MaxFileBytes != d.MaxFileBytes {
		t.Fatalf("bounds = %+v", b)
	}
}

func TestBadValuesNameKeyValueAndSource(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		file string
		want []string
	}{
		{"env not a number", map[string]string{"PROCTOR_MAX_TURNS": "ten"}, "", []string{`env PROCTOR_MAX_TURNS: max_turns: "ten" is not a positive integer`}},
		{"env zero", map[string]string{"PROCTOR_MAX_FILES": "0"}, "", []string{`env PROCTOR_MAX_FILES: max_files: "0" is not a positive integer`}},
		{"env negative", map[string]string{"PROCTOR_MAX_FILE_BYTES": "-5"}, "", []string{`"-5" is not a positive integer`}},
		{"env beyond int64", map[string]string{"PROCTOR_MAX_TURNS": "99999999999999999999"}, "", []string{`max_turns: "99999999999999999999" is too large; the most is 2147483647`}},
		{"env beyond a count", map[string]string{"PROCTOR_MAX_TOOL_CALLS": "3000000000"}, "", []string{`"3000000000" is too large; the most is 2147483647`}},
		{"env hugely negative", map[string]string{"PROCTOR_MAX_FILES": "-99999999999999999999"}, "", []string{`is not a positive integer`}},
		{"file boolean", nil, "max_turns: true\n", []string{`bounds.yaml:1:12: max_turns: "true" is a boolean`}},
		{"file unknown key", nil, "max_turns: 3\nmax_turn: 4\n", []string{`bounds.yaml:2:1: max_turn: unknown field; did you mean max_turns?`}},
		{"file json", nil, `{"max_tool_calls": 1.5}`, []string{`bounds.yaml:1:20: max_tool_calls: "1.5" is not a positive integer`}},
		{"file list", nil, "max_turns: [1]\n", []string{"bounds.yaml:1:12: max_turns: want a positive number, got a list"}},
		{"cost zero", map[string]string{"PROCTOR_MAX_COST_USD": "0"}, "", []string{`env PROCTOR_MAX_COST_USD: max_cost_usd: "0" is not a positive number of US dollars (e.g. 0.50)`}},
		{"cost negative", map[string]string{"PROCTOR_MAX_COST_USD": "-1"}, "", []string{`"-1" is not a positive number of US dollars`}},
		{"cost words", map[string]string{"PROCTOR_MAX_COST_USD": "five"}, "", []string{`"five" is not a positive number`}},
		{"cost NaN", map[string]string{"PROCTOR_MAX_COST_USD": "NaN"}, "", []string{`"NaN" is not a positive number`}},
		{"cost infinite", map[string]string{"PROCTOR_MAX_COST_USD": "Inf"}, "", []string{`max_cost_usd: "Inf" is too large; the most is 1000000`}},
		{"cost too large", nil, "max_cost_usd: 2e6\n", []string{`bounds.yaml:1:15: max_cost_usd: "2e6" is too large`}},
		{"file not a mapping", nil, "- 1\n", []string{"bounds.yaml:1:1: want a mapping, got a list"}},
		{"all problems at once", map[string]string{"PROCTOR_MAX_TURNS": "x", "PROCTOR_MAX_FILES": "y"}, "", []string{"PROCTOR_MAX_TURNS", "PROCTOR_MAX_FILES"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := bounds.Defaults()
			var err error
			if tc.env != nil {
				err = bounds.FromEnv(&b, func(k string) string { return tc.env[k] })
			} else {
				path := filepath.Join(t.TempDir(), "bounds.yaml")
				os.WriteFile(path, []byte(tc.file), 0o644)
				err = bounds.FromFile(&b, path)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	b := bounds.Defaults()
	for value, want := range map[string]float64{"0.5": 0.5, "$2": 2, " 0.001 ": 0.001, "1e3": 1000} {
		if err := bounds.Set(&b, "max_cost_usd", value, "flag --max-cost-usd"); err != nil || b.MaxCostUSD != want {
			t.Errorf("max_cost_usd %q: %v, %v; want %v", value, b.MaxCostUSD, err, want)
		}
	}
	if err := bounds.Set(&b, "max_turnz", "3", "flag --max-turnz"); err == nil || !strings.Contains(err.Error(), `flag --max-turnz: unknown bound "max_turnz"`) {
		t.Fatalf("unknown flag key: %v", err)
	}
}
