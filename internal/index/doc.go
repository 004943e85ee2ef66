// Package index owns bringing run bundles on disk into the store: it walks
// folders for run bundles and session files, skips the ones whose
// fingerprint has not changed, reads the rest, records every problem with its
// path and reason, and forgets bundles that are gone. Indexing is idempotent,
// and a rebuild from the files gives the same rows as the live index.
package index
