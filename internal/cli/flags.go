package cli

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// modelsPath resolves models.yaml: the flag, else $PROCTOR_MODELS, else
// $XDG_CONFIG_HOME/proctor/models.yaml, else ~/.config/proctor/models.yaml.
func modelsPath(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := getenv("PROCTOR_MODELS"); v != "" {
		return v
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "proctor", "models.yaml")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "proctor", "models.yaml")
}
