-- +goose Up
-- What a run cost: its prompt tokens read from and written to the
-- provider's cache (priced apart), and the cost in US dollars by the price
-- table the index uses (NULL: the table has no price for the run's model —
-- unknown, not 0). The table's fingerprint is kept, so that the index
-- re-prices every run when the prices change.
ALTER TABLE runs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cost_usd REAL;
UPDATE runs SET cache_read_tokens = coalesce(json_extract(receipt, '$.usage.cache_read_tokens'), 0),
                cache_write_tokens = coalesce(json_extract(receipt, '$.usage.cache_write_tokens'), 0);
CREATE TABLE run_prices (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL
);

-- +goose Down
DROP TABLE run_prices;
ALTER TABLE runs DROP COLUMN cost_usd;
ALTER TABLE runs DROP COLUMN cache_write_tokens;
ALTER TABLE runs DROP COLUMN cache_read_tokens;
