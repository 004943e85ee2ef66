-- +goose Up
-- Accounts for sharing one proctor host on a LAN. Unlike the rest of the
-- database these rows are not rebuilt from run bundles: they are the only
-- record of who may sign in, and a rebuild (ForgetAll) leaves them alone.
CREATE TABLE users (
	name          TEXT PRIMARY KEY,
	role          TEXT NOT NULL CHECK (role IN ('viewer', 'reviewer', 'admin')),
	password_hash TEXT NOT NULL,
	disabled      INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);

-- Web sessions: the cookie holds a random id; only its SHA-256 is stored.
CREATE TABLE web_sessions (
	id_hash    TEXT PRIMARY KEY,
	user_name  TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	address    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_user ON web_sessions (user_name);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- API tokens, shown once at creation; only their SHA-256 is stored.
CREATE TABLE api_tokens (
	id           INTEGER PRIMARY KEY,
	user_name    TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
	name         TEXT NOT NULL,
	token_hash   TEXT NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL DEFAULT 0,
	UNIQUE (user_name, name)
);

-- Who did what: sign-ins, launches, approvals, rejections, user changes.
CREATE TABLE audit (
	id      INTEGER PRIMARY KEY,
	at      INTEGER NOT NULL,
	actor   TEXT NOT NULL,
	action  TEXT NOT NULL,
	object  TEXT NOT NULL DEFAULT '',
	detail  TEXT NOT NULL DEFAULT '',
	address TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_at ON audit (id DESC);

-- +goose Down
DROP TABLE audit;
DROP TABLE api_tokens;
DROP TABLE web_sessions;
DROP TABLE users;
