package cli

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ", ") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// isTerminal reports whether r is a terminal (a person can answer).
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	// A character device is not enough: /dev/null is one.
	return term.IsTerminal(int(f.Fd()))
}

// modelsPath resolves models.yaml: the flag, else $PROCTOR_MODELS, else
// $XDG_CONFIG_HOME/proctor/models.yaml, else ~/.config/proctor/models.yaml.
func modelsPath(flagValue string, getenv func(string) string) string {
	return configPath(flagValue, "PROCTOR_MODELS", "models.yaml", getenv)
}

// agentsPath is agents.yaml: the flag, else $PROCTOR_AGENTS, else beside
// models.yaml.
func agentsPath(flagValue string, getenv func(string) string) string {
	return configPath(flagValue, "PROCTOR_AGENTS", "agents.yaml", getenv)
}

// sourcesFlag is --sources, on the commands that clone git sources.
func sourcesFlag(fs *flagSet) *string {
	return fs.String("sources", "", "sources.yaml `file`: git hosts and the variables holding their tokens (default $PROCTOR_SOURCES, else beside models.yaml)")
}

func sourcesPath(flagValue string, getenv func(string) string) string {
	return configPath(flagValue, "PROCTOR_SOURCES", "sources.yaml", getenv)
}

func configPath(flagValue, envName, file string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := getenv(envName); v != "" {
		return v
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "proctor", file)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "proctor", file)
}
