// Package web holds proctor's pages as templ components: a layout and one
// component per page or page region, rendered from view models that the
// handlers in internal/server build. Everything from a bundle is rendered as
// escaped text; nothing here writes raw HTML.
package web
