// Package migrations holds proctor's SQLite schema as ordered goose SQL
// migrations, embedded in the binary and applied by internal/store on open.
package migrations

import "embed"

// FS holds the *.sql migrations.
//
//go:embed *.sql
var FS embed.FS
