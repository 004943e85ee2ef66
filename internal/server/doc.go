// Package server owns proctor's HTTP surface: the echo router, the handlers
// that turn requests into store queries and bundle reads and hand view models
// to the templ components in web/, the JSON API under /api/v1, the embedded
// static assets, and the security headers every response carries.
package server
