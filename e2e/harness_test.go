//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/proctor-dev/proctor/internal/approval"
	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/demo"
	"github.com/proctor-dev/proctor/internal/external"
	"github.com/proctor-dev/proctor/internal/index"
	"github.com/proctor-dev/proctor/internal/jobs"
	"github.com/proctor-dev/proctor/internal/launch"
	"github.com/proctor-dev/proctor/internal/live"
	"github.com/proctor-dev/proctor/internal/model"
	"github.com/proctor-dev/proctor/internal/run"
	"github.com/proctor-dev/proctor/internal/script"
	"github.com/proctor-dev/proctor/internal/server"
	"github.com/proctor-dev/proctor/internal/store"
	"github.com/proctor-dev/proctor/internal/testutil"
)

// browser is shared by the tests of this package; each test gets its own
// context (cookies, storage) and page.
type browserEnv struct {
	pw      *playwright.Playwright
	browser playwright.Browser
}

func startBrowser() (*browserEnv, error) {
	driver := os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	if driver == "" {
		home, _ := os.UserHomeDir()
		driver = filepath.Join(home, ".cache", "proctor", "pwdriver", "1.52.0")
	}
	if _, err := os.Stat(filepath.Join(driver, "package", "cli.js")); err != nil {
		return nil, fmt.Errorf("no Playwright driver in %s: run `go tool task e2e`, which installs it (%w)", driver, err)
	}
	chromium := os.Getenv("PROCTOR_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		return nil, fmt.Errorf("no Chromium at %s: run `go tool task e2e`, which installs it (%w)", chromium, err)
	}
	pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: driver, SkipInstallBrowsers: true})
	if err != nil {
		return nil, fmt.Errorf("start Playwright driver: %w", err)
	}
	b, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromium),
		Headless:       playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage"},
	})
	if err != nil {
		pw.Stop()
		return nil, fmt.Errorf("launch Chromium: %w", err)
	}
	return &browserEnv{pw: pw, browser: b}, nil
}

func (b *browserEnv) close() {
	b.browser.Close()
	b.pw.Stop()
}

var shared *browserEnv // set once in TestMain, read-only afterwards

func TestMain(m *testing.M) {
	if bin := os.Getenv("PROCTOR_E2E_EXEC_NO_USERNS"); bin != "" {
		// A host like a container with Docker's default seccomp profile:
		// proctor (bin) runs under a filter that refuses user namespaces.
		if err := testutil.RefuseUserNamespaces(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(125)
		}
		err := syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(125)
	}
	b, err := startBrowser()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	shared = b
	code := m.Run()
	b.close()
	os.Exit(code)
}

// app is a proctor server running for one test.
type app struct {
	URL     string
	DataDir string
	Roots   string // the source root launched runs work under
	Store   *store.Store
	stop    func()
}

// startApp starts a real proctor server on a free loopback port with a fresh
// data folder, indexing each of the given folders first.
func startApp(t *testing.T, indexPaths ...string) *app {
	t.Helper()
	roots := t.TempDir()
	must(t, demo.WriteFixture(filepath.Join(roots, "invoice")))
	return serveApp(t, t.TempDir(), roots, indexPaths...)
}

// restart stops the app's server (as Ctrl-C does: the runs it was working
// on end interrupted) and starts a new one on the same data folder and
// source root, on another port.
func (a *app) restart(t *testing.T) *app {
	t.Helper()
	a.stop()
	return serveApp(t, a.DataDir, a.Roots)
}

// serveApp serves the data folder dataDir, with a source root holding the
// demo project, and a model profile served by the demo script on
// loopback, for launching runs from the form.
func serveApp(t *testing.T, dataDir, roots string, indexPaths ...string) *app {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dataDir, "proctor.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(indexPaths) > 0 {
		if _, err := index.New(st).Index(ctx, indexPaths...); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	news := live.New() // as proctor serve: the run pages' streams wake on the runs' news
	runner := &run.Runner{DataDir: dataDir, Environ: os.Environ(), Index: index.Into(st), OnEvent: func(id string, _ bundle.Event) { news.Publish(id) }}
	queue := jobs.New(runner, 2)
	context.AfterFunc(ctx, queue.Close)
	board := approval.NewBoard(time.Minute, news.Publish)
	made := filepath.Join(dataDir, "scenarios")
	must(t, os.MkdirAll(made, 0o755))
	sc, err := demo.Script()
	must(t, err)
	ep, err := script.Start(sc, "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ep.Close() })
	profiles := func() (*model.Profiles, error) {
		return model.ParseProfiles("models.yaml", []byte("profiles:\n  - name: local-demo\n    base_url: "+ep.URL+"\n    model: proctor-demo\n"))
	}
	launcher := &launch.Launcher{Runner: runner, Queue: queue, Board: board, SourceRoots: []string{roots}, Profiles: profiles,
		Agents: func() (*external.File, error) { return external.Load(filepath.Join(dataDir, "agents.yaml")) },
		// The first is where Make a scenario writes: the test's own.
		ScenarioRoots: []string{made, "../examples/scenarios", "../testdata/scenarios/fails-scope", "testdata/scenarios/agent-writes"}}
	srv := server.New(st, server.Config{DataDir: dataDir, Launcher: launcher, Reviewer: "e2e", Live: news, LocalSecret: localSecret})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("server: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("server did not stop")
		}
		queue.Wait(context.Background())
		st.Close()
	}
	t.Cleanup(stop)
	return &app{URL: "http://" + ln.Addr().String(), DataDir: dataDir, Roots: roots, Store: st, stop: stop}
}

// localSecret is the local secret of the apps these tests serve: a
// single-user dashboard asks every request for it (loopback is not a
// login).
const localSecret = "plk_e2e-local-secret-0123456789abcdefghijklmno"

// newContext is a fresh browser context that has opened the address serve
// prints once: it holds the local secret's cookie (for 127.0.0.1, any
// port). TestTheDashboardNeedsItsSecret opens one without.
func newContext(t *testing.T, opts playwright.BrowserNewContextOptions) playwright.BrowserContext {
	t.Helper()
	ctx, err := shared.browser.NewContext(opts)
	if err != nil {
		t.Fatal(err)
	}
	must(t, ctx.AddCookies([]playwright.OptionalCookie{{Name: server.LocalCookie, Value: localSecret, Domain: playwright.String("127.0.0.1"), Path: playwright.String("/"),
		HttpOnly: playwright.Bool(true), SameSite: playwright.SameSiteAttributeLax}}))
	return ctx
}

// newPage opens a page in a fresh browser context. Console errors (a
// blocked script, a CSP violation) fail the test.
func newPage(t *testing.T) playwright.Page {
	t.Helper()
	ctx := newContext(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1366, Height: 900}})
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(10000)
	page.On("console", func(m playwright.ConsoleMessage) {
		// A refused sign-in is answered 401 (or 429 when limited) on purpose,
		// and a revoked or expired share link 404. A form shown again with
		// its errors is a page like any other (200): no console error.
		expected := (strings.Contains(page.URL(), "/share/") && strings.Contains(m.Text(), "status of 404")) ||
			(strings.Contains(page.URL(), "/signin") && (strings.Contains(m.Text(), "status of 401") || strings.Contains(m.Text(), "status of 429")))
		if m.Type() == "error" && !expected {
			t.Errorf("browser console error on %s: %s", page.URL(), m.Text())
		}
	})
	page.On("pageerror", func(err error) {
		t.Errorf("page error on %s: %v", page.URL(), err)
	})
	t.Cleanup(func() { ctx.Close() })
	return page
}

var expect = playwright.NewPlaywrightAssertions(10000)

// screenshot saves the page to e2e/screenshots/<name>.png (git-ignored).
func screenshot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	if err := os.MkdirAll("screenshots", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path: playwright.String(filepath.Join("screenshots", name+".png")), FullPage: playwright.Bool(true),
	}); err != nil {
		t.Fatal(err)
	}
}

// launchScripted launches from the Launch form a run of proctor's agent
// on the folder path (under the roots), with task, against the model
// script under the roots.
func launchScripted(t *testing.T, page playwright.Page, appURL, path, task, script string) {
	t.Helper()
	goTo(t, page, appURL+"/launch")
	must(t, page.Locator("#path").Fill(path))
	must(t, page.Locator("#task").Fill(task))
	must(t, page.Locator("#script").Fill(script))
	must(t, page.Locator("#launch").Click())
}

func goTo(t *testing.T, page playwright.Page, url string) {
	t.Helper()
	resp, err := page.Goto(url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if resp.Status() >= 400 {
		t.Fatalf("open %s: status %d", url, resp.Status())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// copyBundles copies the sample bundles into a folder the test may change.
func copyBundles(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	must(t, os.CopyFS(dst, os.DirFS("../testdata/bundles")))
	return dst
}

// writeSyntheticRuns writes n small valid run bundles under root/runs.
func writeSyntheticRuns(t *testing.T, root string, n int) {
	t.Helper()
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("20261101-synth-%04d", i)
		dir := filepath.Join(root, "runs", id)
		must(t, os.MkdirAll(dir, 0o755))
		started := start.Add(time.Duration(i) * time.Minute)
		ended := started.Add(42 * time.Second)
		r := &bundle.Receipt{
			Schema: bundle.ReceiptSchema, RunID: id, Kind: bundle.KindTask, Status: bundle.StatusPassed,
			Stage: bundle.StageCompleted, Task: fmt.Sprintf("Synthetic task number %d", i),
			Source: bundle.Source{Kind: "local", Path: "/src/demo"}, Model: bundle.Model{Name: "scripted"},
			StartedAt: started, EndedAt: &ended,
		}
		must(t, bundle.WriteReceipt(dir, r))
	}
}

func rowsText(t *testing.T, page playwright.Page) string {
	t.Helper()
	texts, err := page.Locator("table.runs tbody tr").AllInnerTexts()
	must(t, err)
	return strings.Join(texts, "\n")
}

// answerNextDialog answers the page's next confirm dialog, which must
// start with want: yes (accept) or no.
func answerNextDialog(t *testing.T, page playwright.Page, yes bool, want string) {
	t.Helper()
	page.Once("dialog", func(d playwright.Dialog) {
		if !strings.HasPrefix(d.Message(), want) {
			t.Errorf("dialog %q, want one starting %q", d.Message(), want)
		}
		if yes {
			d.Accept()
		} else {
			d.Dismiss()
		}
	})
}
