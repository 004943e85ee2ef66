-- +goose Up
-- A scenario run's tags as a column (a JSON array, '' for none), so a
-- suite's matrix is aggregated by SQL without reading every receipt, and an
-- index that groups a suite's runs by scenario, agent, model and repeat and
-- holds every column the matrix reads: the columns added after receipt sit
-- behind its overflow pages in a row.
ALTER TABLE runs ADD COLUMN scenario_tags TEXT NOT NULL DEFAULT '';
UPDATE runs SET scenario_tags = coalesce(json_extract(receipt, '$.scenario.tags'), '') WHERE scenario_id != '';
CREATE INDEX runs_suite_rows ON runs (suite, scenario_id, agent, model_name, scenario_repeat, started_at, run_id, status, scenario_tags);

-- +goose Down
DROP INDEX runs_suite_rows;
ALTER TABLE runs DROP COLUMN scenario_tags;
