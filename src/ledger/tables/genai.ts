/** `<prefix>0 .. <prefix><n-1>`: one bucket count column each (bucket K's count). */
function buckets(prefix: string, n: number): string {
  return Array.from({ length: n }, (_, k) => `${prefix}${k} INTEGER NOT NULL DEFAULT 0`).join(", ");
}

/**
 * The GenAI semantic-convention histograms (gen_ai.client.token.usage,
 * gen_ai.client.operation.duration) and cline.tool.duration, running totals kept in the same
 * transaction as the rows they sum (src/ledger/genai/genai.ts: bucket bounds and columns). A request row
 * (tool_name and outcome '') holds a session's, model's and provider's three histograms: input
 * tokens (count..b14), output tokens (out_*, o0..o14), operation duration (dur_*, d0..d14); a tool
 * row holds one tool's duration by outcome (count..b17). A NULL count: that histogram is absent.
 */
export const GENAI_TABLES = `
  CREATE TABLE genai_rows (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('', 'success', 'failure', 'unknown')),
    count INTEGER, sum REAL, min REAL, max REAL, first_ms INTEGER, updated_ms INTEGER, last_event_ms INTEGER,
    ${buckets("b", 18)},
    out_count INTEGER, out_sum REAL, out_min REAL, out_max REAL, out_first_ms INTEGER, out_updated_ms INTEGER,
    out_last_event_ms INTEGER,
    ${buckets("o", 15)},
    dur_count INTEGER, dur_sum REAL, dur_min REAL, dur_max REAL, dur_first_ms INTEGER, dur_updated_ms INTEGER,
    dur_last_event_ms INTEGER,
    ${buckets("d", 15)},
    UNIQUE (session_id, model, provider, tool_name, outcome)
  ) STRICT;
`;
