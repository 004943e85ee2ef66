package patch

import (
	"fmt"
	"strings"
	"time"
)

// Mbox is a change as one message of an mbox, the form `git am` reads:
// its subject and message, its author and date, and the diff — written
// from the text alone, so that no repository is opened to make it (a run
// pushed from elsewhere has none here). git am applies it onto the run's
// base by the diff's own lines.
func Mbox(diff, subject, message, author string, at time.Time) []byte {
	subject = strings.Join(strings.Fields(subject), " ") // one header line
	var b strings.Builder
	fmt.Fprintf(&b, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n")
	fmt.Fprintf(&b, "From: %s\n", strings.Join(strings.Fields(author), " "))
	fmt.Fprintf(&b, "Date: %s\n", at.UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Subject: [PATCH] %s\n\n", subject)
	if message = strings.TrimSpace(message); message != "" {
		// A line that starts as a diff would be taken for the patch.
		for _, line := range strings.Split(message, "\n") {
			if strings.HasPrefix(line, "diff ") || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "From ") {
				line = " " + line
			}
			b.WriteString(line + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("---\n\n")
	b.WriteString(diff)
	if !strings.HasSuffix(diff, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("-- \nproctor\n\n")
	return []byte(b.String())
}
