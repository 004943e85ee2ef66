// Package bundle owns the run bundle: the folder of files that is the record of
// one agent run (run.json, events.jsonl, exchanges.jsonl, transcript.md,
// diff.patch, verdict.json) and the session files beside the runs. It defines
// the Go types of each file, reads them defensively (every problem reported as
// "file: field: problem"), and writes them atomically (temp file in the same
// folder, fsync, rename).
package bundle
