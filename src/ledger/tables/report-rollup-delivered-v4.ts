/**
 * Schema v4, one self-contained step (issue 29's cost): what Cline delivered in `report_rollup`
 * (tables/report-rollup-v3.ts), so `report` reads its delivered columns (lines, edit decisions,
 * active time, commits, pull requests) from the rollup as it reads tokens, instead of grouping every
 * edit and activity row of the window (src/ledger/rollups/report-queries.ts). Per rollup key
 * (15-minute bucket, agent, model, provider, project, client; `no_calls` = 0):
 * - the accepted edits' lines added and removed, and the edits by decision (`edits` table);
 * - active time by type (ms), commits and pull requests, and how many such activity rows there are
 *   (`activity` table; a session start is not a report column).
 * Kept current by the commit that inserts the rows (src/ledger/rollups/rollup.ts, same transaction);
 * the step fills it from the rows a v3 ledger already holds. Rows with a negative time stay out (the
 * report reads them from the rows, as the window's edges).
 */
import { ROLLUP_BUCKET_MS } from "./report-rollup-v3.ts";

const KEY = "bucket_ms, agent, model, provider, project, client, no_calls";
const BUCKET = `(ts_ms / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS}`;

export const REPORT_ROLLUP_DELIVERED_V4 = `
  ALTER TABLE report_rollup ADD COLUMN lines_added INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN lines_removed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN edits_accepted INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN edits_rejected INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN edits_failed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN active_user_ms INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN active_agent_ms INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN commits INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN pull_requests INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE report_rollup ADD COLUMN activity INTEGER NOT NULL DEFAULT 0;

  INSERT INTO report_rollup (${KEY}, lines_added, lines_removed, edits_accepted, edits_rejected, edits_failed)
  SELECT ${BUCKET}, agent, model, provider, project, client, 0,
    SUM(CASE decision WHEN 'accepted' THEN lines_added ELSE 0 END),
    SUM(CASE decision WHEN 'accepted' THEN lines_removed ELSE 0 END),
    SUM(decision = 'accepted'), SUM(decision = 'rejected'), SUM(decision = 'failed')
  FROM edits WHERE ts_ms >= 0 GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (${KEY}) DO UPDATE SET lines_added = lines_added + excluded.lines_added,
    lines_removed = lines_removed + excluded.lines_removed, edits_accepted = edits_accepted + excluded.edits_accepted,
    edits_rejected = edits_rejected + excluded.edits_rejected, edits_failed = edits_failed + excluded.edits_failed;

  INSERT INTO report_rollup (${KEY}, active_user_ms, active_agent_ms, commits, pull_requests, activity)
  SELECT ${BUCKET}, agent, model, provider, project, client, 0,
    SUM(CASE WHEN kind = 'active_time' AND detail = 'user' THEN amount ELSE 0 END),
    SUM(CASE WHEN kind = 'active_time' AND detail = 'agent' THEN amount ELSE 0 END),
    SUM(kind = 'commit'), SUM(kind = 'pull_request'), COUNT(*)
  FROM activity WHERE kind IN ('active_time', 'commit', 'pull_request') AND ts_ms >= 0 GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (${KEY}) DO UPDATE SET active_user_ms = active_user_ms + excluded.active_user_ms,
    active_agent_ms = active_agent_ms + excluded.active_agent_ms, commits = commits + excluded.commits,
    pull_requests = pull_requests + excluded.pull_requests, activity = activity + excluded.activity;
`;
