package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-dev/proctor/internal/bundle"
	"github.com/proctor-dev/proctor/internal/patch"
	"github.com/proctor-dev/proctor/internal/pricing"
	"github.com/proctor-dev/proctor/internal/store"
)

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func runDuration(r store.RunSummary) string {
	if r.EndedAt == nil {
		return "running"
	}
	return formatDuration(r.Duration())
}

// formatCount is a count with its thousands grouped: "1,130".
func formatCount(n int64) string {
	if n < 0 {
		return "-" + formatCount(-n)
	}
	s := strconv.FormatInt(n, 10)
	if n < 1000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// stageWords says where a run is, or where it was when it ended: a run
// that ended in a working stage (interrupted, or an error) stopped there,
// it is not still in it.
func stageWords(stage bundle.Stage, ended bool) string {
	switch {
	case !ended, stage == bundle.StageCompleted, stage == bundle.StageFailed, stage == bundle.StageAwaitingReview:
		return "stage " + humanStatus(stage)
	}
	return "stopped in stage " + humanStatus(stage)
}

// formatBytes is a size in the binary unit that holds it whole or with
// one decimal: "512 MiB", "1.5 GiB", "900 B".
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if u == 0 || v == float64(int64(v)) {
		return strconv.FormatFloat(v, 'f', 0, 64) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

func humanStatus[S ~string](s S) string { return strings.ReplaceAll(string(s), "_", " ") }

// title is a run's task as a title: its first paragraph, shortened to n
// characters (the rest is in the transcript).
func title(task string, n int) string {
	first, _, _ := strings.Cut(strings.TrimSpace(strings.ReplaceAll(task, "\r\n", "\n")), "\n\n")
	return bundle.Line(first, n)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func offsetFrom(first time.Time, ev bundle.Event) string {
	d := ev.Time.Sub(first)
	if d <= 0 {
		return "+0s"
	}
	return "+" + formatDuration(d)
}

// eventClass groups event types for colouring the timeline.
func eventClass(t string) string {
	kind, _, _ := strings.Cut(t, ".")
	switch {
	case strings.HasSuffix(t, ".failed") || strings.HasSuffix(t, ".interrupted") || strings.HasSuffix(t, ".retry"):
		return "ev-bad"
	case kind == "model" || kind == "tool" || kind == "stage" || kind == "approval" || kind == "review" || kind == "check":
		return "ev-" + kind
	}
	return "ev-other"
}

// formatCost is a run's cost in dollars, or "no price" when the price
// table has none for its model (never $0).
func formatCost(usd *float64) string {
	if usd == nil {
		return pricing.Format(0, false)
	}
	return pricing.Format(*usd, true)
}

func lineNo(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func diffTotals(files []patch.File) string {
	a, d := patch.Stats(files)
	return fmt.Sprintf("%s, +%d −%d", plural(len(files), "file", "files"), a, d)
}

func itoa(n int) string { return strconv.Itoa(n) }

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func pct(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return formatCount(int64(n)) + " " + many
}

func waitedFor(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	if d < time.Second {
		return "since just now"
	}
	return "for " + formatDuration(d)
}

func dateValue(t time.Time, minusDay bool) string {
	if t.IsZero() {
		return ""
	}
	if minusDay {
		t = t.AddDate(0, 0, -1)
	}
	return t.Format("2006-01-02")
}

// cacheNote says how many of a run's prompt tokens came from the
// provider's cache and went into it, when it said; "" otherwise.
func cacheNote(u bundle.Usage) string {
	var parts []string
	if u.CacheReadTokens > 0 {
		parts = append(parts, formatCount(u.CacheReadTokens)+" read from cache")
	}
	if u.CacheWriteTokens > 0 {
		parts = append(parts, formatCount(u.CacheWriteTokens)+" written to cache")
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
