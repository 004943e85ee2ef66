// Package run owns one agent run from start to bundle: it acquires the
// source, prepares the isolated workspace, picks the model (a live profile,
// a script served on loopback, or a replay of a recorded run), drives the
// agent loop, runs the check commands and the verifier, computes the diff,
// and writes the bundle as it goes — the receipt when the run starts and
// when it ends, events and exchanges (redacted) as they happen — so that an
// interrupt or a failure keeps everything recorded so far.
package run
