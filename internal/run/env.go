package run

import (
	"slices"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/redact"
	"github.com/proctor-dev/proctor/internal/script"
)

// client starts the model a run talks to.
func (l *live) client(m ModelChoice) (*model.Client, func(), error) {
	retry := model.DefaultRetryPolicy()
	switch {
	case m.Profile != nil:
		retry = m.Profile.Retry()
	case m.Script != nil:
		retry = model.RetryPolicy{MaxAttempts: 1, AttemptTimeout: 60 * time.Second}
	}
	if l.r.Retry != nil {
		retry = *l.r.Retry
	}
	endpoint, stop, err := l.endpoint(m)
	if err != nil {
		return nil, nil, err
	}
	return model.NewClient(endpoint, retry, l.rec.exchange), stop, nil
}

// endpoint is where the model is reached: the profile's endpoint, or the
// script served on loopback until stop.
func (l *live) endpoint(m ModelChoice) (model.Endpoint, func(), error) {
	if m.Script == nil {
		return m.Endpoint, func() {}, nil
	}
	host, stop := l.r.Scripts, func() {}
	if host == nil { // a run of its own: a host for its script alone
		h, err := script.NewHost("127.0.0.1:0")
		if err != nil {
			return model.Endpoint{}, nil, err
		}
		host, stop = h, func() { h.Close() }
	}
	url, _, remove := host.Add(m.Script)
	return model.Endpoint{BaseURL: url, Model: m.Script.Model}, func() { remove(); stop() }, nil
}

// CommandEnv is env without the variables named in KeyEnvNames.
func (r *Runner) CommandEnv(env []string) []string { return withoutKeys(env, r.KeyEnvNames, nil) }

// withoutKeys is env without the variables that hold provider keys: those
// named in names, and any whose value is one of keys.
func withoutKeys(env, names, keys []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(names, k) || (v != "" && slices.Contains(keys, v)) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// modelKeys are the names and values of the keys a run's models use.
func (spec Spec) modelKeys() (names, values []string) {
	for _, m := range []*ModelChoice{&spec.Model, spec.Verifier} {
		if m == nil {
			continue
		}
		if m.Profile != nil && m.Profile.APIKeyEnv != "" {
			names = append(names, m.Profile.APIKeyEnv)
		}
		if m.Endpoint.APIKey != "" {
			values = append(values, m.Endpoint.APIKey)
		}
	}
	return names, values
}

// scrubbedEnv is the environment of commands in the workspace: the process
// environment without proctor's own and secret-looking variables.
func scrubbedEnv(environ []string, dir string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PROCTOR_") || redact.SecretName(k) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PROCTOR_WORKSPACE="+dir)
}
