// Package yamldoc decodes the YAML files people write — scenario.yaml, model
// scripts, models.yaml, bounds files — from go-yaml's node tree, so that
// every problem is reported at once and in one format:
// "file:line:col: field: problem".
package yamldoc

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var syntaxPos = regexp.MustCompile(`^yaml: line (\d+)(?:, column (\d+))?: `)

// Parse reads the first YAML document of data and returns its top node, or
// nil when data holds no document. A syntax error says where, as
// "file:line:col: problem".
func Parse(file string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		msg := err.Error()
		if m := syntaxPos.FindStringSubmatch(msg); m != nil {
			col := m[2]
			if col == "" {
				col = "1"
			}
			return nil, fmt.Errorf("%s:%s:%s: %s", file, m[1], col, msg[len(m[0]):])
		}
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(msg, "yaml: "))
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	return root.Content[0], nil
}

// Decoder walks a document of File, collecting every problem with its place.
type Decoder struct {
	File     string
	problems []string
}

// Add records a problem at node n; field is its dotted path ("" for none).
func (d *Decoder) Add(n *yaml.Node, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	d.problems = append(d.problems, fmt.Sprintf("%s:%d:%d: %s", d.File, n.Line, n.Column, msg))
}

// Err is every problem recorded, a line each, or nil.
func (d *Decoder) Err() error {
	if len(d.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(d.problems, "\n"))
}

// Fields iterates a mapping's keys and values, reporting keys given twice
// and unknown keys (with the nearest known one).
func (d *Decoder) Fields(n *yaml.Node, prefix string, known []string, each func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.Add(n, prefix, "want a mapping, got %s", KindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := Join(prefix, k.Value)
		if seen[k.Value] {
			d.Add(k, name, "given twice")
			continue
		}
		seen[k.Value] = true
		if !slices.Contains(known, k.Value) {
			if near := Nearest(k.Value, known); near != "" {
				d.Add(k, name, "unknown field; did you mean %s?", near)
			} else {
				d.Add(k, name, "unknown field (known: %s)", strings.Join(known, ", "))
			}
			continue
		}
		each(k.Value, k, v)
	}
}

// Join is the dotted path of a field under prefix.
func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// KindName says what a node is, for messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

// Str is a text value.
func (d *Decoder) Str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.Add(n, field, "want text, got %s", KindName(n))
		return ""
	}
	return n.Value
}

// Strs is a list of text; a single text stands for a list of one.
func (d *Decoder) Strs(n *yaml.Node, field string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}
	}
	var out []string
	for i, c := range d.List(n, field) {
		out = append(out, d.Str(c, fmt.Sprintf("%s[%d]", field, i)))
	}
	return out
}

// List is the items of a list.
func (d *Decoder) List(n *yaml.Node, field string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		d.Add(n, field, "want a list, got %s", KindName(n))
		return nil
	}
	return n.Content
}

// PosInt is an integer ≥ 1.
func (d *Decoder) PosInt(n *yaml.Node, field string) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v <= 0 {
		d.Add(n, field, "want a positive integer, got %s", KindName(n))
		return 0
	}
	return v
}

// Count is an integer ≥ 0.
func (d *Decoder) Count(n *yaml.Node, field string) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil || v < 0 {
		d.Add(n, field, "want a whole number ≥ 0, got %s", KindName(n))
		return 0
	}
	return v
}

// Bool is true or false.
func (d *Decoder) Bool(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		d.Add(n, field, "want true or false, got %s", KindName(n))
	}
	return b
}

// Regex is a regular expression (RE2).
func (d *Decoder) Regex(n *yaml.Node, field string) *regexp.Regexp {
	s := d.Str(n, field)
	re, err := regexp.Compile(s)
	if err != nil {
		d.Add(n, field, "not a regular expression (RE2): %v", err)
		return nil
	}
	return re
}

// Nearest returns the known name closest to s, when it is close enough to be
// a likely typo.
func Nearest(s string, known []string) string {
	best, bestDist := "", 1<<30
	for _, k := range known {
		dist := editDistance(s, k)
		// On a tie, a word with the same letters wins: "taks" is "task"
		// typed out of order more likely than "tags" mistyped.
		if dist < bestDist || (dist == bestDist && sameLetters(s, k) && !sameLetters(s, best)) {
			best, bestDist = k, dist
		}
	}
	if bestDist <= max(2, len(s)/3) {
		return best
	}
	return ""
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of neighbouring letters that turn a into b.
func editDistance(a, b string) int {
	// rows i-2, i-1 and i of the table
	older, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], older[j-2]+1)
			}
		}
		older, prev, cur = prev, cur, older
	}
	return prev[len(b)]
}

// sameLetters reports whether a and b are made of the same letters.
func sameLetters(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var count [256]int
	for i := range len(a) {
		count[a[i]]++
		count[b[i]]--
	}
	return count == [256]int{}
}

// EnvName says whether s can name an environment variable, as the files
// proctor reads name them (a provider key's variable, a scenario's env):
// a letter or underscore, then letters, digits and underscores.
func EnvName(s string) bool {
	for i, r := range s {
		letter := r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
