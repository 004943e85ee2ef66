package store

import (
	"context"
	"fmt"
	"strings"
)

// snapshotQueries select every indexed row in a stable order, leaving out
// surrogate ids and index times, which differ between two builds of the same
// index.
var snapshotQueries = []struct{ table, query string }{
	{"bundles", `SELECT path, kind, fingerprint, ok FROM bundles ORDER BY path`},
	{"runs", `SELECT run_id, bundle_path, session_id, kind, status, stage, task, model_profile, model_name, source_kind, source_location, source_commit, scenario_id, scenario_repeat, failure_domain, failure_code, failure_message, started_at, ended_at, prompt_tokens, completion_tokens, total_tokens, model_calls, changed_count, diff_bytes, verify_verdict, review_state, receipt, suite, agent, scenario_tags, cache_read_tokens, cache_write_tokens, cost_usd FROM runs ORDER BY run_id`},
	{"reviews", `SELECT * FROM reviews ORDER BY run_id`},
	{"verdicts", `SELECT * FROM verdicts ORDER BY run_id`},
	{"check_results", `SELECT * FROM check_results ORDER BY run_id, ord`},
	{"sessions", `SELECT * FROM sessions ORDER BY session_id`},
	{"session_runs", `SELECT * FROM session_runs ORDER BY session_id, ord`},
	{"problems", `SELECT bundle_path, run_id, file, field, message FROM problems ORDER BY bundle_path, file, field, message`},
	{"transcripts", `SELECT r.run_id, t.body FROM transcripts t JOIN runs r ON r.id = t.rowid ORDER BY r.run_id`},
}

// Snapshot returns every indexed row as text, table by table. Two indexes
// built from the same bundles, however they got there, have equal snapshots;
// tests use it to prove that a rebuild matches the live index.
func (s *Store) Snapshot(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for _, sq := range snapshotQueries {
		rows, err := s.db.QueryContext(ctx, sq.query)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", sq.table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("snapshot %s: %w", sq.table, err)
		}
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, fmt.Errorf("snapshot %s: %w", sq.table, err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = fmt.Sprintf("%v", v)
			}
			out[sq.table] = append(out[sq.table], strings.Join(parts, " | "))
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", sq.table, err)
		}
	}
	return out, nil
}
