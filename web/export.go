package web

import (
	"context"
	"io"

	"github.com/a-h/templ"
)

// exportCSS hides in an exported file what only works on the dashboard:
// forms, the view toggle, "viewed" marks, links to the dashboard's own
// pages.
const exportCSS = `
body.export form, body.export .view-toggle, body.export #bundle-files, body.export #bundle-files + ul,
body.export label.viewed, body.export #viewed-count, body.export #export-link { display: none; }
body.export main { max-width: 1100px; }
`

// inlineStyle is proctor's own stylesheet (never anything a bundle wrote)
// in a <style> element.
func inlineStyle(css string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, "<style>"+css+exportCSS+"</style>")
		return err
	})
}
