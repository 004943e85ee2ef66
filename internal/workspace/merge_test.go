package workspace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/proctor-dev/proctor/internal/workspace"
)

func TestMerge3(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\ng\nh\ni\n"
	tests := []struct {
		name, ours, theirs, want string
		conflicts                int
	}{
		{"apart", "A\nb\nc\nd\ne\nf\ng\nh\ni\n", "a\nb\nc\nd\ne\nf\ng\nh\nI\n", "A\nb\nc\nd\ne\nf\ng\nh\nI\n", 0},
		{"the same line", "a\nb\nc\nD1\ne\nf\ng\nh\ni\n", "a\nb\nc\nD2\ne\nf\ng\nh\ni\n", "", 1},
		{"unchanged ours", base, "a\nB\nc\nd\ne\nf\ng\nh\ni\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := workspace.Merge3(context.Background(), []byte(tc.ours), []byte(base), []byte(tc.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.conflicts {
				t.Fatalf("%d conflicts, want %d:\n%s", n, tc.conflicts, got)
			}
			if n == 0 && string(got) != tc.want {
				t.Errorf("merged:\n%s\nwant:\n%s", got, tc.want)
			}
			if n > 0 && (!strings.Contains(string(got), "<<<<<<< source") || !strings.Contains(string(got), ">>>>>>> run")) {
				t.Errorf("conflict not marked:\n%s", got)
			}
		})
	}
}
