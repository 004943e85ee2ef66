-- +goose Up
-- The index of a suite's rows also holds what each run cost and spent
-- (tokens, cost, when it ended), so that a suite's matrix with its costs
-- and a comparison of two suites read no run's row: cost_usd and the other
-- columns added after receipt sit behind its overflow pages.
DROP INDEX runs_suite_rows;
CREATE INDEX runs_suite_rows ON runs (suite, scenario_id, agent, model_name, scenario_repeat, started_at, run_id, status, scenario_tags,
    total_tokens, cost_usd, ended_at);

-- +goose Down
DROP INDEX runs_suite_rows;
CREATE INDEX runs_suite_rows ON runs (suite, scenario_id, agent, model_name, scenario_repeat, started_at, run_id, status, scenario_tags);
