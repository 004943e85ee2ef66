package gitcmd_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/gitcmd"
)

// A git proctor runs sees none of the GIT_* variables around proctor, and
// no global config: a GIT_DIR pointing elsewhere, a config injected by
// variables, an alias from a global file are all ignored.
func TestGitIgnoresTheEnvironmentAroundProctor(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_DIR", "/nonexistent/elsewhere.git")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "user.name")
	t.Setenv("GIT_CONFIG_VALUE_0", "injected")
	t.Setenv("GIT_CONFIG_GLOBAL", home+"/evil")
	for _, kv := range gitcmd.Env("GIT_AUTHOR_NAME=ok") {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") || kv == "GIT_CONFIG_GLOBAL="+home+"/evil" {
			t.Errorf("%s reached git", kv)
		}
	}
	dir := t.TempDir()
	if out, err := gitcmd.Command(context.Background(), dir, nil, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init in %s (not at GIT_DIR): %v %s", dir, err, out)
	}
	out, _ := gitcmd.Command(context.Background(), dir, nil, "config", "user.name").Output()
	if strings.TrimSpace(string(out)) == "injected" {
		t.Fatal("a config given by GIT_CONFIG_* variables reached git")
	}
}
