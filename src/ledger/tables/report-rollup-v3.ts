/**
 * Schema v3, one self-contained step: `report_rollup`, the totals `report` reads instead of
 * grouping every event and tool-call row (src/ledger/rollups/report-queries.ts). One row per 15-minute UTC
 * bucket of the message time and (agent, model, provider, project, client, no_calls): the events'
 * four token sums and count, and the tool calls' count. Kept current by the commit that inserts
 * the rows it sums (src/ledger/usage/ingest.ts, `RollupSums`), in the same transaction; the step fills
 * it from the rows a v2 ledger already holds.
 *
 * Why 15 minutes: the report groups by 15-minute UTC buckets and folds them into days, weeks and
 * months of a zone (src/report/buckets.ts: every zone offset in use is a whole quarter hour), so
 * the rollup serves those groupings and any window as whole buckets plus the events of its two
 * partial edges. Sessions and tools are not in the key: a report by session or by tool still groups
 * the rows (a per-tool row also needs its distinct paying messages, which do not add up across
 * buckets). Rows with a negative time (none from Cline) are left to the edges.
 * `no_calls` = 1 for events of a message that made no tool call (the `(none)` row of a per-tool
 * view); tool calls count in rows with `no_calls` = 0.
 */
export const ROLLUP_BUCKET_MS = 15 * 60_000;

export const REPORT_ROLLUP_V3 = `
  CREATE TABLE report_rollup (
    bucket_ms   INTEGER NOT NULL,
    agent       TEXT NOT NULL,
    model       TEXT NOT NULL,
    provider    TEXT NOT NULL,
    project     TEXT NOT NULL,
    client      TEXT NOT NULL,
    no_calls    INTEGER NOT NULL CHECK (no_calls IN (0, 1)),
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    events      INTEGER NOT NULL DEFAULT 0,
    tool_calls  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket_ms, agent, model, provider, project, client, no_calls)
  ) STRICT, WITHOUT ROWID;

  INSERT INTO report_rollup (bucket_ms, agent, model, provider, project, client, no_calls, input, output,
    cache_read, cache_write, events)
  SELECT (ts_ms / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS}, agent, model, provider, project, client,
    tool_calls = 0, SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), COUNT(*)
  FROM events WHERE ts_ms >= 0 GROUP BY 1, 2, 3, 4, 5, 6, 7;

  INSERT INTO report_rollup (bucket_ms, agent, model, provider, project, client, no_calls, tool_calls)
  SELECT (ts_ms / ${ROLLUP_BUCKET_MS}) * ${ROLLUP_BUCKET_MS}, agent, model, provider, project, client, 0,
    COUNT(*)
  FROM tool_calls WHERE ts_ms >= 0 GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (bucket_ms, agent, model, provider, project, client, no_calls)
  DO UPDATE SET tool_calls = tool_calls + excluded.tool_calls;
`;
