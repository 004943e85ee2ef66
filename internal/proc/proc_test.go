//go:build !windows

package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process whose context ends is stopped with all it started: a child
// that left it in the background is in its process group and is killed
// too, and Wait returns at once even though that child held its output.
func TestACanceledCommandTakesItsGroupAlong(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command(ctx, "sh", "-c", `sleep 600 & echo $! > "$1"; wait`, "sh", pidFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shell never started its child")
		}
		data, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	cancel()
	start := time.Now()
	cmd.Wait()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Wait took %v after the cancel", d)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := syscall.Kill(child, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background child %d outlived its command (%v)", child, err)
		}
	}
}

// Stop sends the signal asked for, to the whole group.
func TestStopSendsItsSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command(ctx, "sh", "-c", `trap 'exit 7' TERM; while :; do sleep 0.05; done`)
	Stop(cmd, syscall.SIGTERM, time.Second)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	err := cmd.Wait()
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("the command ended with %v, want its TERM trap's exit 7", err)
	}
}
