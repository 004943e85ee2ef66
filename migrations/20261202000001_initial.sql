-- +goose Up
-- bundles: every bundle file or folder the index has seen, with the
-- fingerprint that lets an unchanged bundle be skipped cheaply.
CREATE TABLE bundles (
    path        TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('run', 'session')),
    fingerprint TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    indexed_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    run_id            TEXT NOT NULL UNIQUE,
    bundle_path       TEXT NOT NULL UNIQUE,
    session_id        TEXT NOT NULL DEFAULT '',
    kind              TEXT NOT NULL,
    status            TEXT NOT NULL,
    stage             TEXT NOT NULL,
    task              TEXT NOT NULL,
    model_profile     TEXT NOT NULL DEFAULT '',
    model_name        TEXT NOT NULL,
    source_kind       TEXT NOT NULL,
    source_location   TEXT NOT NULL DEFAULT '',
    source_commit     TEXT NOT NULL DEFAULT '',
    scenario_id       TEXT NOT NULL DEFAULT '',
    scenario_repeat   INTEGER NOT NULL DEFAULT 0,
    failure_domain    TEXT NOT NULL DEFAULT '',
    failure_code      TEXT NOT NULL DEFAULT '',
    failure_message   TEXT NOT NULL DEFAULT '',
    started_at        INTEGER NOT NULL,
    ended_at          INTEGER,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens      INTEGER NOT NULL DEFAULT 0,
    model_calls       INTEGER NOT NULL DEFAULT 0,
    changed_count     INTEGER NOT NULL DEFAULT 0,
    diff_bytes        INTEGER NOT NULL DEFAULT 0,
    verify_verdict    TEXT NOT NULL DEFAULT '',
    review_state      TEXT NOT NULL CHECK (review_state IN ('none', 'pending', 'approved', 'rejected')),
    receipt           TEXT NOT NULL
) STRICT;

-- One index per list the pages show: keyset pagination walks
-- (started_at DESC, run_id DESC) within each filter.
CREATE INDEX runs_started ON runs (started_at DESC, run_id DESC);
CREATE INDEX runs_status ON runs (status, started_at DESC, run_id DESC);
CREATE INDEX runs_kind ON runs (kind, started_at DESC, run_id DESC);
CREATE INDEX runs_scenario ON runs (scenario_id, started_at DESC, run_id DESC);
CREATE INDEX runs_model ON runs (model_name, started_at DESC, run_id DESC);
CREATE INDEX runs_review ON runs (review_state, started_at DESC, run_id DESC);
CREATE INDEX runs_session ON runs (session_id, started_at, run_id);

CREATE TABLE reviews (
    run_id      TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    approved    INTEGER NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    reviewed_by TEXT NOT NULL,
    reviewed_at INTEGER NOT NULL,
    has_diff    INTEGER NOT NULL,
    applied     INTEGER NOT NULL,
    changed     TEXT NOT NULL DEFAULT '[]'
) STRICT;

CREATE TABLE verdicts (
    run_id        TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    scenario      TEXT NOT NULL,
    passed        INTEGER NOT NULL,
    first_failure TEXT NOT NULL DEFAULT '',
    aborted       TEXT NOT NULL DEFAULT '',
    exchanges     INTEGER NOT NULL DEFAULT 0,
    checks_passed INTEGER NOT NULL DEFAULT 0,
    checks_failed INTEGER NOT NULL DEFAULT 0,
    checks_broken INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE check_results (
    run_id TEXT NOT NULL REFERENCES verdicts (run_id) ON DELETE CASCADE,
    ord    INTEGER NOT NULL,
    phase  TEXT NOT NULL,
    name   TEXT NOT NULL,
    passed INTEGER NOT NULL,
    broken INTEGER NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, ord)
) STRICT;

CREATE TABLE sessions (
    session_id  TEXT PRIMARY KEY,
    bundle_path TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL DEFAULT '',
    workspace   TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    run_count   INTEGER NOT NULL,
    bounds      TEXT NOT NULL
) STRICT;

CREATE INDEX sessions_updated ON sessions (updated_at DESC, session_id DESC);

CREATE TABLE session_runs (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    ord        INTEGER NOT NULL,
    run_id     TEXT NOT NULL,
    PRIMARY KEY (session_id, ord)
) STRICT;

-- problems: what the index could not read, per bundle path; replaced each
-- time that bundle is indexed again.
CREATE TABLE problems (
    id          INTEGER PRIMARY KEY,
    bundle_path TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    file        TEXT NOT NULL,
    field       TEXT NOT NULL DEFAULT '',
    message     TEXT NOT NULL
) STRICT;

CREATE INDEX problems_bundle ON problems (bundle_path);

-- transcripts: full-text index of transcript.md; rowid = runs.id.
CREATE VIRTUAL TABLE transcripts USING fts5 (body, tokenize = 'unicode61');

-- +goose Down
DROP TABLE transcripts;
DROP TABLE problems;
DROP TABLE session_runs;
DROP TABLE sessions;
DROP TABLE check_results;
DROP TABLE verdicts;
DROP TABLE reviews;
DROP TABLE runs;
DROP TABLE bundles;
