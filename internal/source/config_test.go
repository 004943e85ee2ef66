package source

import (
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/yamldoc"
)

func TestSourcesConfig(t *testing.T) {
	good := "sources:\n  - host: GitHub.com\n    token_env: GITHUB_TOKEN\n  - {host: \"git.example.com:8443\", token_env: EXAMPLE_TOKEN}\n"
	cfg, err := ParseConfig("sources.yaml", []byte(good))
	if err != nil || len(cfg.Hosts) != 2 || cfg.Hosts[0].Host != "github.com" || cfg.Hosts[1].TokenEnv != "EXAMPLE_TOKEN" {
		t.Fatalf("ParseConfig = %+v, %v", cfg, err)
	}
	env := map[string]string{"GITHUB_TOKEN": "gh-secret", "EXAMPLE_TOKEN": "ex-secret"}
	creds, names, err := cfg.Credentials(func(k string) string { return env[k] })
	if err != nil || strings.Join(names, ",") != "GITHUB_TOKEN,EXAMPLE_TOKEN" {
		t.Fatalf("Credentials: %v %v", names, err)
	}
	for url, want := range map[string]string{
		"https://github.com/o/n.git":           "gh-secret",
		"https://GITHUB.com/o/n.git":           "gh-secret",
		"https://git.example.com:8443/o/n.git": "ex-secret",
		"https://git.example.com/o/n.git":      "", // another port is another host
		"https://github.com.evil.example/o/n":  "",
		"http://github.com/o/n.git":            "", // never over plain http
		"file:///srv/github.com/o/n.git":       "",
		"/srv/repo":                            "",
	} {
		if got := creds.For(url); got != want {
			t.Errorf("For(%s) = %q, want %q", url, got, want)
		}
	}
	if err := creds.Set("file:///srv/x", "t"); err == nil {
		t.Error("a token was set for a file:// repository")
	}
	if _, _, err := cfg.Credentials(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "sources.yaml:2: token_env GITHUB_TOKEN (for github.com) is not set") {
		t.Errorf("an unset variable: %v", err)
	}
	for _, tc := range []struct{ src, want string }{
		{"sources:\n  - host: https://github.com\n    token_env: T\n", `sources[0].host: "https://github.com": want a host name`},
		{"sources:\n  - host: github.com\n    token_env: ghp_abc-123\n", "give the name of the variable that holds the token, not the token"},
		{"sources:\n  - host: github.com\n", "sources[0].token_env: missing"},
		{"sources:\n  - token_env: T\n", "sources[0].host: missing"},
		{"sources:\n  - {host: a.com, token_env: T}\n  - {host: A.com, token_env: U}\n", `"a.com" is listed twice`},
		{"source:\n  - {host: a.com, token_env: T}\n", "source: unknown field; did you mean sources?"},
		{"sources: {host: a.com}\n", "sources: want a list"},
	} {
		if _, err := ParseConfig("sources.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
	if cfg, err := LoadConfig(t.TempDir() + "/none.yaml"); err != nil || len(cfg.Hosts) != 0 {
		t.Errorf("a missing file: %+v %v", cfg, err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("sources:\n  - host: github.com\n    token_env: GITHUB_TOKEN\n")
	f.Add("sources: []\n")
	f.Add("sources:\n  - {host: \"h:1\", token_env: A}\n  - [1, 2]\n")
	f.Add("sources: &a\n  - *a\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParseConfig("sources.yaml", []byte(src))
		if err == nil {
			for _, h := range cfg.Hosts {
				if !hostName(h.Host) || !yamldoc.EnvName(h.TokenEnv) {
					t.Fatalf("accepted %+v", h)
				}
			}
		}
	})
}

// hostName accepts what the regular expression it replaced accepted, and
// nothing else.
func FuzzHostNameIsTheRegularExpression(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?$`)
	for _, s := range []string{"github.com", "git.example.com:8443", "a", "-a", "a:", "a:123456", "a:1:2", "ä.com", strings.Repeat("a", 253), strings.Repeat("a", 254), "a.b-c:0", ":80", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hostName(s), re.MatchString(s); got != want {
			t.Fatalf("hostName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
