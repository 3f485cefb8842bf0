import { CLIENT_SERIES_V2 } from "./client-v2.ts";
import { SIGNAL_TABLES } from "./signals.ts";
import { USAGE_TABLES } from "./usage.ts";

/**
 * Schema v3 step, outcome `rejected` (issue 28 item 5): a tool call the user denied is neither a
 * success nor a failure of the tool (src/adapter/timing.ts ToolOutcome). Every column that holds a
 * call's outcome allowed only success / failure / unknown through a CHECK: tool_calls.outcome,
 * tool_outcome_series.outcome, signal_queue.outcome and genai_rows.outcome (cline.tool.duration by
 * outcome). Self-contained: it needs nothing of any other v3 step.
 *
 * SQLite cannot change a CHECK in place, so each table is rebuilt as tables/client-v2.ts does: the
 * table renamed away, the new one created from its v2 DDL with `'rejected'` added to the CHECK,
 * every row copied with its id (keyset pages, watermarks and seqs refer to ids), the old one
 * dropped, then its indexes (they followed the rename and went with the drop) made again from the
 * same DDL. None of these tables is the target of a foreign key. migrate.ts runs it in the one
 * transaction of the upgrade.
 */

/** `CREATE TABLE <name> (...)` as `ddl` has it (the baseline, or v2's rebuilt one). */
function tableIn(ddl: string, name: string): string {
  const m = new RegExp(`CREATE TABLE ${name} \\([\\s\\S]*?\\n  \\) STRICT[^;]*;`).exec(ddl);
  if (m === null) throw new Error(`no CREATE TABLE ${name}`);
  return m[0];
}

/** Every `CREATE INDEX ... ON <name> (...)` of `ddl`. */
function indexesOf(ddl: string, name: string): string[] {
  return [...ddl.matchAll(new RegExp(`CREATE INDEX \\w+ ON ${name} \\([^;]*;`, "g"))].map((m) => m[0]);
}

/** The table with `'rejected'` added to its outcome CHECK (after 'failure', as ToolOutcome lists it). */
function allowRejected(table: string): string {
  const out = table.replace(
    /CHECK \(outcome IN \(((?:'', )?)'success', 'failure', 'unknown'\)\)/,
    (_m, empty: string) => `CHECK (outcome IN (${empty}'success', 'failure', 'rejected', 'unknown'))`,
  );
  if (out === table) throw new Error("no outcome CHECK to widen");
  return out;
}

function rebuild(ddl: string, name: string): string {
  return `
  ALTER TABLE ${name} RENAME TO ${name}_v2;
  ${allowRejected(tableIn(ddl, name))}
  INSERT INTO ${name} SELECT * FROM ${name}_v2;
  DROP TABLE ${name}_v2;
  ${indexesOf(ddl, name).join("\n  ")}`;
}

export const REJECTED_OUTCOME_V3 = [
  rebuild(USAGE_TABLES, "tool_calls"),
  // v2 rebuilt these two with `client` (and genai_rows `project`): their v2 DDL is in that step.
  rebuild(CLIENT_SERIES_V2, "tool_outcome_series"),
  rebuild(CLIENT_SERIES_V2, "genai_rows"),
  rebuild(SIGNAL_TABLES, "signal_queue"),
].join("\n");

/** For the tests: the tables this step rebuilds. */
export const REJECTED_OUTCOME_TABLES = [
  "tool_calls",
  "tool_outcome_series",
  "genai_rows",
  "signal_queue",
] as const;
