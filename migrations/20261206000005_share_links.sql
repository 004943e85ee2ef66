-- +goose Up
-- Read-only links to one run or one suite, opened without an account: the link's secret
-- is stored only as its SHA-256; a link ends at its expiry or when revoked.
CREATE TABLE share_links (
    id             INTEGER PRIMARY KEY,
    token_hash     TEXT NOT NULL UNIQUE,
    kind           TEXT NOT NULL CHECK (kind IN ('run', 'suite')),
    object         TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    revoked_at     INTEGER NOT NULL DEFAULT 0,
    revoked_by     TEXT NOT NULL DEFAULT '',
    opened         INTEGER NOT NULL DEFAULT 0,
    last_opened_at INTEGER NOT NULL DEFAULT 0
) STRICT;

-- +goose Down
DROP TABLE share_links;
