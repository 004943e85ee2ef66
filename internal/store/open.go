package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/proctor-dev/proctor/migrations"

	"github.com/proctor-dev/proctor/internal/flock"
	"github.com/proctor-dev/proctor/internal/pricing"
)

const versionTable = "goose_db_version"

// Store is proctor's index database.
type Store struct {
	db   *sql.DB
	path string

	watchMu sync.Mutex // guards the connection Version reads on
	watch   *sql.Conn
	watchDB *sql.DB

	pricesMu sync.RWMutex
	prices   pricing.Table // what indexed runs cost (UsePrices)
}

// ErrNotSQLite is returned when the database path holds a file that is not a
// SQLite database.
var ErrNotSQLite = errors.New("not a SQLite database")

// ErrTooNew is returned when the database was migrated by a newer proctor.
var ErrTooNew = errors.New("database is newer than this proctor")

// Open opens (creating if needed) the index database at path and applies any
// pending migrations. A file that is not SQLite, or one migrated past the
// versions this binary knows, is refused before anything writes to it.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := checkFile(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	unlock, err := lockMigrations(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		st, err := Inspect(ctx, path)
		if err != nil {
			return nil, err
		}
		if st.Current > st.Latest {
			return nil, fmt.Errorf("open database %s: %w: it is at migration %d, this binary knows up to %d; use a newer proctor or point --data at another folder", path, ErrTooNew, st.Current, st.Latest)
		}
	}
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One writer at a time is SQLite's rule; a few readers may run beside it
	// under WAL.
	db.SetMaxOpenConns(4)
	s := &Store{db: db, path: path, prices: pricing.Builtin()}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// lockMigrations takes an exclusive flock on path+".lock" while a process
// checks and migrates the database, so processes opening a new database at
// once do not run the same migration twice. The kernel drops the lock when
// the process dies.
func lockMigrations(path string) (func(), error) {
	l, err := flock.Wait(context.Background(), path+".lock", true)
	if err != nil {
		return nil, fmt.Errorf("database %s, for migration: %w", path, err)
	}
	return func() { l.Unlock() }, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.watchMu.Lock()
	if s.watch != nil {
		s.watch.Close()
		s.watchDB.Close()
		s.watch, s.watchDB = nil, nil
	}
	s.watchMu.Unlock()
	return s.db.Close()
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// checkFile refuses a non-empty file at path that does not start with the
// SQLite header.
func checkFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	defer f.Close()
	header := make([]byte, 16)
	n, err := io.ReadFull(f, header)
	if n == 0 && (err == io.EOF || err == nil) {
		return nil // an empty file becomes a new database
	}
	if !bytes.Equal(header[:n], []byte("SQLite format 3\x00")) {
		return fmt.Errorf("open database %s: %w; it was left untouched — move it aside or point --data at another folder", path, ErrNotSQLite)
	}
	return nil
}

func (s *Store) provider() (*goose.Provider, error) {
	return goose.NewProvider(goose.DialectSQLite3, s.db, migrations.FS,
		goose.WithLogger(goose.NopLogger()), goose.WithDisableGlobalRegistry(true))
}

func (s *Store) migrate(ctx context.Context) error {
	p, err := s.provider()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate database %s: %w", s.path, err)
	}
	for _, r := range results {
		slog.Debug("applied migration", "version", r.Source.Version, "path", r.Source.Path, "duration", r.Duration)
	}
	return nil
}

// Migration is one migration and whether the database has it.
type Migration struct {
	Version int64
	Name    string
	Applied bool
}

// Status describes a database's migration state.
type Status struct {
	Current    int64 // highest version applied; 0 for a new database
	Latest     int64 // highest version this binary knows
	Migrations []Migration
}

// Inspect reads the migration state of the database at path without changing
// it (the file is opened read-only; a missing file reads as version 0).
func Inspect(ctx context.Context, path string) (Status, error) {
	st := Status{}
	known, err := knownMigrations()
	if err != nil {
		return st, err
	}
	if n := len(known); n > 0 {
		st.Latest = known[n-1].Version
	}
	applied := map[int64]bool{}
	if err := checkFile(path); err != nil {
		return st, err
	}
	if info, err := os.Stat(path); err == nil && info.Size() > 0 {
		db, err := sql.Open("sqlite", dsn(path, true))
		if err != nil {
			return st, fmt.Errorf("inspect database %s: %w", path, err)
		}
		defer db.Close()
		var exists int
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, versionTable).Scan(&exists)
		if err != nil {
			if strings.Contains(err.Error(), "file is not a database") {
				return st, fmt.Errorf("open database %s: %w; it was left untouched — move it aside or point --data at another folder", path, ErrNotSQLite)
			}
			return st, fmt.Errorf("inspect database %s: %w", path, err)
		}
		if exists > 0 {
			rows, err := db.QueryContext(ctx, `SELECT version_id, is_applied FROM `+versionTable+` ORDER BY id`)
			if err != nil {
				return st, fmt.Errorf("inspect database %s: %w", path, err)
			}
			defer rows.Close()
			for rows.Next() {
				var v int64
				var ok bool
				if err := rows.Scan(&v, &ok); err != nil {
					return st, fmt.Errorf("inspect database %s: %w", path, err)
				}
				applied[v] = ok
				if ok && v > st.Current {
					st.Current = v
				}
			}
			if err := rows.Err(); err != nil {
				return st, fmt.Errorf("inspect database %s: %w", path, err)
			}
		}
	}
	for _, m := range known {
		st.Migrations = append(st.Migrations, Migration{Version: m.Version, Name: m.Name, Applied: applied[m.Version]})
	}
	return st, nil
}

func knownMigrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		v, err := goose.NumericComponent(e.Name())
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name()})
	}
	return out, nil
}
