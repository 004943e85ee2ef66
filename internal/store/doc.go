// Package store owns proctor's SQLite index: opening the database file
// (modernc.org/sqlite, WAL, busy timeout, foreign keys), applying the goose
// migrations embedded from migrations/, and every SQL statement, behind typed
// methods. The index is rebuilt from run bundles; nothing here is the record.
package store
