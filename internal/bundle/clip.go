package bundle

import (
	"strings"

	"github.com/proctor-dev/proctor/internal/clip"
)

// Line is s on one line (each run of white space one space), clipped to n
// characters: a title, a line of progress.
func Line(s string, n int) string { return clip.Head(strings.Join(strings.Fields(s), " "), n) }
