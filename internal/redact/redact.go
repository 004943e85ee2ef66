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

// patterns match common key and token shapes (documented in docs/security.md
// when that exists; README for now).
var patterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`),              // OpenAI, Anthropic
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{30,}`),                         // GitHub tokens
	regexp.MustCompile(`github_pat_[A-Za-z0-9_]{30,}`),                       // GitHub fine-grained tokens
	regexp.MustCompile(`glpat-[A-Za-z0-9_\-]{20,}`),                          // GitLab
	regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`),                      // Slack
	regexp.MustCompile(`AKIA[0-9A-Z]{16}`),                                   // AWS access key id
	regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`),                             // Google API key
	regexp.MustCompile(`(?i)(authorization:\s*(?:bearer|basic)\s+)[^\s"']+`), // Authorization headers
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}`),
}

// Redactor replaces secrets in text.
type Redactor struct {
	values []string // exact secret values, longest first
}

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
	return r
}

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

var secretName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)`)

// SecretName reports whether an environment variable's name suggests it
// holds a secret.
func SecretName(name string) bool { return secretName.MatchString(name) }

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mark)
		}
	}
	for i, p := range patterns {
		if i == 7 { // keep the header name, drop the credential
			s = p.ReplaceAllString(s, "${1}"+Mark)
			continue
		}
		s = p.ReplaceAllString(s, Mark)
	}
	return s
}

// Bytes is String for byte slices.
func (r *Redactor) Bytes(b []byte) []byte { return []byte(r.String(string(b))) }
