// Package patch owns reading unified diffs (the diff.patch of a run bundle)
// into files, hunks and numbered lines with what each file adds and removes,
// so that a diff can be shown and summarised. The parsing is
// github.com/bluekeyes/go-gitdiff's; this package maps it to the view the
// pages use.
package patch
