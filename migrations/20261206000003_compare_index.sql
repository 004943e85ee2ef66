-- +goose Up
-- An index holding every column a comparison of two suites reads of their
-- runs, so that it reads no run's row: cost_usd and the other columns
-- added after receipt sit behind its overflow pages.
CREATE INDEX runs_compare ON runs (suite, scenario_id, agent, model_name, run_id, total_tokens, cost_usd, started_at, ended_at);

-- +goose Down
DROP INDEX runs_compare;
