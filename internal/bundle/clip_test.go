package bundle_test

import (
	"testing"

	"github.com/proctor-dev/proctor/internal/bundle"
)

func TestLineIsOneClippedLine(t *testing.T) {
	if got := bundle.Line("fix\n\tthe   rounding\r\nbug", 80); got != "fix the rounding bug" {
		t.Errorf("Line: %q", got)
	}
	if got := bundle.Line("日本語の\nテキスト", 4); got != "日本語…" {
		t.Errorf("Line, clipped: %q", got)
	}
}
