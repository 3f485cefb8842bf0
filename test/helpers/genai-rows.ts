/**
 * Rewrites a current ledger's GenAI histograms (genai_rows: a request's three series as one row,
 * src/ledger/genai.ts) into the one-row-per-series table of schema v11 and v12
 * (genai_histograms), as those builds wrote it, so a test can run the migration on it. Ids keep
 * the current order: a request row's input, output and duration become ids 3k, 3k+1 and 3k+2,
 * a tool row 3k (any increasing ids are what a v12 ledger holds; their values are not exported).
 */
import type Database from "better-sqlite3";

const B18 = Array.from({ length: 18 }, (_, i) => `b${i}`);
const T = "count, sum, min, max, first_ms, updated_ms, last_event_ms";

/** One histogram of genai_rows as genai_histograms rows: `prefix` its totals, `bucket` its counts. */
function series(
  metric: string,
  tokenType: string,
  k: number,
  prefix: string,
  bucket: string,
  n: number,
): string {
  const totals = T.split(", ").map((c) => `${prefix}${c}`);
  const buckets = B18.map((_, i) => (i < n ? `${bucket}${i}` : "0"));
  return `SELECT id * 3 + ${k}, '${metric}', session_id, model, provider, '${tokenType}', '', '',
      ${[...totals, ...buckets].join(", ")}
    FROM genai_rows WHERE outcome = '' AND ${prefix}count IS NOT NULL`;
}

export function toHistograms(db: Database.Database): void {
  db.exec(`
    CREATE TABLE genai_histograms (
      id            INTEGER PRIMARY KEY,
      metric        TEXT NOT NULL CHECK (metric IN ('token_usage', 'operation_duration', 'tool_duration')),
      session_id    TEXT NOT NULL,
      model         TEXT NOT NULL,
      provider      TEXT NOT NULL,
      token_type    TEXT NOT NULL,
      tool_name     TEXT NOT NULL,
      outcome       TEXT NOT NULL,
      count         INTEGER NOT NULL,
      sum           REAL NOT NULL,
      min           REAL NOT NULL,
      max           REAL NOT NULL,
      first_ms      INTEGER NOT NULL,
      updated_ms    INTEGER NOT NULL,
      last_event_ms INTEGER NOT NULL,
      ${B18.map((b) => `${b} INTEGER NOT NULL DEFAULT 0`).join(", ")},
      UNIQUE (metric, session_id, model, provider, token_type, tool_name, outcome)
    ) STRICT;
    INSERT INTO genai_histograms
      SELECT id * 3, 'tool_duration', session_id, model, provider, '', tool_name, outcome, ${T}, ${B18.join(", ")}
      FROM genai_rows WHERE outcome != '';
    INSERT INTO genai_histograms ${series("token_usage", "input", 0, "", "b", 15)};
    INSERT INTO genai_histograms ${series("token_usage", "output", 1, "out_", "o", 15)};
    INSERT INTO genai_histograms ${series("operation_duration", "", 2, "dur_", "d", 15)};
    DROP TABLE genai_rows;`);
}
