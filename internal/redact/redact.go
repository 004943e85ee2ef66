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
// the regular expression runs only on text that holds one.
type pattern struct {
	re       *regexp.Regexp
	literals []string
	keep     string // replacement prefix kept from the match
}

// patterns match common key and token shapes (listed in docs/security.md).
var patterns = []pattern{
	{re: regexp.MustCompile(`sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`), literals: []string{"sk-"}},                       // OpenAI, Anthropic
	{re: regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{30,}`), literals: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}}, // GitHub
	{re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{30,}`), literals: []string{"github_pat_"}},                        // GitHub fine-grained
	{re: regexp.MustCompile(`glpat-[A-Za-z0-9_\-]{20,}`), literals: []string{"glpat-"}},                                // GitLab
	{re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), literals: []string{"xox"}},                               // Slack
	{re: regexp.MustCompile(`AKIA[0-9A-Z]{16}`), literals: []string{"AKIA"}},                                           // AWS access key id
	{re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`), literals: []string{"AIza"}},                                     // Google API key
	{re: regexp.MustCompile(`p(?:tk|st|lk)_[A-Za-z0-9_\-]{40,}`), literals: []string{"ptk_", "pst_", "plk_"}},          // proctor's own API tokens, session ids and local secret
	// Case-insensitive shapes are looked for when the text holds the word in
	// lower, title or upper case.
	// An Authorization header's credentials however it is written: as a
	// header (any case), in JSON ("Authorization": "Basic …"), or as a
	// key=value.
	{re: regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token)\s+)[^\s"']+`), literals: []string{"uthorization", "UTHORIZATION"}, keep: "${1}"},
	{re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}`), literals: []string{"earer", "EARER"}},
}

// FragmentLen is the shortest piece of a secret value that is redacted on
// its own: a command that prints part of a key (`${KEY:0:20}`, a key cut
// across lines) leaks it as surely as the whole key.
const FragmentLen = 12

// Redactor replaces secrets in text.
type Redactor struct {
	values []string // exact secret values, longest first
	// fragments holds every FragmentLen-byte piece of the values that are
	// at least that long.
	fragments map[string]bool
}

// New returns a redactor for these exact secret values (empty and very
// short values are ignored: they would redact ordinary words). Values of
// FragmentLen bytes or more are also redacted wherever FragmentLen or more
// of their bytes appear together.
func New(values ...string) *Redactor {
	r := &Redactor{fragments: map[string]bool{}}
	for _, v := range values {
		if len(strings.TrimSpace(v)) < 6 {
			continue
		}
		r.values = append(r.values, v)
		for i := 0; i+FragmentLen <= len(v); i++ {
			r.fragments[v[i:i+FragmentLen]] = true
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

// secretWords make a variable's name look like it holds a secret, in any
// case ("api_key", "GITHUB_TOKEN", "DbPassword").
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}

// SecretName reports whether an environment variable's name suggests it
// holds a secret.
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Mark)
	}
	s = r.fragmentsOut(s)
	for _, p := range patterns {
		if containsAny(s, p.literals) {
			s = p.re.ReplaceAllString(s, p.keep+Mark)
		}
	}
	return s
}

// fragmentsOut replaces each longest run of s that is a piece of a secret
// value, FragmentLen bytes or longer.
func (r *Redactor) fragmentsOut(s string) string {
	if len(r.fragments) == 0 || len(s) < FragmentLen {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+FragmentLen <= len(s); {
		if !r.fragments[s[i:i+FragmentLen]] {
			i++
			continue
		}
		j := i + FragmentLen
		for j < len(s) && r.piece(s[i:j+1]) {
			j++
		}
		b.WriteString(s[last:i])
		b.WriteString(Mark)
		last, i = j, j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// piece reports whether p is a piece of one of the values.
func (r *Redactor) piece(p string) bool {
	for _, v := range r.values {
		if strings.Contains(v, p) {
			return true
		}
	}
	return false
}

// Bytes is String for byte slices; b itself is returned when it holds no
// secret.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	if out := r.String(string(b)); out != string(b) {
		return []byte(out)
	}
	return b
}

func containsAny(s string, literals []string) bool {
	for _, l := range literals {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
