package model

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/proctor-dev/proctor/internal/yamldoc"
)

// Profile is a named live model: where it is, which model, and the name of
// the environment variable that holds its key. The key itself is never in
// the file and never stored.
type Profile struct {
	Name    string
	Kind    string // the provider's kind (Kinds): which API it speaks and how it takes its key; "" is openai
	BaseURL string
	Model   string
	// Models are other models an agent may name in its calls through this
	// profile (a small model for its side calls), each costed at its own
	// price; a call that names any other model is refused.
	Models    []string
	APIKeyEnv string
	TimeoutS  int
	Stream    bool
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
//	  - name: claude
//	    kind: anthropic               # openai (default), anthropic or gemini
//	    base_url: https://api.anthropic.com/v1
//	    model: claude-sonnet-4-5
//	    models: [claude-haiku-4-5]    # others an agent may call through it
//	    api_key_env: ANTHROPIC_API_KEY
func ParseProfiles(path string, data []byte) (*Profiles, error) {
	doc, err := yamldoc.Parse(path, data)
	if err != nil {
		return nil, err
	}
	out := &Profiles{Path: path}
	if doc == nil {
		return out, nil
	}
	d := &yamldoc.Decoder{File: path}
	d.Fields(doc, "", []string{"profiles"}, func(_ string, _, v *yaml.Node) {
		seen := map[string]bool{}
		for j, pn := range d.List(v, "profiles") {
			field := fmt.Sprintf("profiles[%d]", j)
			p := profile(d, withoutSecrets(d, pn, field), field)
			switch {
			case pn.Kind != yaml.MappingNode:
				continue
			case p.Name == "":
				d.Add(pn, field+".name", "missing")
			case seen[p.Name]:
				d.Add(pn, field+".name", "%q is defined twice", p.Name)
			}
			seen[p.Name] = true
			out.Profiles = append(out.Profiles, p)
		}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func profile(d *yamldoc.Decoder, n *yaml.Node, field string) Profile {
	var p Profile
	d.Fields(n, field, []string{"name", "kind", "base_url", "model", "models", "api_key_env", "timeout_s", "stream"}, func(key string, _, v *yaml.Node) {
		f := field + "." + key
		switch key {
		case "kind":
			if p.Kind = d.Str(v, f); !slices.Contains(Kinds, p.Kind) {
				d.Add(v, f, "%q: want one of %s (the API the provider speaks)", p.Kind, strings.Join(Kinds, ", "))
			}
		case "name":
			p.Name = d.Str(v, f)
		case "base_url":
			p.BaseURL = d.Str(v, f)
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.Add(v, f, "%q is not an http(s) URL", p.BaseURL)
			}
		case "model":
			p.Model = d.Str(v, f)
		case "models":
			p.Models = d.Strs(v, f)
		case "api_key_env":
			p.APIKeyEnv = d.Str(v, f)
			if !yamldoc.EnvName(p.APIKeyEnv) {
				d.Add(v, f, "%q is not an environment variable name (it must name the variable, not hold the key)", p.APIKeyEnv)
			}
		case "timeout_s":
			p.TimeoutS = d.PosInt(v, f)
		case "stream":
			p.Stream = d.Bool(v, f)
		}
	})
	if n.Kind == yaml.MappingNode {
		if p.BaseURL == "" {
			d.Add(n, field+".base_url", "missing")
		}
		if p.Model == "" {
			d.Add(n, field+".model", "missing")
		}
	}
	return p
}

// withoutSecrets reports every key of a profile that would hold a secret
// (api_key, token…) and returns the profile without them.
func withoutSecrets(d *yamldoc.Decoder, n *yaml.Node, field string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	kept := *n
	kept.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if secretKey.MatchString(k.Value) && k.Value != "api_key_env" {
			d.Add(k, field+"."+k.Value, "a literal secret is not allowed in this file; put it in an environment variable and name that variable in api_key_env")
			continue
		}
		kept.Content = append(kept.Content, k, n.Content[i+1])
	}
	return &kept
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
	e := Endpoint{BaseURL: p.BaseURL, Model: p.Model, Kind: p.Kind}
	if e.Kind == "" {
		e.Kind = KindOpenAI
	}
	if p.APIKeyEnv != "" {
		e.APIKey = getenv(p.APIKeyEnv)
		if e.APIKey == "" {
			return e, fmt.Errorf("model profile %q: environment variable %s is empty; export the provider's key in it", p.Name, p.APIKeyEnv)
		}
	}
	return e, nil
}

// Allows lists the models a call through the profile may name: its model
// and its models.
func (p Profile) Allows() []string { return append([]string{p.Model}, p.Models...) }

// Retry is the retry policy for the profile.
func (p Profile) Retry() RetryPolicy {
	r := DefaultRetryPolicy()
	if p.TimeoutS > 0 {
		r.AttemptTimeout = time.Duration(p.TimeoutS) * time.Second
	}
	return r
}
