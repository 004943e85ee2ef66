// Package bounds owns the limits a run is held to: their defaults, and
// reading them from the environment (PROCTOR_MAX_TURNS …), a JSON or YAML
// file, and flags, in that order of precedence, with every bad value refused
// by naming the key, the value and where it came from.
package bounds

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Keys are the bound names, as in files and on the receipt.
func Keys() []string {
	return []string{"max_turns", "max_tool_calls", "max_tool_output_chars", "max_files", "max_workspace_bytes", "max_file_bytes", "wall_clock_s", "max_tokens", "max_processes", "max_cpu_s", "max_cost_usd"}
}

// MaxCostUSD is the largest max_cost_usd.
const MaxCostUSD = 1e6

// Defaults are the bounds when nothing else is said; wall_clock_s,
// max_tokens, max_cpu_s and max_cost_usd are unset (no limit).
func Defaults() bundle.Bounds {
	return bundle.Bounds{
		MaxTurns:           30,
		MaxToolCalls:       100,
		MaxToolOutputChars: 20000,
		MaxFiles:           10000,
		MaxWorkspaceBytes:  512 << 20,
		MaxFileBytes:       4 << 20,
		MaxProcesses:       1024,
	}
}

// maxBound is the largest value a bound may take.
func maxBound(key string) int64 {
	if key == "max_workspace_bytes" || key == "max_file_bytes" || key == "max_tokens" {
		return 1<<63 - 1
	}
	return 1<<31 - 1
}

// EnvName is the environment variable of a bound: max_turns →
// PROCTOR_MAX_TURNS.
func EnvName(key string) string { return "PROCTOR_" + strings.ToUpper(key) }

// FlagName is the command-line flag of a bound: max_turns → max-turns.
func FlagName(key string) string { return strings.ReplaceAll(key, "_", "-") }

// Set parses value as the bound key, recording where it came from in any
// error (e.g. "env PROCTOR_MAX_TURNS", "flag --max-turns", "bounds.yaml:3:1").
func Set(b *bundle.Bounds, key, value, source string) error {
	if err := set(b, key, value); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	return nil
}

func set(b *bundle.Bounds, key, value string) error {
	if key == "max_cost_usd" { // US dollars: the one bound that is not a whole number
		v := strings.TrimPrefix(strings.TrimSpace(value), "$")
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(f) || f <= 0:
			return fmt.Errorf("%s: %q is not a positive number of US dollars (e.g. 0.50)", key, value)
		case f > MaxCostUSD:
			return fmt.Errorf("%s: %q is too large; the most is %.0f", key, value, float64(MaxCostUSD))
		}
		b.MaxCostUSD = f
		return nil
	}
	target, ok := field(b, key)
	if !ok {
		return fmt.Errorf("unknown bound %q (known: %s)", key, strings.Join(Keys(), ", "))
	}
	v := strings.TrimSpace(value)
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case v == "true" || v == "false":
		return fmt.Errorf("%s: %q is a boolean; want a positive integer", key, value)
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-"), err == nil && n > maxBound(key):
		return fmt.Errorf("%s: %q is too large; the most is %d", key, value, maxBound(key))
	case err != nil || n <= 0:
		return fmt.Errorf("%s: %q is not a positive integer", key, value)
	}
	target(n)
	return nil
}

func field(b *bundle.Bounds, key string) (func(int64), bool) {
	switch key {
	case "max_turns":
		return func(n int64) { b.MaxTurns = int(n) }, true
	case "max_tool_calls":
		return func(n int64) { b.MaxToolCalls = int(n) }, true
	case "max_tool_output_chars":
		return func(n int64) { b.MaxToolOutputChars = int(n) }, true
	case "max_files":
		return func(n int64) { b.MaxFiles = int(n) }, true
	case "max_workspace_bytes":
		return func(n int64) { b.MaxWorkspaceBytes = n }, true
	case "max_file_bytes":
		return func(n int64) { b.MaxFileBytes = n }, true
	case "wall_clock_s":
		return func(n int64) { b.WallClockS = int(n) }, true
	case "max_tokens":
		return func(n int64) { b.MaxTokens = n }, true
	case "max_processes":
		return func(n int64) { b.MaxProcesses = int(n) }, true
	case "max_cpu_s":
		return func(n int64) { b.MaxCPUS = int(n) }, true
	}
	return nil, false
}

// FromEnv applies every PROCTOR_MAX_* variable that is set.
func FromEnv(b *bundle.Bounds, getenv func(string) string) error {
	var errs []error
	for _, k := range Keys() {
		if v := getenv(EnvName(k)); v != "" {
			errs = append(errs, Set(b, k, v, "env "+EnvName(k)))
		}
	}
	return errors.Join(errs...)
}

// FromFile applies a JSON or YAML file of bounds (JSON is YAML too): a
// mapping of bound names to positive integers (max_cost_usd: a positive
// number).
func FromFile(b *bundle.Bounds, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read bounds file: %w", err)
	}
	doc, err := yamldoc.Parse(path, data)
	if err != nil || doc == nil {
		return err
	}
	d := &yamldoc.Decoder{File: path}
	d.Fields(doc, "", Keys(), func(key string, _, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode {
			d.Add(v, key, "want a positive number, got %s", yamldoc.KindName(v))
		} else if err := set(b, key, v.Value); err != nil {
			d.Add(v, "", "%v", err)
		}
	})
	return d.Err()
}
