package source

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Config is sources.yaml: the git hosts proctor reads private
// repositories from, each with the environment variable that holds its
// token.
//
//	sources:
//	  - host: github.com
//	    token_env: GITHUB_TOKEN
//	  - host: git.example.com
//	    token_env: EXAMPLE_GIT_TOKEN
type Config struct {
	Path  string
	Hosts []Host
}

// Host is one entry of sources.yaml.
type Host struct {
	Host     string // as in an https URL: git.example.com, or git.example.com:8443
	TokenEnv string
	Line     int
}

// hostName reports whether s is a host name with an optional port: a
// letter or digit, then up to 252 letters, digits, '.' and '-', then
// ":" and 1 to 5 digits. (A regular expression with {0,252} costs the
// binary's every start some milliseconds to compile, the sandbox's init
// included.)
func hostName(s string) bool {
	host, port, hasPort := strings.Cut(s, ":")
	if hasPort && (len(port) < 1 || len(port) > 5 || strings.Trim(port, "0123456789") != "") {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if len(host) < 1 || len(host) > 253 || !alnum(host[0]) {
		return false
	}
	for i := 1; i < len(host); i++ {
		if c := host[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// LoadConfig reads sources.yaml at path; a file that does not exist names
// no hosts.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{Path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sources: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig reads sources.yaml from data, reporting every problem as
// file:line:col: field: problem.
func ParseConfig(path string, data []byte) (*Config, error) {
	out := &Config{Path: path}
	doc, err := yamldoc.Parse(path, data)
	if err != nil || doc == nil {
		return out, err
	}
	d := &yamldoc.Decoder{File: path}
	d.Fields(doc, "", []string{"sources"}, func(_ string, _, v *yaml.Node) {
		seen := map[string]bool{}
		for i, n := range d.List(v, "sources") {
			field := fmt.Sprintf("sources[%d]", i)
			h := Host{Line: n.Line}
			d.Fields(n, field, []string{"host", "token_env"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "host":
					if h.Host = strings.ToLower(d.Str(v, field+".host")); h.Host != "" && !hostName(h.Host) {
						d.Add(v, field+".host", "%q: want a host name as in an https URL (git.example.com, git.example.com:8443), without a scheme or path", h.Host)
					}
				case "token_env":
					if h.TokenEnv = d.Str(v, field+".token_env"); h.TokenEnv != "" && !yamldoc.EnvName(h.TokenEnv) {
						d.Add(v, field+".token_env", "%q: give the name of the variable that holds the token, not the token", h.TokenEnv)
					}
				}
			})
			switch {
			case n.Kind != yaml.MappingNode:
				continue
			case h.Host == "":
				d.Add(n, field+".host", "missing")
			case h.TokenEnv == "":
				d.Add(n, field+".token_env", "missing: the variable that holds %s's token", h.Host)
			case seen[h.Host]:
				d.Add(n, field+".host", "%q is listed twice", h.Host)
			}
			seen[h.Host] = true
			out.Hosts = append(out.Hosts, h)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Credentials are the tokens of git hosts, by host. A token goes only to
// its own host: a repository on any other host is fetched without one.
type Credentials map[string]string

// Credentials reads each host's token from its variable; a variable that
// is not set is an error naming the file, the line and the variable. Names
// are the variables read, so their values can be kept out of what is
// recorded.
func (c *Config) Credentials(getenv func(string) string) (creds Credentials, names []string, err error) {
	creds = Credentials{}
	for _, h := range c.Hosts {
		v := getenv(h.TokenEnv)
		if v == "" {
			return nil, nil, fmt.Errorf("%s:%d: token_env %s (for %s) is not set or empty; set it, or remove the host", c.Path, h.Line, h.TokenEnv, h.Host)
		}
		creds[h.Host], names = v, append(names, h.TokenEnv)
	}
	return creds, names, nil
}

// For is the token for the repository at gitURL: its host's, or "" (a
// public repository, a local path or file:// URL).
func (c Credentials) For(gitURL string) string {
	u, err := url.Parse(gitURL)
	if err != nil || u.Scheme != "https" {
		return ""
	}
	return c[strings.ToLower(u.Host)]
}

// Set makes token the one of gitURL's host, which must be https.
func (c Credentials) Set(gitURL, token string) error {
	u, err := url.Parse(gitURL)
	if err != nil || u.Scheme != "https" {
		return fmt.Errorf("a token is sent only to an https repository, not %s", redactURL(gitURL))
	}
	c[strings.ToLower(u.Host)] = token
	return nil
}

// Secrets are the tokens, for redaction.
func (c Credentials) Secrets() []string {
	out := make([]string, 0, len(c))
	for _, v := range c {
		out = append(out, v)
	}
	return out
}
