// Package redact owns removing secrets from text before it is stored or
// shown: the exact values of keys in use, and strings shaped like common API
// keys and tokens, are replaced by [REDACTED].
package redact

import (
	"regexp"
	"sort"
	"strings"
)

// Mark replaces every secret.
const Mark = "[REDACTED]"

// pattern is a secret shape, with literals one of which any match contains:
// the regular expression runs only on text that holds one, which keeps
// redacting large texts cheap.
type pattern struct {
	re       *regexp.Regexp
	literals []string
	keep     string // replacement prefix kept from the match
}

// patterns match common key and token shapes (listed in the README).
var patterns = []pattern{
	{re: regexp.MustCompile(`sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`), literals: []string{"sk-"}},                       // OpenAI, Anthropic
	{re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{30,}`), literals: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}}, // GitHub
	{re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{30,}`), literals: []string{"github_pat_"}},                        // GitHub fine-grained
	{re: regexp.MustCompile(`glpat-[A-Za-z0-9_\-]{20,}`), literals: []string{"glpat-"}},                                // GitLab
	{re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), literals: []string{"xox"}},                               // Slack
	{re: regexp.MustCompile(`AKIA[0-9A-Z]{16}`), literals: []string{"AKIA"}},                                           // AWS access key id
	{re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`), literals: []string{"AIza"}},                                     // Google API key
	{re: regexp.MustCompile(`p(?:tk|st)_[A-Za-z0-9_\-]{40,}`), literals: []string{"ptk_", "pst_"}},                     // proctor's own API tokens and session ids
	// Case-insensitive shapes are looked for when the text holds the word in
	// lower, title or upper case.
	{re: regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic)\s+)[^\s"']+`), literals: []string{"uthorization", "UTHORIZATION"}, keep: "${1}"},
	{re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}`), literals: []string{"earer", "EARER"}},
}

// Redactor replaces secrets in text.
type Redactor struct {
	values []string // exact secret values, longest first
	// starts holds the first two bytes of every secret value and pattern
	// literal, as a bit set: mayHold looks closer only where text has one.
	starts *pairSet
	first  [256]bool // the first bytes of the same
	lits   []string  // the values and the pattern literals
}

// pairSet is a set of two-byte sequences.
type pairSet [1 << 16 / 64]uint64

func (p *pairSet) add(s string) { k := pairKey(s[0], s[1]); p[k>>6] |= 1 << (k & 63) }

func (p *pairSet) has(a, b byte) bool { k := pairKey(a, b); return p[k>>6]&(1<<(k&63)) != 0 }

func pairKey(a, b byte) uint32 { return uint32(a)<<8 | uint32(b) }

// New returns a redactor for these exact secret values (empty and very
// short values are ignored: they would redact ordinary words).
func New(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		if len(strings.TrimSpace(v)) >= 6 {
			r.values = append(r.values, v)
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	r.lits = append(r.lits, r.values...)
	for _, p := range patterns {
		r.lits = append(r.lits, p.literals...)
	}
	r.starts = &literalStarts // never written: shared by every redactor
	if len(r.values) > 0 {
		own := literalStarts
		for _, v := range r.values {
			own.add(v) // every value is at least two bytes long
		}
		r.starts = &own
	}
	for _, l := range r.lits {
		r.first[l[0]] = true
	}
	return r
}

// literalStarts is the start table of the pattern literals alone, made
// once; a redactor with secret values of its own copies it.
var literalStarts = func() pairSet {
	var p pairSet
	for _, pt := range patterns {
		for _, l := range pt.literals {
			p.add(l)
		}
	}
	return p
}()

// FromEnv returns a redactor for the values of environment variables whose
// names look like they hold secrets, plus extra values.
func FromEnv(environ []string, extra ...string) *Redactor {
	values := append([]string{}, extra...)
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && SecretName(k) {
			values = append(values, v)
		}
	}
	return New(values...)
}

// secretWords make a variable's name look like it holds a secret, in any
// case ("api_key", "GITHUB_TOKEN", "DbPassword").
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

// SecretName reports whether an environment variable's name suggests it
// holds a secret. It is called for every variable of every run, so it
// compares words rather than running a regular expression.
func SecretName(name string) bool {
	upper := name
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' || c >= 0x80 {
			upper = strings.ToUpper(name)
			break
		}
	}
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || !mayHold(r, s) {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mark)
		}
	}
	for _, p := range patterns {
		if containsAny(s, p.literals) {
			s = p.re.ReplaceAllString(s, p.keep+Mark)
		}
	}
	return s
}

// Bytes is String for byte slices; b itself is returned when it holds no
// secret.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || !mayHold(r, b) {
		return b
	}
	return []byte(r.String(string(b)))
}

// mayHold reports whether b holds a secret value or a literal of a secret
// shape, without copying it.
// It reads b once: only where two bytes start a value or a literal does it
// compare further (most text is checked at a byte's cost).
func mayHold[T string | []byte](r *Redactor, b T) bool {
	for i := 0; i+1 < len(b); i++ {
		if !r.first[b[i]] || !r.starts.has(b[i], b[i+1]) {
			continue
		}
		for _, l := range r.lits {
			if len(b)-i >= len(l) && string(b[i:i+len(l)]) == l {
				return true
			}
		}
	}
	return false
}

func containsAny(s string, literals []string) bool {
	for _, l := range literals {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
