package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
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
