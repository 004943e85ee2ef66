// Package static holds the dashboard's browser assets — the vendored HTMX 2
// and its SSE extension, the stylesheet and the small keyboard script —
// embedded in the binary.
package static

import "embed"

// FS holds the assets, served under /static/.
//
//go:embed style.css app.js favicon.svg vendor
var FS embed.FS
