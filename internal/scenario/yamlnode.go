package scenario

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder walks a YAML document, collecting every problem with its place.
type decoder struct {
	file     string
	problems []string
}

func (d *decoder) add(n *yaml.Node, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	d.problems = append(d.problems, fmt.Sprintf("%s:%d:%d: %s", d.file, n.Line, n.Column, msg))
}

// fields iterates a mapping's keys and values, reporting unknown keys with
// the nearest known one.
func (d *decoder) fields(n *yaml.Node, prefix string, known []string, each func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.add(n, prefix, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(prefix, k.Value)
		if seen[k.Value] {
			d.add(k, name, "given twice")
			continue
		}
		seen[k.Value] = true
		if !contains(known, k.Value) {
			if near := nearest(k.Value, known); near != "" {
				d.add(k, name, "unknown field; did you mean %s?", near)
			} else {
				d.add(k, name, "unknown field (known: %s)", strings.Join(known, ", "))
			}
			continue
		}
		each(k.Value, k, v)
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
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

func (d *decoder) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.add(n, field, "want text, got %s", kindName(n))
		return ""
	}
	return n.Value
}

func (d *decoder) strs(n *yaml.Node, field string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value} // a single string where a list is expected
	}
	if n.Kind != yaml.SequenceNode {
		d.add(n, field, "want a list of text, got %s", kindName(n))
		return nil
	}
	var out []string
	for i, c := range n.Content {
		out = append(out, d.str(c, fmt.Sprintf("%s[%d]", field, i)))
	}
	return out
}

func (d *decoder) posInt(n *yaml.Node, field string) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!bool" || err != nil || v <= 0 {
		d.add(n, field, "want a positive integer, got %s", kindName(n))
		return 0
	}
	return v
}

func (d *decoder) boolean(n *yaml.Node, field string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		d.add(n, field, "want true or false, got %s", kindName(n))
	}
	return b
}

func (d *decoder) regex(n *yaml.Node, field string) *regexp.Regexp {
	s := d.str(n, field)
	re, err := regexp.Compile(s)
	if err != nil {
		d.add(n, field, "not a regular expression (RE2): %v", err)
		return nil
	}
	return re
}

// nearest returns the known name closest to s, when it is close enough to be
// a likely typo.
func nearest(s string, known []string) string {
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
