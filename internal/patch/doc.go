// Package patch owns reading unified diffs (the diff.patch of a run bundle):
// it splits a diff into files, hunks and numbered lines and counts what each
// file adds and removes, so that a diff can be shown and summarised.
package patch
