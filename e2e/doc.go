// Package e2e holds proctor's browser tests: playwright-go driving Debian's
// Chromium against a real proctor server started in the test on a free
// loopback port with its own data folder. They are behind the e2e build tag
// and run by `go tool task e2e` (and `go tool task test`), which first
// installs Chromium and the Playwright driver when they are missing.
package e2e
