package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestServeStartsIndexesAndStops(t *testing.T) {
	data := t.TempDir()
	if r := invoke(t, map[string]string{"PROCTOR_DATA": data}, "index", "../../testdata/bundles"); r.code != ExitOK {
		t.Fatalf("index: %+v", r)
	}
	srv, stop := startServe(t, "--addr", "127.0.0.1:0", "--data", data)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(srv.line)
	if url == "" {
		t.Fatalf("no address in %q", srv.line)
	}
	// Single-user on loopback: the API asks for the local secret, which
	// serve keeps in its data folder for its user alone.
	secret, err := os.ReadFile(filepath.Join(data, "local.secret"))
	if info, serr := os.Stat(filepath.Join(data, "local.secret")); err != nil || serr != nil || info.Mode().Perm() != 0o600 || !strings.HasPrefix(string(secret), "plk_") {
		t.Fatalf("the local secret: %q %v %v", secret, err, serr)
	}
	for auth, want := range map[string]int{"": http.StatusUnauthorized, "Bearer plk_guessed": http.StatusUnauthorized, "Bearer " + strings.TrimSpace(string(secret)): http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, url+"/api/v1/runs/20261201-093012-k3f9qa", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("Authorization %q: status %d, want %d", auth, resp.StatusCode, want)
		}
	}
	if stop(); srv.code != ExitOK {
		t.Fatalf("serve exited %d", srv.code)
	}
}

func TestServeBeyondLoopbackNeedsAnAdmin(t *testing.T) {
	data := t.TempDir()
	r := invokeIn(t, data, "", "serve", "--addr", "0.0.0.0:0")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "proctor user add NAME --role admin") {
		t.Fatalf("serve on 0.0.0.0 without an admin: %+v", r)
	}
	if r := invokeIn(t, data, "", "serve", "--addr", "127.0.0.1:0", "--tls-cert", "x.pem"); r.code != ExitUsage || !strings.Contains(r.stderr, "--tls-key") {
		t.Fatalf("--tls-cert alone: %+v", r)
	}
	if r := invokeIn(t, data, "a-long-password\n", "user", "add", "ada", "--role", "admin"); r.code != ExitOK {
		t.Fatalf("user add: %+v", r)
	}
	srv, _ := startServe(t, "--addr", "0.0.0.0:0", "--data", data)
	port := regexp.MustCompile(`:(\d+) `).FindStringSubmatch(srv.line)
	if port == nil {
		t.Fatalf("no port in %q", srv.line)
	}
	resp, err := http.Get("http://127.0.0.1:" + port[1] + "/api/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API without a token on a LAN server: %d, want 401", resp.StatusCode)
	}
	if !strings.Contains(srv.stderr.String(), "without TLS") {
		t.Errorf("no clear-text warning in %q", srv.stderr.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "proctor test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServeOverTLS(t *testing.T) {
	data := t.TempDir()
	certFile, keyFile, pool := selfSigned(t)
	if r := invokeIn(t, data, "", "serve", "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", "/nope.pem"); r.code != ExitUsage || !strings.Contains(r.stderr, "/nope.pem") {
		t.Fatalf("a missing key: %+v", r)
	}
	if r := invokeIn(t, data, "a-long-password\n", "user", "add", "ada", "--role", "admin"); r.code != ExitOK {
		t.Fatalf("user add: %+v", r)
	}
	srv, _ := startServe(t, "--addr", "127.0.0.1:0", "--data", data, "--tls-cert", certFile, "--tls-key", keyFile)
	base := regexp.MustCompile(`https://127\.0\.0\.1:\d+`).FindString(srv.line)
	if base == "" {
		t.Fatalf("no https address in %q", srv.line)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(base + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("sign-in page over TLS: %d", resp.StatusCode)
	}
	if strings.Contains(srv.stderr.String(), "without TLS") {
		t.Errorf("warned about clear text while serving TLS: %q", srv.stderr.String())
	}
}

// With no flags, Launch works on the folder serve starts in and Suites on
// ./examples/scenarios: a newcomer's `go run ./cmd/proctor serve` in the
// repository can launch a task and a suite from the browser.
func TestServeDefaultsLetANewcomerLaunch(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN=1", "PROCTOR_DATA="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	rd := bufio.NewReader(out)
	var said [3]string
	for i := range said {
		said[i], _ = rd.ReadString('\n')
	}
	go io.Copy(io.Discard, rd)
	open := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=plk_[A-Za-z0-9_-]+`).FindString(said[1])
	if open == "" || !strings.Contains(said[2], "Launch works on folders under "+repo) || !strings.Contains(said[2], filepath.Join(repo, "examples", "scenarios")) {
		t.Fatalf("serve said:\n%s%s%s", said[0], said[1], said[2])
	}
	// One click on the address serve printed opens the dashboard, and the
	// browser keeps the secret for the pages after it.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(open)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(resp.Request.URL.String(), "token=") {
		t.Fatalf("the printed address: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	base := open[:strings.Index(open, "/?token=")]
	for path, want := range map[string]string{
		"/launch": `<option value="0" selected>` + repo + `</option>`,
		"/suites": `<option value="rename-config-key" selected>`,
	} {
		resp, err := browser.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d, lacks %q", path, resp.StatusCode, want)
		}
	}
}

// serving is a `proctor serve` running in this process.
type serving struct {
	line   string      // the first line it printed (its address)
	stderr *syncBuffer // what it wrote to stderr
	code   int         // its exit code, once stopped
}

// startServe runs Main("serve", args…) until the test ends, and returns
// once it has printed its address. stop ends it (like Ctrl-C) and waits.
func startServe(t *testing.T, args ...string) (s *serving, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s = &serving{stderr: new(syncBuffer)}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve"}, args...), Env{Stdout: pw, Stderr: s.stderr, Getenv: func(string) string { return "" }})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve printed no address: %v (stderr: %s)", err, s.stderr.String())
	}
	go io.Copy(io.Discard, pr)
	s.line = line
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case s.code = <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop on cancel")
		}
	}
	t.Cleanup(stop)
	return s, stop
}

// Another user of the machine reaches a single-user serve on loopback but
// cannot drive it: it cannot read the local secret (mode 0600), and every
// API call without it — a launch with the sandbox off included — is
// refused.
func TestAnotherLocalUserCannotDriveAServe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	data, roots := t.TempDir(), t.TempDir()
	os.Chmod(data, 0o755) // even a data folder others may enter
	writeTree(t, roots, map[string]string{"src/a.txt": "old\n", "model.yaml": "steps:\n  - reply: {content: done}\n"})
	_, srv := serveChild(t, data, roots)
	port := srv.url[strings.LastIndex(srv.url, ":")+1:]
	as := func(script string) (string, error) {
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", script)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := as("cat " + filepath.Join(data, "local.secret")); err == nil {
		t.Fatalf("another user read the local secret: %s", out)
	}
	out, err := as(`exec 3<>/dev/tcp/127.0.0.1/` + port + `
body='{"path": "src", "task": "x", "script": "model.yaml", "sandbox": "off"}'
printf 'POST /api/v1/runs HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' ${#body} "$body" >&3
head -n 1 <&3`)
	if err != nil || !strings.Contains(out, "401") {
		t.Fatalf("another user's launch: %v %q, want 401", err, out)
	}
	if runs, _ := filepath.Glob(filepath.Join(data, "runs", "*", "run.json")); len(runs) > 0 {
		t.Fatalf("a run was launched: %v", runs)
	}
	// The same launch with the secret is taken: the refusal was the secret's.
	if code, out := srv.postJSON(t, "/api/v1/runs", `{"path": "src", "task": "x", "script": "model.yaml", "sandbox": "off"}`); code != http.StatusAccepted {
		t.Fatalf("the launch with the secret: %d %v", code, out)
	}
}
