package model

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Profile is a named live model: where it is, which model, and the name of
// the environment variable that holds its key. The key itself is never in
// the file and never stored.
type Profile struct {
	Name      string `yaml:"name"`
	BaseURL   string `yaml:"base_url"`
	Model     string `yaml:"model"`
	APIKeyEnv string `yaml:"api_key_env"`
	TimeoutS  int    `yaml:"timeout_s"`
	Stream    bool   `yaml:"stream"`
}

// Profiles is the content of models.yaml.
type Profiles struct {
	Path     string
	Missing  bool // no file is at Path
	Profiles []Profile
}

// secretKey matches field names that would hold a literal secret.
var secretKey = regexp.MustCompile(`(?i)(api_?key|token|secret|password)$`)

// LoadProfiles reads models.yaml. A missing file is no profiles. Every
// problem names the file, the line and the field.
func LoadProfiles(path string) (*Profiles, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Profiles{Path: path, Missing: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read model profiles: %w", err)
	}
	return ParseProfiles(path, data)
}

// ParseProfiles parses the models.yaml format:
//
//	profiles:
//	  - name: openai
//	    base_url: https://api.openai.com/v1
//	    model: gpt-4.1
//	    api_key_env: OPENAI_API_KEY
func ParseProfiles(path string, data []byte) (*Profiles, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yamlMessage(err))
	}
	var problems []string
	add := func(n *yaml.Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...)))
	}
	out := &Profiles{Path: path}
	if len(root.Content) == 0 {
		return out, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping with a profiles list", path, doc.Line)
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value != "profiles" {
			add(k, "unknown key %q; the file holds one key, profiles", k.Value)
			continue
		}
		if v.Kind != yaml.SequenceNode {
			add(v, "profiles: want a list of profiles")
			continue
		}
		seen := map[string]bool{}
		for j, pn := range v.Content {
			field := fmt.Sprintf("profiles[%d]", j)
			if pn.Kind != yaml.MappingNode {
				add(pn, "%s: want a mapping", field)
				continue
			}
			var p Profile
			known := map[string]bool{"name": true, "base_url": true, "model": true, "api_key_env": true, "timeout_s": true, "stream": true}
			for f := 0; f+1 < len(pn.Content); f += 2 {
				fk := pn.Content[f]
				switch {
				case secretKey.MatchString(fk.Value) && fk.Value != "api_key_env":
					add(fk, "%s.%s: a literal secret is not allowed in this file; put it in an environment variable and name that variable in api_key_env", field, fk.Value)
				case !known[fk.Value]:
					add(fk, "%s: unknown field %q (known: name, base_url, model, api_key_env, timeout_s, stream)", field, fk.Value)
				}
			}
			if err := pn.Decode(&p); err != nil {
				add(pn, "%s: %s", field, yamlMessage(err))
				continue
			}
			switch {
			case p.Name == "":
				add(pn, "%s.name: missing", field)
			case seen[p.Name]:
				add(pn, "%s.name: %q is defined twice", field, p.Name)
			}
			seen[p.Name] = true
			if u, err := url.Parse(p.BaseURL); p.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add(pn, "%s.base_url: %q is not an http(s) URL", field, p.BaseURL)
			}
			if p.Model == "" {
				add(pn, "%s.model: missing", field)
			}
			if p.APIKeyEnv != "" && !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(p.APIKeyEnv) {
				add(pn, "%s.api_key_env: %q is not an environment variable name (it must name the variable, not hold the key)", field, p.APIKeyEnv)
			}
			if p.TimeoutS < 0 {
				add(pn, "%s.timeout_s: must be a positive number of seconds, got %d", field, p.TimeoutS)
			}
			out.Profiles = append(out.Profiles, p)
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return out, nil
}

// Find returns the named profile.
func (ps *Profiles) Find(name string) (Profile, error) {
	var names []string
	for _, p := range ps.Profiles {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	switch {
	case ps.Missing:
		return Profile{}, fmt.Errorf("model profile %q: there is no models file at %s (looked there for --models, else $PROCTOR_MODELS, else $XDG_CONFIG_HOME/proctor/models.yaml); create it with a profile (see docs/models.md), or use a model script", name, ps.Path)
	case len(names) == 0:
		return Profile{}, fmt.Errorf("model profile %q: %s defines no profiles; add one (see docs/models.md)", name, ps.Path)
	}
	return Profile{}, fmt.Errorf("model profile %q is not in %s (it has: %s)", name, ps.Path, strings.Join(names, ", "))
}

// Endpoint resolves a profile's key from the environment.
func (p Profile) Endpoint(getenv func(string) string) (Endpoint, error) {
	e := Endpoint{BaseURL: p.BaseURL, Model: p.Model}
	if p.APIKeyEnv != "" {
		e.APIKey = getenv(p.APIKeyEnv)
		if e.APIKey == "" {
			return e, fmt.Errorf("model profile %q: environment variable %s is empty; export the provider's key in it", p.Name, p.APIKeyEnv)
		}
	}
	return e, nil
}

// Retry is the retry policy for the profile.
func (p Profile) Retry() RetryPolicy {
	r := DefaultRetryPolicy()
	if p.TimeoutS > 0 {
		r.AttemptTimeout = time.Duration(p.TimeoutS) * time.Second
	}
	return r
}

// yamlMessage strips the library's prefix from a YAML error.
func yamlMessage(err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "unmarshal errors:\n  ")
}
