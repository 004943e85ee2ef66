-- +goose Up
-- The suite a scenario run belongs to, so the dashboard can show a suite's
-- runs and pass rates over time.
ALTER TABLE runs ADD COLUMN suite TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_suite ON runs (suite, started_at DESC, run_id DESC);

-- +goose Down
DROP INDEX runs_suite;
ALTER TABLE runs DROP COLUMN suite;
