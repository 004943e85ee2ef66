package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, Env{
			Stdout: pw, Stderr: io.Discard, Getenv: func(string) string { return "" },
		})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	if url == "" {
		t.Fatalf("no address in %q", line)
	}
	resp, err := http.Get(url + "/api/v1/runs/20261201-093012-k3f9qa")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("serve exited %d", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on cancel")
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "0.0.0.0:0", "--data", data}, Env{
			Stdout: pw, Stderr: &stderr, Getenv: func(string) string { return "" },
		})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	port := regexp.MustCompile(`:(\d+) `).FindStringSubmatch(line)
	if port == nil {
		t.Fatalf("no port in %q", line)
	}
	resp, err := http.Get("http://127.0.0.1:" + port[1] + "/api/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API without a token on a LAN server: %d, want 401", resp.StatusCode)
	}
	if !strings.Contains(stderr.String(), "without TLS") {
		t.Errorf("no clear-text warning in %q", stderr.String())
	}
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop on cancel")
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
