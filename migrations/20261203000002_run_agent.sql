-- +goose Up
-- The agent that did a run's work (native, codex, or an agent command's
-- name), so runs can be filtered and suites compared by agent. Runs indexed
-- before this were all proctor's own agent.
ALTER TABLE runs ADD COLUMN agent TEXT NOT NULL DEFAULT 'native';
CREATE INDEX runs_agent ON runs (agent, started_at DESC, run_id DESC);

-- +goose Down
DROP INDEX runs_agent;
ALTER TABLE runs DROP COLUMN agent;
