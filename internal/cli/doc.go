// Package cli owns proctor's command line: the subcommands, their flags and
// help, where the data folder is, and the exit codes (0 success, 1 the work
// found a problem, 2 wrong usage or set-up error).
package cli
