-- +goose Up
-- An API token's scope: '' acts with its user's role; 'push' may only
-- push bundles to /api/v1/push (a CI job's token), whatever the role.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT '' CHECK (scope IN ('', 'push'));

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN scope;
