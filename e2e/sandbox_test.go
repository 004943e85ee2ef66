//go:build e2e

package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// On a host that cannot give the sandbox a wall it requires — here a
// seccomp filter around `proctor serve` refuses user namespaces, as
// Docker's default profile does — the dashboard says so on its first page,
// and the demo, which runs its commands confined, ends in error within
// seconds saying why, instead of waiting in the queue for good.
func TestTheDashboardSaysWhenTheSandboxCannotStart(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "proctor")
	build := exec.Command("go", "build", "-o", bin, "../cmd/proctor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build proctor: %v\n%s", err, out)
	}
	data := t.TempDir()
	serve := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--data", data)
	serve.Env = append(os.Environ(), "PROCTOR_E2E_EXEC_NO_USERNS="+bin)
	serve.Dir = t.TempDir()
	stdout, err := serve.StdoutPipe()
	must(t, err)
	serve.Stderr = os.Stderr
	must(t, serve.Start())
	t.Cleanup(func() { serve.Process.Signal(os.Interrupt); serve.Wait() })
	open, warning := "", ""
	lines := bufio.NewScanner(stdout)
	for open == "" || warning == "" {
		if !lines.Scan() {
			t.Fatalf("serve ended before it printed its address and the warning (open %q)", open)
		}
		line := lines.Text()
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "Open "); ok {
			open = u
		}
		if strings.Contains(line, "warning: runs with the sandbox on cannot start") {
			warning = line
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	if !strings.Contains(warning, "namespaces") {
		t.Errorf("serve's warning does not name the wall: %s", warning)
	}
	page := newPage(t)
	goTo(t, page, open)
	notice := page.Locator("#sandbox-problem")
	must(t, expect.Locator(notice).ToContainText("cannot start on this host"))
	must(t, expect.Locator(notice).ToContainText("namespaces"))
	must(t, expect.Locator(notice).ToContainText("proctor doctor"))
	screenshot(t, page, "sandbox-cannot-start")
	start := time.Now()
	must(t, page.Locator("#run-demo").Click())
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/runs/\d{8}-\d{6}-[a-z0-9]{6}$`)))
	failure := page.Locator("#failure")
	must(t, expect.Locator(failure).ToContainText("the sandbox could not start (namespaces)", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(5000)}))
	must(t, expect.Locator(failure).ToContainText("--sandbox off"))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the demo said why after %s", d)
	}
	must(t, expect.Locator(page.Locator("#timeline-list li").Filter(playwright.LocatorFilterOptions{HasText: "tool.call"})).ToHaveCount(0))
	screenshot(t, page, "sandbox-demo-refused")
}
