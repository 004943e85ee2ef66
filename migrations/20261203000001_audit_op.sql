-- An audit entry written for a journaled operation (a review) carries the
-- operation's id, so that recording it again after a crash adds nothing.

-- +goose Up
ALTER TABLE audit ADD COLUMN op TEXT;
CREATE UNIQUE INDEX audit_op ON audit (op) WHERE op IS NOT NULL;

-- +goose Down
DROP INDEX audit_op;
ALTER TABLE audit DROP COLUMN op;
